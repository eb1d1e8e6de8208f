"""Part of pass 10 (fuse, last): a negated contribution is subtracted, not negated then added.

The backward code of `a - b` gives b the contribution `unbroadcast(-g, b)`; where it is
summed into an adjoint, the negation is an array of its own when g is one (ba's
`_adj_cam[3:6] += unbroadcast(-_adj_xo, _t6)` per observation, gmm's
`_adj_mu[ik] += unbroadcast(-_adj_xc, _t5)` per point and component):

    T += unbroadcast(-E, t)          becomes      T -= unbroadcast(E, t)
    v = L + unbroadcast(-E, t)       becomes      v = L - unbroadcast(E, t)
    v = -(unbroadcast(-E, t) * d)    becomes      v = unbroadcast(E, t) * d

The negation may sit anywhere down the operands of `*`, `/` and the first argument of
`unbroadcast`, and behind generated adjoint names bound once and read only there (two
mentions in the whole function), whose binding then takes the positive value: no other
reader sees its sign change. lstm's sigmoids gave `_adj__t45 = unbroadcast(-g * s / t,
u) * u; _adj_z = -_adj__t45`, a new array per gate and step; now `_adj_z = _adj__t45`.

Rule: `unbroadcast` only sums, copies and broadcasts its first argument, so it commutes
with negation (IEEE negation is exact and round-to-nearest is symmetric: a sum of
negated terms is the negated sum, in the same order); `(-a) * b`, `a * (-b)`, `(-a) / b`
and `a / (-b)` are `-(a * b)` and `-(a / b)` exactly (the sign of a product or quotient
does not enter its magnitude); and `L + (-U)` is `L - U`. The
values are the same, except that a zero may change sign (a zero-filled sum of -0.0
terms); no statement is moved and no name is read that was not read before. Only
statements binding or updating an adjoint (`_adj_...`) are rewritten. Runs once fusion
is done, since the contribution is a temporary of its own until then
(`_adj__t6 = unbroadcast(-_adj_xo, _t6); _adj_cam[3:6] += _adj__t6`), and the rewrites
of optimize look for `+` and `+=`.
"""
from __future__ import annotations

from collections import Counter

import gast

from ..syntax import blocks, is_call, walk


class _Signs:
    """The function's single-use generated names, and negations moved out of them."""

    def __init__(self, function: gast.FunctionDef):
        body = function.body
        names = [n for stmt in body for n in walk(stmt) if isinstance(n, gast.Name)]
        self.mentions = Counter(n.id for n in names)
        for param in function.args.args:  # its value comes from the caller, not a binding
            self.mentions[param.id] += 2
        self.bindings = {stmt.targets[0].id: stmt for block in blocks(body) for stmt in block
                         if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                         and isinstance(stmt.targets[0], gast.Name)}

    def negated(self, term, pending: list, seen: frozenset = frozenset()):
        """P with `term` equal to -P exactly, or None: `-E` gives E; a negation found down
        the first argument of `unbroadcast` and the operands of `*` and `/` moves out
        (`unbroadcast(-a * b / c, t) * d` gives `unbroadcast(a * b / c, t) * d`); and a
        generated name bound once and read only here stands for its value, whose binding
        is to become P's (added to `pending`, applied once the whole term succeeds)."""
        if isinstance(term, gast.UnaryOp) and isinstance(term.op, gast.USub):
            return term.operand
        if is_call(term, "unbroadcast") and len(term.args) == 2 and not term.keywords:
            inner = self.negated(term.args[0], pending, seen)
            if inner is not None:
                return gast.Call(func=term.func, args=[inner, term.args[1]], keywords=[])
        if isinstance(term, gast.BinOp) and isinstance(term.op, (gast.Mult, gast.Div)):
            left = self.negated(term.left, pending, seen)
            if left is not None:
                return gast.BinOp(left=left, op=term.op, right=term.right)
            right = self.negated(term.right, pending, seen)
            if right is not None:
                return gast.BinOp(left=term.left, op=term.op, right=right)
        if (isinstance(term, gast.Name) and term.id.startswith("_adj_") and term.id not in seen
                and self.mentions[term.id] == 2 and term.id in self.bindings):
            binding = self.bindings[term.id]
            value = self.negated(binding.value, pending, seen | {term.id})
            if value is not None:
                pending.append((binding, value))
                return term
        return None

    def positive(self, term):
        """`negated`, its pending bindings applied; None (nothing changed) if it fails."""
        pending = []
        value = self.negated(term, pending)
        if value is not None:
            for binding, new in pending:
                binding.value = new
        return value


def _adjoint(target) -> bool:
    while isinstance(target, gast.Subscript):
        target = target.value
    return isinstance(target, gast.Name) and target.id.startswith("_adj_")


def subtracted_negations(function: gast.FunctionDef) -> None:
    """Rewrite the three forms of the module docstring in `function`, in place."""
    signs = _Signs(function)
    for block in blocks(function.body):
        for stmt in block:
            if not (isinstance(stmt, (gast.Assign, gast.AugAssign))
                    and _adjoint(stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt.target)):
                continue
            if isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add):
                positive = signs.positive(stmt.value)
                if positive is not None:
                    stmt.op, stmt.value = gast.Sub(), positive
            elif (isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.BinOp)
                  and isinstance(stmt.value.op, gast.Add)):
                positive = signs.positive(stmt.value.right)
                if positive is not None:
                    stmt.value.op, stmt.value.right = gast.Sub(), positive
            elif (isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.UnaryOp)
                  and isinstance(stmt.value.op, gast.USub)):
                positive = signs.positive(stmt.value.operand)  # -(-P) is P
                if positive is not None:
                    stmt.value = positive
