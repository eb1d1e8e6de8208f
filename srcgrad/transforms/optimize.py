"""Pass 8, optimize: make the backward sweep lean and readable.

Touches only the backward sweep and only names srcgrad generated (`_adj_*`,
`_r*`). Guarantees, applied to every block (loop and branch bodies too):
1. Constant arithmetic that rule inlining produced is folded
   (`x ** (2 - 1)` becomes `x`).
2. Fold: `_adj_v = zeros_like(v)` whose first use in the same block is
   `_adj_v = _adj_v + e` becomes `_adj_v = e`, or `_adj_v = zeros_plus(v, e)`
   (the same sum in a buffer of its own, one pass) if `_adj_v` is ever updated
   in place (NOTE [adjoint ownership] in reverse.py); an init that cannot be
   folded moves down to just before its first use.
3. Dead code: statements that only write generated names nobody else reads
   are removed, then loops and branches left empty, then "grad of" comments
   left without a block.
4. An adjoint that nothing else reads (typically a parameter's, accumulated
   across loop iterations) is accumulated in place, `_adj_W += e`, saving an
   array allocation per iteration. Nothing can alias it: nothing reads it.
5. Buffers one adjoint owns (owned.py, with its rules): resets of slots nothing
   reads again are dropped, copies nothing can change become views, and a new
   sum starting an adjoint is kept instead of copied.
6. The adjoint of a read `v = a[I]` that starts as zeros and is only added into
   accumulates straight into `_adj_a[I]` (targets.py, with its rule).
"""
from __future__ import annotations

import copy
import operator

import gast

from ..syntax import blocks, is_comment, walk, name as _name  # blocks: others import it here
from .owned import mentions, own  # mentions: fuse, recompute and inverses import it from here
from .squares import doubled_contributions, scalar_square_cotangents
from .reverse import Reversed
from .targets import into_targets

GENERATED = ("_adj_", "_r")
_FOLDABLE = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
             gast.Pow: operator.pow}
_COMPOUND = (gast.If, gast.For, gast.While)


def _generated(name) -> bool:
    return isinstance(name, str) and name.startswith(GENERATED)


def written(stmt) -> str | None:
    """The name a simple statement writes (`a = ..`, `a[i] = ..`, `a[i] += ..`, `a.pop()`,
    `add_at(a, idx, g)`)."""
    if isinstance(stmt, (gast.Assign, gast.AugAssign)):
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt.target
        if isinstance(target, gast.Subscript):
            target = target.value
        return target.id if isinstance(target, gast.Name) else None
    if (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)
            and isinstance(stmt.value.func, gast.Attribute) and stmt.value.func.attr == "pop"
            and isinstance(stmt.value.func.value, gast.Name)):
        return stmt.value.func.value.id
    if (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)
            and isinstance(stmt.value.func, gast.Name) and stmt.value.func.id == "add_at"):
        return stmt.value.args[0].id  # adds into its first argument in place (reverse.py)
    return None


def reads(stmt) -> set[str]:
    """Names a statement reads, not counting a write's reads of the name it writes."""
    loads = {n.id for n in walk(stmt) if isinstance(n, gast.Name)
             and isinstance(n.ctx, gast.Load)}
    target = written(stmt)
    if target is not None and not isinstance(stmt, _COMPOUND):
        loads.discard(target)
    return loads


def _is_adjoint_from(stmt, helper: str) -> bool:
    """Whether `stmt` is `_adj_v = helper(...)`."""
    v = getattr(stmt, "value", None)
    return (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
            and stmt.targets[0].id.startswith("_adj_") and isinstance(v, gast.Call)
            and isinstance(v.func, gast.Name) and v.func.id == helper)


def _is_zero_init(stmt) -> bool:
    return _is_adjoint_from(stmt, "zeros_like")


def _is_zeros_plus(stmt) -> bool:
    return _is_adjoint_from(stmt, "zeros_plus")


def _in_place(backward) -> set[str]:
    """Adjoints updated in place anywhere: `_adj_x[i] += g`, `_adj_y[i] = 0`, `_adj_h.pop()`."""
    names = set()
    for block in blocks(backward):
        for stmt in block:
            target = stmt.targets[0] if isinstance(stmt, gast.Assign) else getattr(stmt, "target", None)
            if isinstance(target, gast.Subscript):
                names.add(target.value.id)
            elif isinstance(stmt, gast.Expr) and written(stmt):
                names.add(written(stmt))
            elif isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Call) \
                    and isinstance(stmt.value.func, gast.Attribute) and stmt.value.func.attr == "pop":
                names.add(stmt.value.func.value.id)
    return names


