"""Tuple targets holding array elements, as one assignment each (desugar's first step).

Python evaluates the whole right-hand side of `a[i], a[j] = a[j], a[i]` before it
assigns anything, then assigns the targets from left to right. `lower_element_tuples`
rewrites, in place, every assignment whose tuple (or list) target holds a subscript at
any depth into that order, spelled out:

    a[i], a[j] = a[j], a[i]     ->    _rhsK_1 = a[j]
                                      _rhsK_2 = a[i]
                                      a[i] = _rhsK_1
                                      a[j] = _rhsK_2

and, for a right-hand side that is not a tuple of as many values (`q[i], p[i] =
step(q, p)`), `_rhsK_1, _rhsK_2 = step(q, p)` first: a tuple of names, unpacked as
any other. A nested tuple target is split the same way, part by part. Every value is
read before any target is written, as in Python, so a target's index (`a[i]` after
`i, a[i] = ...`) reads what the earlier targets bound. The rest of srcgrad then sees
only assignments to one subscript, or tuples of names. The new statements keep the
user's line; K makes names the function does not use (aliasing.py's messages call
them "a value computed" at that line).
"""
from __future__ import annotations

import itertools

import gast

from ..syntax import assign, name, rewrite_blocks, walk


def lower_element_tuples(tree) -> None:
    """Rewrite every assignment of `tree` to a tuple target holding a subscript."""
    if not any(_holds_element(n) for n in walk(tree) if isinstance(n, gast.Assign)):
        return
    taken = {n.id for n in walk(tree) if isinstance(n, gast.Name)}
    ids = (k for k in itertools.count(1) if not any(
        t.startswith(f"_rhs{k}") for t in taken))
    rewrite_blocks(tree.body, lambda stmt: _lowered(stmt, ids))


def _holds_element(stmt) -> bool:
    return (len(stmt.targets) == 1 and isinstance(stmt.targets[0], (gast.Tuple, gast.List))
            and any(isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)
                    for n in walk(stmt.targets[0])))


def _lowered(stmt, ids) -> list:
    if not (isinstance(stmt, gast.Assign) and _holds_element(stmt)):
        return [stmt]
    k, holds, writes = next(ids), [], []
    _split(stmt.targets[0], stmt.value, (f"_rhs{k}_{j}" for j in itertools.count(1)),
           holds, writes)
    return [gast.copy_location(s, stmt) for s in holds + writes]


def _split(target, value, fresh, holds: list, writes: list) -> None:
    """Statements binding `value`'s parts to names (`holds`), then the targets from
    those names (`writes`): a literal tuple value goes part by part into a tuple target,
    any other value into a tuple of new names, unpacked as before."""
    if not isinstance(target, (gast.Tuple, gast.List)):
        held = next(fresh)
        holds.append(assign(held, value))
        writes.append(assign(target, name(held)))
    elif isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts) \
            and not any(isinstance(e, gast.Starred) for e in value.elts):
        for part_target, part in zip(target.elts, value.elts):
            _split(part_target, part, fresh, holds, writes)
    else:
        held = [next(fresh) for _ in target.elts]
        holds.append(assign(gast.Tuple(elts=[name(h, store=True) for h in held],
                                       ctx=gast.Store()), value))
        for part_target, h in zip(target.elts, held):
            if isinstance(part_target, (gast.Tuple, gast.List)):
                _split(part_target, name(h), fresh, holds, writes)
            else:
                writes.append(assign(part_target, name(h)))
