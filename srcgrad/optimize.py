"""Pass 7, optimize: make the backward sweep lean and readable.

Touches only names srcgrad generated (`_adj_*`, `_r*`); the user's forward
code is left exactly as normalized. Guarantees, in order:
1. Fold: `_adj_v = zeros_like(v)` followed (at its first use) by
   `_adj_v = _adj_v + e` becomes `_adj_v = e`, unless `_adj_v` is updated in
   place somewhere (NOTE [adjoint ownership] in reverse.py); an init that cannot
   be folded moves down to just before its first use.
2. Dead code: assignments to generated names that nothing reads are removed,
   and so are "grad of" comments left with an empty block.
3. Constant arithmetic that rule inlining produced is folded (`x ** (2 - 1)`
   becomes `x`).
Valid for straight-line code, where every adjoint's uses follow its init.
"""
from __future__ import annotations

import operator

import gast

from .reverse import Reversed, is_comment

_FOLDABLE = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
             gast.Pow: operator.pow}

GENERATED = ("_adj_", "_r")


def _generated(name: str) -> bool:
    return name.startswith(GENERATED)


def _reads(node) -> set[str]:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)}


def _mentions(stmt, var: str) -> bool:
    return any(isinstance(n, gast.Name) and n.id == var for n in gast.walk(stmt))


def _assigned(stmt) -> str | None:
    if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
        return stmt.targets[0].id
    return None


def _is_zero_init(stmt) -> bool:
    v = getattr(stmt, "value", None)
    return (_assigned(stmt) or "").startswith("_adj_") and isinstance(v, gast.Call) \
        and isinstance(v.func, gast.Name) and v.func.id == "zeros_like"


def _updated_in_place(body, var: str) -> bool:
    return any(isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Subscript)
               and s.target.value.id == var for s in body)


def fold_zero_inits(body: list) -> list:
    body = list(body)
    i = 0
    while i < len(body):
        stmt = body[i]
        if not _is_zero_init(stmt):
            i += 1
            continue
        var = _assigned(stmt)
        j = next((k for k in range(i + 1, len(body)) if _mentions(body[k], var)), None)
        if j is None:
            i += 1
            continue
        use = body[j]
        if (_assigned(use) == var and isinstance(use.value, gast.BinOp)
                and isinstance(use.value.op, gast.Add) and isinstance(use.value.left, gast.Name)
                and use.value.left.id == var and not _mentions(use.value.right, var)
                and not _updated_in_place(body, var)):
            body[j] = gast.copy_location(
                gast.Assign(targets=use.targets, value=use.value.right, type_comment=None), use)
            del body[i]
        else:
            body.insert(j - 1, body.pop(i))  # sink the init next to its first use
            i += 1 if j - 1 == i else 0
    return body


def drop_dead(body: list) -> list:
    live: set[str] = set()
    kept = []
    for stmt in reversed(body):
        target = _assigned(stmt)
        if target is not None and _generated(target):
            if target not in live:
                continue
            live.discard(target)
        elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Subscript):
            if stmt.target.value.id not in live:
                continue
        live |= _reads(stmt)
        kept.append(stmt)
    kept.reverse()
    return [s for k, s in enumerate(kept) if not (
        is_comment(s) and str(s.value.value).startswith("grad of:")
        and (k + 1 == len(kept) or is_comment(kept[k + 1])
             or isinstance(kept[k + 1], gast.Return)))]


def _number(node, value=None) -> bool:
    return (isinstance(node, gast.Constant) and type(node.value) in (int, float)
            and (value is None or node.value == value))


class _Fold(gast.NodeTransformer):
    def visit_BinOp(self, node):
        self.generic_visit(node)
        op = type(node.op)
        if _number(node.left) and _number(node.right) and op in _FOLDABLE:
            return gast.Constant(value=_FOLDABLE[op](node.left.value, node.right.value), kind=None)
        if op is gast.Pow and _number(node.right, 1):
            return node.left
        if op is gast.Mult and _number(node.right, 1):
            return node.left
        if op is gast.Mult and _number(node.left, 1):
            return node.right
        return node


def fold_constants(body: list) -> list:
    for stmt in body:
        target = _assigned(stmt)
        if (target is not None and _generated(target)) or isinstance(stmt, gast.AugAssign):
            stmt.value = _Fold().visit(stmt.value)
    return body


def optimize(rev: Reversed) -> Reversed:
    rev.tree.body = drop_dead(fold_zero_inits(fold_constants(rev.tree.body)))
    return rev