def fold_zero_inits(block: list, in_place: set[str]) -> None:
    named: dict = {}  # id(statement) -> (statement, the names in it): statements are replaced,
    #                   never changed in place, here

    def names(s) -> set:
        if id(s) not in named:
            named[id(s)] = (s, {n.id for n in walk(s) if isinstance(n, gast.Name)})
        return named[id(s)][1]

    i = 0
    while i < len(block):
        stmt = block[i]
        if not _is_zero_init(stmt):
            i += 1
            continue
        var = stmt.targets[0].id
        j = next((k for k in range(i + 1, len(block)) if var in names(block[k])), None)
        if j is None:
            i += 1
            continue
        use = block[j]
        if (isinstance(use, gast.Assign) and written(use) == var
                and isinstance(use.targets[0], gast.Name) and isinstance(use.value, gast.BinOp)
                and isinstance(use.value.op, gast.Add) and isinstance(use.value.left, gast.Name)
                and use.value.left.id == var and not mentions(use.value.right, var)
                and (var not in in_place or _unchanged(stmt.value.args[0], block[i + 1:j]))):
            value = use.value.right if var not in in_place else gast.Call(  # a buffer of its own
                func=_name("zeros_plus"), args=[stmt.value.args[0], use.value.right], keywords=[])
            block[j] = gast.copy_location(
                gast.Assign(targets=use.targets, value=value, type_comment=None), use)
            del block[i]
        else:  # sink the init next to its first use (behind other inits already there)
            while j - 1 > i and _is_zero_init(block[j - 1]):
                j -= 1
            if j - 1 == i:
                i += 1
            else:
                block.insert(j - 1, block.pop(i))


def _unchanged(arg, stmts) -> bool:
    """Whether the name `arg` is assigned in none of `stmts` (its shape is the same there)."""
    return isinstance(arg, gast.Name) and not any(
        isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id == arg.id
        for s in stmts for n in walk(s))


def _number(node, value=None) -> bool:
    return (isinstance(node, gast.Constant) and type(node.value) in (int, float)
            and (value is None or node.value == value))


class _Fold(gast.NodeTransformer):
    """Constants folded; `a * power_slope(x, 3, 1.0)` (the power rule's, runtime/cotangents.py)
    spelled `a * 3 * x ** 2` where the exponent is a number other than 0."""

    def visit_BinOp(self, node):
        if isinstance(node.op, gast.Mult) and self._slope(node.right):
            x, y, c = node.right.args
            node = gast.BinOp(left=gast.BinOp(left=node.left, op=gast.Mult(), right=_times(c, y)),
                              op=gast.Mult(), right=_power_less_one(x, y))
        self.generic_visit(node)
        op = type(node.op)
        if _number(node.left) and _number(node.right) and op in _FOLDABLE:
            return gast.Constant(value=_FOLDABLE[op](node.left.value, node.right.value), kind=None)
        if op in (gast.Pow, gast.Mult) and _number(node.right, 1):
            return node.left
        if op is gast.Mult and _number(node.left, 1):
            return node.right
        return node

    def visit_Call(self, node):
        if self._slope(node):
            x, y, c = node.args
            return self.visit(gast.BinOp(left=_times(c, y), op=gast.Mult(),
                                         right=_power_less_one(x, y)))
        self.generic_visit(node)
        return node

    def _slope(self, node) -> bool:
        """`node` is `power_slope(x, y, c)` with numbers y and c, c * y != 0 (folded)."""
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
                and node.func.id == "power_slope" and len(node.args) == 3):
            return False
        node.args[1:] = [self.visit(a) for a in node.args[1:]]
        y, c = node.args[1:]
        return _number(y) and _number(c) and c.value * y.value != 0


def _times(c, y):
    """`c * y` of two numbers, as y where c is 1 (the power rule's own slope)."""
    return y if c.value == 1 else gast.Constant(value=c.value * y.value, kind=None)


def _power_less_one(x, y):
    return gast.BinOp(left=x, op=gast.Pow(), right=gast.BinOp(
        left=copy.deepcopy(y), op=gast.Sub(), right=gast.Constant(value=1, kind=None)))


