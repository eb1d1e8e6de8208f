"""Compiled form only: srcgrad's helpers called on numbers, as what they compute.

Generated code calls its helpers whatever the kinds of their arguments (one module
serves every call); numba resolves each call per type, and for numbers most are the
identity or a constant. Where analysis/kinds.py shows the arguments are numbers,
`simplify` writes what the helper's numba version returns for them:

    unbroadcast(g, t)          -> g           (g and t numbers)
    snapshot(x)                -> x           (x a number)
    zeros_like(x)              -> 0.0
    seed_like(y)               -> 1.0
    zeros_plus(x, e[, fresh])  -> 0.0 + e     (x and e numbers)
    expand_to(g, x, a, k)      -> g           (g a float, x a number)
    [0] * n                    -> [0.0] * n   (the list is later given floats)

The same values (runtime/adjoints.py, axes.py, checks.py), without a call numba must
type, compile and inline: scalar loops (ode's elements, gmm's triangle, ba's camera)
are full of them.
"""
from __future__ import annotations

import gast

from ..analysis.kinds import F, is_number, kind_of
from ..syntax import const, walk


def simplify(func, kinds) -> int:
    """Rewrite the helper calls on numbers in `func`, in place; how many it rewrote."""
    rewriter = _Numbers(kinds)
    rewriter.visit(func)
    return rewriter.count + _float_lists(func, kinds)


def _float_lists(func, kinds) -> int:
    """`vals = [0] * n` (a display of int or bool literals, repeated or not) that is later
    given a float (`vals[i] = x`, `vals.append(x)`) is written `[0.0] * n`: numba types a
    list by its first items and would truncate every float put in it (Python's list holds
    both). How many displays it rewrote."""
    displays, source = {}, {}  # name -> its display; name -> the display's name
    floated = set()
    for node in walk(func):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            name, value = node.targets[0].id, node.value
            if isinstance(value, gast.List) and value.elts and all(
                    isinstance(e, gast.Constant) and type(e.value) in (int, bool)
                    for e in value.elts):
                displays[name] = value
                source[name] = name
            for operand in _repeated(value):
                if operand in source:
                    source[name] = source[operand]
        elif isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Subscript) \
                and isinstance(node.targets[0].value, gast.Name) \
                and kind_of(node.value, kinds) == F:
            floated.add(node.targets[0].value.id)
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr == "append" and isinstance(node.func.value, gast.Name) \
                and len(node.args) == 1 and kind_of(node.args[0], kinds) == F:
            floated.add(node.func.value.id)
    made = {source[n] for n in floated if n in source}
    for name in made:
        displays[name].elts = [const(float(e.value)) for e in displays[name].elts]
    return len(made)


def _repeated(value) -> list:
    """The names `value` is, or repeats: `t` of `t`, `t * n` and `n * t`."""
    if isinstance(value, gast.Name):
        return [value.id]
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mult):
        return [v.id for v in (value.left, value.right) if isinstance(v, gast.Name)]
    return []


class _Numbers(gast.NodeTransformer):
    def __init__(self, kinds):
        self.kinds, self.count = kinds, 0

    def _number(self, node) -> bool:
        return is_number(kind_of(node, self.kinds))

    def visit_Call(self, node):
        self.generic_visit(node)
        func, args = node.func, node.args
        if not isinstance(func, gast.Name) or node.keywords:
            return node
        new = None
        if func.id == "unbroadcast" and len(args) == 2 and all(map(self._number, args)):
            new = args[0]
        elif func.id == "snapshot" and len(args) == 1 and self._number(args[0]):
            new = args[0]
        elif func.id == "zeros_like" and len(args) == 1 and self._number(args[0]):
            new = const(0.0)
        elif func.id == "seed_like" and len(args) == 1 and self._number(args[0]):
            new = const(1.0)
        elif func.id == "zeros_plus" and len(args) in (2, 3) \
                and self._number(args[0]) and self._number(args[1]):
            new = gast.BinOp(left=const(0.0), op=gast.Add(), right=args[1])
        elif func.id == "expand_to" and len(args) == 4 and self._number(args[1]) \
                and kind_of(args[0], self.kinds) == F:
            new = args[0]
        if new is None:
            return node
        self.count += 1
        return new
