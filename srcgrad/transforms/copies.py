"""`v = zeros_plus(x, e)` of two float64 arrays of one rank, in a compiled form, as a shape
check and a copy: `same_shape(e, x.shape); v = e.copy()`.

`zeros_plus` (runtime/adjoints.py) copies e when it has x's shape and broadcasts
`zeros + e` otherwise; numba compiles it as a call with two ways to make its result, and
LLVM then cannot tell the result from the arrays a later loop also writes, so such a
loop reloads every element it touches: a stencil's backward sweep, `_adj_new =
zeros_plus(new, _adj_u); _adj_u = zeros_plus(u, _adj_new_old)` then a loop adding into
both, ran 1.7x slower than with plain copies (bench/README).

Soundness rule: the kinds (analysis/kinds.py, flow-insensitive over every binding) say
x and e are float64 arrays of the same rank; where their shapes are equal at run time,
`e.copy()` is the array zeros_plus returns (`e.astype(np.float64)`, a copy of float64
values: the same bits, -0.0 included), and where they differ `same_shape` raises
ShapeGuard and the caller runs the generated function instead (backend/fused.py). Only
`fresh` omitted or the constant False: with `fresh`, zeros_plus may hand back e itself.
"""
from __future__ import annotations

import gast

from ..analysis import kinds as K
from ..syntax import assign, call, is_call, method, name, rewrite_blocks


def own_copies(func: gast.FunctionDef, kinds: dict) -> int:
    """Rewrite `func` in place; the number of statements rewritten."""
    count = [0]

    def rewritten(stmt) -> list:
        pair = _copied(stmt, kinds)
        if pair is None:
            return [stmt]
        x, e = pair
        count[0] += 1
        check = gast.Expr(value=call("same_shape", name(e), gast.Attribute(
            value=name(x), attr="shape", ctx=gast.Load())))
        copy = assign(stmt.targets[0].id, method(e, "copy"))
        return [gast.copy_location(check, stmt), gast.copy_location(copy, stmt)]
    rewrite_blocks(func.body, rewritten)
    return count[0]


def _copied(stmt, kinds):
    """(x, e) of `v = zeros_plus(x, e)` as the module doc says, else None."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call)):
        return None
    value = stmt.value
    if not (is_call(value, "zeros_plus") and not value.keywords and len(value.args) in (2, 3)):
        return None
    args = value.args
    if len(args) == 3 and not (isinstance(args[2], gast.Constant) and args[2].value is False):
        return None
    if not all(isinstance(a, gast.Name) for a in args[:2]):
        return None
    x, e = (kinds.get(a.id, K.TOP) for a in args[:2])
    if not (K.is_array(x) and K.is_array(e) and x[1] == e[1] and x[2] == e[2] == "f"):
        return None
    return args[0].id, args[1].id
