"""Pass 10, fuse: elementwise chains of the generated function back into one expression.

Normalization gives every operation a statement of its own (`_t34 = 2.0 * k2`,
`_t35 = k1 + _t34`, ...), and the backward sweep has one statement per
contribution. Numba compiles an elementwise expression written in one
statement into one loop with one new array, but a chain of statements into
one loop and one array each. This pass, run on the finished function (both
sweeps), moves a single-use temporary's value into its one reader:

    _t34 = 2.0 * k2                       _t37 = k1 + 2.0 * k2 + 2.0 * k3
    _t35 = k1 + _t34            becomes
    _t36 = 2.0 * k3
    _t37 = _t35 + _t36

Rule (sound by construction of each step): a generated name `t` (`_tK` or
`_adj_...`) mentioned exactly twice in the whole function, bound once by
`t = e` and read once by a later simple statement S of the same block, is
replaced in S by `e` when
- `e` is pure and elementwise: arithmetic (not `@`), a NumPy ufunc, a name,
  or `unbroadcast(...)`;
- every statement between the two binds a plain name that `e` does not read,
  and none writes into an array, appends, calls a helper for its effect,
  holds a block, or is a comment (so the moved value is computed from the
  same operands, and stays under its line's `# grad of:` comment).
Moving `e` later evaluates the same operations on the same values, in the
same order: the results are identical to the last bit.

One more step makes backward chains fuse: reading `_adj_t = unbroadcast(g,
t)` inside `unbroadcast(... _adj_t ..., x)`, where the path from the outer
call's first argument down to `_adj_t` passes only through `*`, `/` (as the
dividend) and unary signs, `g` itself is substituted. Such an outer call is
the contribution of `t`'s own defining operation `t = x op c` to `x` (a
cotangent is read only by the contributions of the statement that defines its
primal), so every other factor on the path is an operand of that operation
and is constant along the axes the inner call would sum over (they are axes
`t` is stretched along, and an operand's shape broadcasts to `t`'s). Summing
over those axes commutes with multiplying by such factors, and the outer call
then sums over them as well: the value is the same, up to the order of
floating-point additions. A cotangent `_adj_t = unbroadcast(g, t)` of a name
`g`, bound once and read several times, each read inside an `unbroadcast` in
this way (the contributions of `t = a + b` to a and to b), gives every read
`g` by the same argument, when only plain bindings of names other than `g`
lie between: nothing is computed twice.
"""
from __future__ import annotations

import copy
import re
from collections import Counter

import gast

from ..runtime import __all__ as RUNTIME_NAMES
from ..syntax import is_comment, walk
from .optimize import blocks, mentions
from .signs import subtracted_negations

_TEMP = re.compile(r"^(_t\d+|_adj_\w+)$")
_UFUNCS = {"exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sinh", "cosh",
           "arcsin", "arccos", "arctan", "sqrt", "square", "abs", "absolute", "negative",
           "sign", "maximum", "minimum", "power"}
_LINEAR = (gast.Mult, gast.Div)


def _pure(value) -> bool:
    """An elementwise value that can be evaluated later with the same result."""
    for node in walk(value):
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult):
            return False
        if isinstance(node, gast.Call):
            func = node.func
            ufunc = (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
                     and func.value.id == "np" and func.attr in _UFUNCS)
            if not (ufunc or isinstance(func, gast.Name) and func.id == "unbroadcast"):
                return False
        elif not isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Name, gast.Constant,
                                   gast.Attribute, gast.operator, gast.unaryop,
                                   gast.expr_context)):
            return False
    return True


def _definition(stmt, counts: Counter):
    """`t` if `stmt` is `t = e` of a single-use generated name and a pure `e`."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    t = stmt.targets[0].id
    if _TEMP.match(t) and counts[t] == 2 and _pure(stmt.value):
        return t
    return None


def _passable(stmt, operands: set[str]) -> bool:
    """A statement between a definition and its reader that cannot change the value: a
    plain binding of another name, calling only NumPy, math, the runtime's helpers and
    tapes' `pop` (a generated `f__grad_all` or `try` helper might write into an array)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)) or is_comment(stmt):
        return False
    for node in walk(stmt.value):
        if isinstance(node, gast.Call) and not _known_call(node.func):
            return False
    return stmt.targets[0].id not in operands


def _known_call(func) -> bool:
    if isinstance(func, gast.Name):
        return func.id in RUNTIME_NAMES
    if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)):
        return False
    return func.value.id in ("np", "math") or (
        func.value.id.startswith("_tape_") and func.attr == "pop")


def _reader(block: list, at: int, t: str, operands: set[str]):
    """Index of the statement after `block[at]` that reads `t`, if the value can move there."""
    for j in range(at + 1, len(block)):
        stmt = block[j]
        if mentions(stmt, t):
            simple = isinstance(stmt, (gast.Assign, gast.AugAssign))
            return j if simple and mentions(stmt.value, t) else None
        if not _passable(stmt, operands):
            return None
    return None


