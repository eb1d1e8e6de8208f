"""The adjoints a sum loop's backward body reads before binding them, and their values
before the forward loop (transforms/immediate.py, condition 3 of its docstring).

`adjoint_inputs` returns the `_adj_p = zeros_like(p)` statements to move to the top of the
forward sweep (adjoints the body only accumulates into) and, for each other adjoint, an
expression giving its value at the backward loop's start that is valid before the forward
loop (the seed, reached through copies), or None when some adjoint has neither.
"""
from __future__ import annotations

import gast

from ..analysis.liveness import reads
from ..frontend.trees import stores_in
from ..syntax import call, is_call, is_name, name, walk

_ADJ = "_adj_"


def adjoint_inputs(rev, kept, before, block, loop, sums):
    """(initializations to move to the forward sweep's top, {adjoint: its value before F})
    for the adjoints B's body reads before binding (module doc, 3), or (None, None)."""
    exposed = []
    _exposed(kept, set(), exposed)
    inits, chain = [], {}
    params = set(rev.norm.inputs)
    rebound = set().union(*map(stores_in, rev.forward))
    for a in exposed:
        if _accumulated_only(kept, a):
            init = next((s for s in rev.backward if isinstance(s, gast.Assign)
                         and isinstance(s.targets[0], gast.Name) and s.targets[0].id == a), None)
            if init is None or not is_call(init.value, "zeros_like") \
                    or not isinstance(init.value.args[0], gast.Name) \
                    or init.value.args[0].id not in params - rebound \
                    or init not in before or _stores(before, a) != 1:
                return None, None
            inits.append(init)
            continue
        value = _resolved(a, before, block, loop, sums, rev.seed)
        if value is None or not _unchanged(kept, a):
            return None, None
        chain[a] = value
    return inits, chain


def _exposed(stmts, bound, exposed) -> set:
    """Add to `exposed` the adjoints `stmts` read before binding them on some path through
    their `if`s; the names bound on every path after them."""
    for stmt in stmts:
        if isinstance(stmt, gast.If):
            _add(exposed, _adjoints_read(stmt.test) - bound)
            after = [_exposed(branch, set(bound), exposed) for branch in (stmt.body, stmt.orelse)]
            bound |= after[0] & after[1]
            continue
        here = _adjoints_read(stmt) | {
            n.target.id for n in walk(stmt) if isinstance(n, gast.AugAssign)
            and isinstance(n.target, gast.Name) and n.target.id.startswith(_ADJ)}
        _add(exposed, here - bound)
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            bound.add(stmt.targets[0].id)
    return bound


def _adjoints_read(node) -> set:
    return {n.id for n in walk(node) if isinstance(n, gast.Name)
            and n.id.startswith(_ADJ) and not isinstance(n.ctx, gast.Store)}


def _add(exposed, names) -> None:
    exposed += [a for a in sorted(names) if a not in exposed]


def _accumulated_only(kept, a) -> bool:
    """Every mention of a in B's body is `a[...] += e`, `a += e`, or `v = a[...]` with v an
    adjoint bound only there and otherwise only accumulated into, `v[...] += e` (a view:
    `_adj_cam = _adj_cams[i]` for an inlined call's argument `cams[i]`)."""
    nodes = [n for s in kept for n in walk(s)]
    parent = {id(c): p for p in nodes for c in gast.iter_child_nodes(p)}
    mentions = [n for n in nodes if isinstance(n, gast.Name) and n.id == a]
    for n in mentions:
        if _accumulates(n, parent, {a}, True):
            continue
        sub = parent.get(id(n))
        made = parent.get(id(sub))
        if not (isinstance(sub, gast.Subscript) and sub.value is n
                and isinstance(made, gast.Assign) and made.value is sub
                and len(made.targets) == 1 and isinstance(made.targets[0], gast.Name)
                and made.targets[0].id.startswith(_ADJ) and a not in reads(sub.slice, False)):
            return False
        v = made.targets[0].id
        uses = [m for m in nodes if isinstance(m, gast.Name) and m.id == v]
        if not all(m is made.targets[0] or _accumulates(m, parent, {a, v}, False)
                   for m in uses):
            return False
    return bool(mentions)


def _accumulates(n, parent, names, whole) -> bool:
    """Name n is the target of `n[...] += e` (or, if `whole`, `n += e`), neither the index
    nor e reading `names`."""
    target = parent.get(id(n))
    if isinstance(target, gast.Subscript) and target.value is n:
        if names & reads(target.slice, False):
            return False
    elif whole:
        target = n
    else:
        return False
    aug = parent.get(id(target))
    return isinstance(aug, gast.AugAssign) and aug.target is target \
        and not names & reads(aug.value, False)


def _resolved(a, before, block, loop, sums, seed):
    """The value of adjoint a at B's start, as an expression valid before F, or None."""
    current = a
    for stmt in reversed(before):
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            if current in stores_in(stmt):
                return None
            continue
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                and stmt.targets[0].id == current):
            if isinstance(stmt, gast.AugAssign) and is_name(stmt.target, current):
                return None
            continue
        value = stmt.value
        if isinstance(value, gast.Constant):
            return value
        if isinstance(value, gast.Name):
            if value.id == seed:
                return value
            current = value.id
            continue
        if is_call(value, "seed_like") and isinstance(value.args[0], gast.Name):
            if value.args[0].id in sums:
                return call("seed_like", name(value.args[0].id))
            after = block[next(k for k, s in enumerate(block) if s is loop) + 1:]
            copies = [s for s in after if isinstance(s, gast.Assign)
                      and is_name(s.targets[0], value.args[0].id)]
            if len(copies) == 1 and isinstance(copies[0].value, gast.Name) \
                    and copies[0].value.id in sums:
                return call("seed_like", name(copies[0].value.id))
        return None
    return None


def _unchanged(kept, a) -> bool:
    """B's body rebinds a only to itself: `c = a` first, then `a = c` or
    `a = unbroadcast(c, ...)`."""
    copies = set()
    for stmt in kept:
        for n in walk(stmt):
            if isinstance(n, gast.Name) and n.id == a and isinstance(n.ctx, gast.Store):
                if not (isinstance(stmt, gast.Assign) and stmt.targets[0] is n):
                    return False
                value = stmt.value
                if is_call(value, "unbroadcast"):
                    value = value.args[0]
                if not (isinstance(value, gast.Name) and value.id in copies):
                    return False
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) \
                and is_name(stmt.value, a):
            copies.add(stmt.targets[0].id)
        elif isinstance(stmt, gast.Assign):
            copies -= {n.id for t in stmt.targets for n in walk(t)
                       if isinstance(n, gast.Name)}
    return True


def _stores(stmts, a) -> int:
    return sum(1 for s in stmts for n in walk(s)
               if isinstance(n, gast.Name) and n.id == a and isinstance(n.ctx, gast.Store))
