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

The same values (runtime/adjoints.py, axes.py, checks.py), without a call numba must
type, compile and inline: scalar loops (ode's elements, gmm's triangle, ba's camera)
are full of them.
"""
from __future__ import annotations

import gast

from ..analysis.kinds import F, is_number, kind_of
from ..syntax import const


def simplify(func, kinds) -> int:
    """Rewrite the helper calls on numbers in `func`, in place; how many it rewrote."""
    rewriter = _Numbers(kinds)
    rewriter.visit(func)
    return rewriter.count


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
