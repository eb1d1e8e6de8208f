"""Names that may hold an integer or boolean array: a write into one carries no gradient.

`maybe_integer_arrays(body)`: the names a statement of `body` (normalized code, nested
blocks included) binds to a NumPy call given a dtype that is not a float or complex one
(`np.zeros(n, dtype=int)`, `np.empty(n, bool)`), `np.arange`, `np.argsort` and the other
index makers, `np.full` of an integer constant, `np.array` of integer constants, or
`x.astype(t)` (`as_type`) to a t that is not a float; and a copy or `zeros_like` (without a
dtype) of one of those or of an array whose elements index another (`x[idx[i]]`). The
reverse pass passes the cotangent of a write into such a name through
`stored(g, a)` (runtime/adjoints.py), which is zero where a's dtype, at run time, is
an integer or bool: NumPy rounds the written values, a step whose derivative is zero.
A name listed that holds floats costs only the call; a name missed (an integer array
passed in, or made another way) keeps the cotangent of the unrounded values.
"""
from __future__ import annotations

import gast
import numpy as np

from ..frontend.dtype_names import DTYPE_POSITION
from ..syntax import dotted_name, walk

_FLOATS = {"float", "complex", "np.float64", "np.float32", "np.float16", "np.double",
           "np.single", "np.complex128", "np.complex64", "np.cdouble", "np.longdouble"}


def maybe_integer_arrays(body) -> set[str]:
    names = set()
    binds = [node for stmt in body for node in walk(stmt)
             if isinstance(node, gast.Assign) and len(node.targets) == 1
             and isinstance(node.targets[0], gast.Name)]
    for node in binds:
        if isinstance(node.value, gast.Call) and _integer(node.value):
            names.add(node.targets[0].id)
    indexing = _indexing(body, binds)
    for node in binds:  # a copy or `zeros_like` of an array of indices holds integers
        if _like(node.value) in names | indexing:
            names.add(node.targets[0].id)
    return names


_LIKE = ("np.zeros_like", "np.empty_like", "np.ones_like", "np.full_like", "np.copy")


def _like(value):
    """The name `value` copies or takes its dtype from without a dtype of its own
    (`np.zeros_like(idx)`, `np.copy(idx)`, `idx.copy()`), or None."""
    if not isinstance(value, gast.Call) or any(k.arg == "dtype" for k in value.keywords):
        return None
    func, spelled = value.func, dotted_name(value.func)
    if spelled in _LIKE and value.args and isinstance(value.args[0], gast.Name) \
            and not (spelled == "np.full_like" and len(value.args) > 2):
        return value.args[0].id
    if isinstance(func, gast.Attribute) and func.attr == "copy" and not value.args \
            and isinstance(func.value, gast.Name):
        return func.value.id
    return None


def _indexing(body, binds) -> set[str]:
    """Arrays whose elements index another array: `x[idx[i]]`, normalized to
    `_t2 = idx[i]; x[_t2]` (NumPy indexes with integers and booleans only)."""
    used = {n.slice.id for stmt in body for n in walk(stmt)
            if isinstance(n, gast.Subscript) and isinstance(n.slice, gast.Name)}
    return {node.value.value.id for node in binds if node.targets[0].id in used
            and isinstance(node.value, gast.Subscript)
            and isinstance(node.value.value, gast.Name)}


def _integer(call) -> bool:
    func = dotted_name(call.func) or ""
    if func in ("np.arange", "np.argsort", "np.argmax", "np.argmin", "np.searchsorted",
                "np.flatnonzero", "np.argwhere", "np.digitize"):
        return True
    if func == "as_type":
        return len(call.args) > 1 and not _float_dtype(call.args[1])
    dtype = next((k.value for k in call.keywords if k.arg == "dtype"), None)
    position = DTYPE_POSITION.get(func)
    if dtype is None and position is not None and len(call.args) > position:
        dtype = call.args[position]
    if dtype is not None:
        return not _float_dtype(dtype)
    if func == "np.full" and len(call.args) > 1:
        return _int_constant(call.args[1])
    if func in ("np.array", "np.asarray") and call.args:
        return all(_int_constant(n) for n in walk(call.args[0])
                   if isinstance(n, gast.Constant))
    return False


def _float_dtype(node) -> bool:
    if isinstance(node, gast.Constant):
        try:
            return np.dtype(node.value).kind in "fc"
        except TypeError:
            return False
    return dotted_name(node) in _FLOATS


def _int_constant(node) -> bool:
    return isinstance(node, gast.Constant) and isinstance(node.value, (bool, int))
