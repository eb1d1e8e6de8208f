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
from ..syntax import call, is_call, name

_ADJ = "_adj_"


def adjoint_inputs(rev, kept, before, block, loop, sums):
    """(initializations to move to the forward sweep's top, {adjoint: its value before F})
    for the adjoints B's body reads before binding (module doc, 3), or (None, None)."""
    exposed, bound = [], set()
    for stmt in kept:
        here = {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name)
                and n.id.startswith(_ADJ) and not isinstance(n.ctx, gast.Store)}
        here |= {n.target.id for n in gast.walk(stmt) if isinstance(n, gast.AugAssign)
                 and isinstance(n.target, gast.Name) and n.target.id.startswith(_ADJ)}
        exposed += [a for a in sorted(here - bound) if a not in exposed]
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            bound.add(stmt.targets[0].id)
    inits, chain = [], {}
    params = set(rev.norm.inputs)
    rebound = set().union(*map(stores_in, rev.forward))
    for a in exposed:
        if _accumulated_only(kept, a):
            init = next((s for s in rev.backward if isinstance(s, gast.Assign)
                         and isinstance(s.targets[0], gast.Name) and s.targets[0].id == a), None)
            if init is None or not is_call(init.value, "zeros_like") \
                    or not _named(init.value.args[0], None) \
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


def _accumulated_only(kept, a) -> bool:
    """Every mention of a in B's body is `a[...] += e` or `a += e`."""
    found = False
    for stmt in kept:
        for n in gast.walk(stmt):
            if isinstance(n, gast.Name) and n.id == a:
                found = True
                if not any(isinstance(p, gast.AugAssign) and (p.target is n or isinstance(
                        p.target, gast.Subscript) and p.target.value is n
                        and a not in reads(p.target.slice, False) and a not in reads(p.value, False))
                        for s in kept for p in gast.walk(s)):
                    return False
    return found


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
            if isinstance(stmt, gast.AugAssign) and _named(stmt.target, current):
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
        if is_call(value, "seed_like") and _named(value.args[0], None):
            if value.args[0].id in sums:
                return call("seed_like", name(value.args[0].id))
            after = block[next(k for k, s in enumerate(block) if s is loop) + 1:]
            copies = [s for s in after if isinstance(s, gast.Assign)
                      and _named(s.targets[0], value.args[0].id)]
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
        for n in gast.walk(stmt):
            if isinstance(n, gast.Name) and n.id == a and isinstance(n.ctx, gast.Store):
                if not (isinstance(stmt, gast.Assign) and stmt.targets[0] is n):
                    return False
                value = stmt.value
                if is_call(value, "unbroadcast"):
                    value = value.args[0]
                if not (isinstance(value, gast.Name) and value.id in copies):
                    return False
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) \
                and _named(stmt.value, a):
            copies.add(stmt.targets[0].id)
        elif isinstance(stmt, gast.Assign):
            copies -= {n.id for t in stmt.targets for n in gast.walk(t)
                       if isinstance(n, gast.Name)}
    return True




def _stores(stmts, a) -> int:
    return sum(1 for s in stmts for n in gast.walk(s)
               if isinstance(n, gast.Name) and n.id == a and isinstance(n.ctx, gast.Store))




def _named(node, var: str | None) -> bool:
    return isinstance(node, gast.Name) and (var is None or node.id == var)
