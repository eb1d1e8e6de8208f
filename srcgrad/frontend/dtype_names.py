"""`dtype=int` and `dtype=bool` in NumPy calls, spelled as NumPy's own types (desugar's step).

numba compiles `np.zeros(n, dtype=np.int64)` but not `np.zeros(n, dtype=int)` or
`dtype=bool`, and the whole gradient then ran as Python (with a warning). NumPy reads
the builtin `int` as `np.dtype(int)` (the platform's default integer) and `bool` as
`np.bool_`; this pass writes the NumPy type NumPy itself picks, so every array is the
same. Only the builtins themselves (as resolve left them), and only where a NumPy
allocation reads a dtype: its `dtype=` keyword or its dtype position (`DTYPE_POSITION`).
"""
from __future__ import annotations

import builtins

import gast
import numpy as np

from ..syntax import dotted, dotted_name, walk

# Where NumPy's allocating functions take their dtype positionally.
DTYPE_POSITION = {"np.zeros": 1, "np.ones": 1, "np.empty": 1, "np.full": 2,
                  "np.zeros_like": 1, "np.ones_like": 1, "np.empty_like": 1,
                  "np.full_like": 2, "np.array": 1, "np.asarray": 1, "np.arange": None}
_NUMPY_NAME = {int: np.dtype(int).type.__name__, bool: "bool_"}


def spell_dtypes(resolved) -> None:
    """Rewrite `resolved.tree` in place (see the module doc)."""
    for call in (n for n in walk(resolved.tree) if isinstance(n, gast.Call)):
        func = dotted_name(call.func)
        if func not in DTYPE_POSITION:
            continue
        for keyword in call.keywords:
            if keyword.arg == "dtype":
                keyword.value = _spelled(resolved, keyword.value)
        position = DTYPE_POSITION[func]
        if position is not None and len(call.args) > position:
            call.args[position] = _spelled(resolved, call.args[position])


def _spelled(resolved, node):
    if not isinstance(node, gast.Name) or getattr(builtins, node.id, None) not in _NUMPY_NAME:
        return node
    if resolved.callees.get(node.id, getattr(builtins, node.id)) is not getattr(builtins, node.id):
        return node  # the user's own `int`
    attr = _NUMPY_NAME[getattr(builtins, node.id)]
    resolved.callees.setdefault(f"np.{attr}", getattr(np, attr))
    return gast.copy_location(dotted(f"np.{attr}"), node)