def drop_dead(backward: list, keep: set[str]) -> None:
    """Remove writes to generated names that no other statement reads, to a fixed point."""
    while True:
        used = set(keep)
        for block in blocks(backward):
            for stmt in block:
                if not isinstance(stmt, _COMPOUND):
                    used |= reads(stmt)
                else:
                    used |= {n.id for n in walk(stmt.test if not isinstance(stmt, gast.For)
                                                      else stmt.iter) if isinstance(n, gast.Name)}
        removed = False
        for block in blocks(backward):
            for k in range(len(block) - 1, -1, -1):
                target = written(block[k])
                if not isinstance(block[k], _COMPOUND) and _generated(target) and target not in used:
                    del block[k]
                    removed = True
        if not removed:
            return


def drop_dead_tail(block: list, keep: set[str]) -> None:
    """Flow-sensitive dead code in the outermost block (loops and branches read what they mention)."""
    live = set(keep)
    for k in range(len(block) - 1, -1, -1):
        stmt = block[k]
        if isinstance(stmt, _COMPOUND):
            live |= {n.id for n in walk(stmt) if isinstance(n, gast.Name)}
            continue
        target = written(stmt)
        if _generated(target) and target not in live:
            del block[k]
            continue
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            live.discard(target)
        live |= {n.id for n in walk(stmt) if isinstance(n, gast.Name)
                 and isinstance(n.ctx, gast.Load)}


def drop_empty(block: list) -> list:
    """Remove loops and branches with nothing left to do, and comments left alone."""
    out = []
    for stmt in block:
        if isinstance(stmt, _COMPOUND):
            stmt.body = drop_empty(stmt.body)
            if isinstance(stmt, gast.If):
                stmt.orelse = drop_empty(stmt.orelse)
            if not any(not is_comment(s) and not isinstance(s, gast.Pass)
                       for s in stmt.body + getattr(stmt, "orelse", [])):
                continue
            if not stmt.body:
                stmt.body = [gast.Pass()]
        out.append(stmt)
    return [s for k, s in enumerate(out) if not (
        is_comment(s) and str(s.value.value).startswith("grad of:")
        and (k + 1 == len(out) or is_comment(out[k + 1])))]


def _accumulation(stmt):
    """The adjoint `A` if `stmt` is `A = A + e` (e not reading A), else None."""
    if (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.BinOp) and isinstance(stmt.value.op, gast.Add)
            and isinstance(stmt.value.left, gast.Name)
            and stmt.value.left.id == stmt.targets[0].id and stmt.targets[0].id.startswith("_adj_")
            and not mentions(stmt.value.right, stmt.targets[0].id)):
        return stmt.targets[0].id
    return None


def accumulate_in_place(backward: list) -> None:
    others = set()  # adjoints read by some statement other than their own accumulation
    inits = set()
    for block in blocks(backward):
        for stmt in block:
            if _is_zero_init(stmt) or _is_zeros_plus(stmt):
                inits.add(stmt.targets[0].id)
            elif isinstance(stmt, _COMPOUND):
                others |= {n.id for n in walk(stmt.test if not isinstance(stmt, gast.For)
                                                   else stmt.iter) if isinstance(n, gast.Name)}
            elif _accumulation(stmt) is None or _is_zero_init(stmt):
                others |= {n.id for n in walk(stmt) if isinstance(n, gast.Name)}
            else:
                others |= {n.id for n in walk(stmt.value.right) if isinstance(n, gast.Name)}
    assigned_otherwise = {written(s) for b in blocks(backward) for s in b
                          if written(s) and not (_is_zero_init(s) or _is_zeros_plus(s))
                          and _accumulation(s) is None}
    for block in blocks(backward):
        for k, stmt in enumerate(block):
            var = _accumulation(stmt)
            if var and var in inits and var not in others and var not in assigned_otherwise:
                block[k] = gast.copy_location(gast.AugAssign(
                    target=gast.Name(id=var, ctx=gast.Store(), annotation=None, type_comment=None),
                    op=gast.Add(), value=stmt.value.right), stmt)


def optimize(rev: Reversed) -> Reversed:
    for block in blocks(rev.backward):
        for stmt in block:
            if isinstance(stmt, (gast.Assign, gast.AugAssign)):
                stmt.value = _Fold().visit(stmt.value)
    in_place = _in_place(rev.backward)
    for block in blocks(rev.backward):
        fold_zero_inits(block, in_place)
    keep = {f"_adj_{w}" for w in rev.wrt}
    drop_dead(rev.backward, keep)
    drop_dead_tail(rev.backward, keep)
    rev.backward = drop_empty(rev.backward)
    scalar_square_cotangents(rev.forward, rev.backward)
    doubled_contributions(rev.backward)
    accumulate_in_place(rev.backward)
    own(rev.backward, keep)
    into_targets(rev.backward, rev.integers, keep)
    return rev