def _parents(root) -> dict:
    return {id(child): node for node in walk(root) for child in gast.iter_child_nodes(node)}


def _cotangent_of(value, t: str) -> bool:
    """Whether `value` is `unbroadcast(g, p)` and `t` is `_adj_p`: p's cotangent."""
    return (isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
            and value.func.id == "unbroadcast" and len(value.args) == 2
            and isinstance(value.args[1], gast.Name) and t == f"_adj_{value.args[1].id}")


def _linear_inside_unbroadcast(node, parents: dict) -> bool:
    """Whether `node` lies in an `unbroadcast(...)`'s first argument behind `*`, `/` (as the
    dividend) and signs only."""
    while True:
        parent = parents.get(id(node))
        if isinstance(parent, gast.Call) and isinstance(parent.func, gast.Name) \
                and parent.func.id == "unbroadcast" and parent.args and parent.args[0] is node:
            return True
        linear = (isinstance(parent, gast.BinOp) and isinstance(parent.op, _LINEAR)
                  and (isinstance(parent.op, gast.Mult) or parent.left is node)) or (
            isinstance(parent, gast.UnaryOp) and isinstance(parent.op, (gast.USub, gast.UAdd)))
        if not linear:
            return False
        node = parent


def _occurrences(node, t: str) -> list:
    return [n for n in walk(node) if isinstance(n, gast.Name) and n.id == t]


def _inner_gradient(value, use, t: str):
    """`g` if `value` is `unbroadcast(g, p)`, `t` is `_adj_p`, and the reader `use` reaches `t`
    inside an `unbroadcast(...)` through `*`, `/` and signs only (module doc)."""
    if _cotangent_of(value, t) and _linear_inside_unbroadcast(_occurrences(use, t)[0],
                                                              _parents(use)):
        return value.args[0]
    return None


def _rebinds(stmt, var: str) -> bool:
    target = stmt.targets[0] if isinstance(stmt, gast.Assign) else getattr(stmt, "target", None)
    return isinstance(target, gast.Name) and target.id == var


def _spread(block: list, at: int, t: str, count: int) -> bool:
    """A cotangent `t = unbroadcast(g, p)` of a name g, read several times, each inside an
    `unbroadcast` as `_inner_gradient` allows: every read takes `g` (module doc). Done if
    all reads follow in the block with only plain bindings of names other than g between."""
    value = block[at].value
    if not (_cotangent_of(value, t) and isinstance(value.args[0], gast.Name)):
        return False
    g, uses, left = value.args[0].id, [], count - 1
    for stmt in block[at + 1:]:
        if not left:
            break
        if not mentions(stmt, t):
            if not _passable(stmt, {g}):
                return False
            continue
        found = _occurrences(stmt.value, t) if isinstance(stmt, (gast.Assign, gast.AugAssign)) \
            else []
        parents = _parents(stmt.value) if found else {}
        if len(found) != len(_occurrences(stmt, t)) or not all(
                _linear_inside_unbroadcast(n, parents) for n in found):
            return False
        uses.append(stmt)
        left -= len(found)
        if _rebinds(stmt, g):
            break
    if left:
        return False
    for stmt in uses:
        stmt.value = _Substitute(t, value.args[0]).visit(stmt.value)
    del block[at]
    return True


class _Substitute(gast.NodeTransformer):
    def __init__(self, t: str, value):
        self.t, self.value = t, value

    def visit_Name(self, node):
        return copy.deepcopy(self.value) if node.id == self.t else node


def _fuse_block(block: list, counts: Counter, stores: Counter) -> bool:
    changed, at = False, 0
    while at < len(block):
        t = _definition(block[at], counts)
        if t is not None:
            value = block[at].value
            operands = {n.id for n in walk(value) if isinstance(n, gast.Name)}
            j = _reader(block, at, t, operands)
            if j is not None:
                use = block[j]
                inner = _inner_gradient(value, use.value, t)
                use.value = _Substitute(t, inner if inner is not None else value).visit(use.value)
                del block[at]
                changed = True
                continue
        elif _single_binding(block[at], stores) and _spread(
                block, at, block[at].targets[0].id, counts[block[at].targets[0].id]):
            changed = True
            continue
        at += 1
    return changed


def _single_binding(stmt, stores: Counter) -> bool:
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and _TEMP.match(stmt.targets[0].id)
            and stores[stmt.targets[0].id] == 1)


def fuse(function: gast.FunctionDef) -> gast.FunctionDef:
    """Fuse single-use elementwise temporaries into their readers, to a fixed point (a
    dropped inner `unbroadcast` leaves the temporary it named with one reader fewer)."""
    while True:
        names = [n for n in walk(function) if isinstance(n, gast.Name)]
        counts = Counter(n.id for n in names)
        stores = Counter(n.id for n in names if isinstance(n.ctx, gast.Store))
        if not any([_fuse_block(block, counts, stores) for block in list(blocks(function.body))]):
            subtracted_negations(function)  # signs.py: `+= unbroadcast(-E, t)` -> `-=`
            return function
