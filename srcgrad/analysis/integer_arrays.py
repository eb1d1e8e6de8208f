"""Names that may hold an integer or boolean array: a write into one carries no gradient.

`maybe_integer_arrays(body)`: the names a statement of `body` (normalized code, nested
blocks included) binds to a NumPy call given a dtype that is not a float or complex one
(`np.zeros(n, dtype=int)`, `np.empty(n, bool)`), `np.arange`, `np.full` of an integer
constant, `np.array` of integer constants, or `x.astype(t)` (`as_type`) to a t that is
not a float. The reverse pass passes the cotangent of a write into such a name through
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
    for stmt in body:
        for node in walk(stmt):
            if (isinstance(node, gast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], gast.Name)
                    and isinstance(node.value, gast.Call) and _integer(node.value)):
                names.add(node.targets[0].id)
    return names


def _integer(call) -> bool:
    func = dotted_name(call.func) or ""
    if func == "np.arange":
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
