"""Sum loops nested in a loop, reversed in place (transforms/immediate.py, issue 13).

A pair loop `for i in range(n): for j in range(i + 1, n): e += f(i, j)` shares only the
sum e between all its (i, j) iterations. immediate.py takes the inner loop F (inside the
outer loop O, at O's top level) with its mirror B (inside O's mirror P) when, besides the
conditions F and B must meet alone, `nest_ok` holds:

1. O is a counted `for` over `range`; its body is line comments, tape statements and
   assignments of names (O's locals: each bound once, before F, never bound inside F,
   reading no sum), then F, then comments only.
2. P's body besides B is line comments and assignments of names other than adjoints,
   reading no adjoint, calling no `restore` and no `.pop`: P recomputes or reloads O's
   locals and nothing else, and B reads of what P binds only O's locals.
3. Neither O's nor P's statements besides F and B mention a sum.

Soundness: during F's iterations within O's iteration i, O's locals hold iteration i's
values (1), which P gave them back before B's iteration (2); the sums' adjoint passes P's
statements unchanged (2, 3), so its value before O is its value at every B; the rest is
immediate.py's argument for F and B. Once B has moved, P does nothing anyone reads:
`drop_emptied` removes it when it binds nothing read after it, and the tapes of O's
locals it loaded when nothing else reads them.
"""
from __future__ import annotations

import gast

from ..analysis.liveness import live_after, reads
from ..frontend.trees import stores_in
from ..syntax import is_call, is_comment, walk

_ADJ, _TAPE = "_adj_", "_tape_"


def nests(rev):
    """(inner loop F, outer loop O, F's mirror B, O's mirror P, the backward statements
    before B on its path) for the loops at the top of the forward sweep."""
    for k, back_outer in enumerate(rev.backward):
        outer = getattr(back_outer, "srcgrad_reverses", None)
        if not (isinstance(back_outer, gast.For) and isinstance(outer, gast.For)
                and any(s is outer for s in rev.forward)):
            continue
        for j, back in enumerate(back_outer.body):
            inner = getattr(back, "srcgrad_reverses", None)
            if isinstance(back, gast.For) and isinstance(inner, gast.For) \
                    and any(s is inner for s in outer.body):
                yield inner, outer, back, back_outer, rev.backward[:k] + back_outer.body[:j]


def nest_ok(outer, back_outer, inner, back, sums, only_tapes) -> bool:
    """Conditions 1-3 of the module doc; `only_tapes(stmt, None)` tells O's tape
    statements (records and makings)."""
    if not (is_call(outer.iter, "range") and not outer.orelse
            and isinstance(outer.target, gast.Name)):
        return False
    at = next(k for k, s in enumerate(outer.body) if s is inner)
    if not all(is_comment(s) for s in outer.body[at + 1:]):
        return False
    mine, inside = set(), stores_in(inner)
    for stmt in outer.body[:at]:
        if is_comment(stmt) or only_tapes(stmt, None):
            continue
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)):
            return False
        x = stmt.targets[0].id
        if x in mine or x in inside or x in sums or reads(stmt.value, False) & sums:
            return False
        mine.add(x)
    rest = [s for s in back_outer.body if s is not back and not is_comment(s)]
    for stmt in rest:
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name)
                and not stmt.targets[0].id.startswith(_ADJ)):
            return False
        if any(n.startswith(_ADJ) for n in reads(stmt.value, False)) or sums & reads(
                stmt, False) or any(_undoes(n) for n in walk(stmt)):
            return False
    given = set().union(*map(stores_in, rest)) if rest else set()
    return not (given - mine) & reads(back, False)


def nest_reads(func, back_outer, back) -> set:
    """What may read a name B binds once B's body has moved: P's other statements, and
    what follows P (B's own reads, in P's next iterations, move with it)."""
    rest = [s for s in back_outer.body if s is not back]
    return live_after(func)[id(back_outer)].union(*(reads(s, False) for s in rest))


def drop_emptied(rev, outer, back_outer, only_tapes) -> None:
    """Remove O's mirror P once its inner loop has moved, if it binds nothing read after it
    (with its `# grad of:` line). The tapes it read (O's locals, loaded back) go too when
    nothing else names them: `only_tapes(stmt, tapes)` tells their records and makings
    in O's body and at the top of the forward sweep."""
    if any(isinstance(s, gast.For) for s in back_outer.body):
        return
    tapes = {n.id for n in walk(back_outer) if isinstance(n, gast.Name)
             and n.id.startswith(_TAPE)}
    bound = set().union(*map(stores_in, back_outer.body))
    if bound & live_after(rev.function())[id(back_outer)]:
        return
    blocks = (outer.body, rev.forward)
    made = [(block, s) for block in blocks for s in block if tapes and only_tapes(s, tapes)]
    if mentions_outside(rev, tapes, [back_outer] + [s for _, s in made]):
        return
    for block, stmt in made:
        block.remove(stmt)
    at = next(k for k, s in enumerate(rev.backward) if s is back_outer)
    note = at > 0 and is_comment(rev.backward[at - 1])
    del rev.backward[at - note:at + 1]


def mentions_outside(rev, tapes, owners) -> bool:
    """Whether a statement of the sweeps outside `owners` names one of `tapes`."""
    inside = {id(n) for owner in owners for n in walk(owner)}
    return any(isinstance(n, gast.Name) and n.id in tapes and id(n) not in inside
               for s in rev.forward + rev.backward for n in walk(s))


def _undoes(node) -> bool:
    return is_call(node, "restore") or (
        isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
        and node.func.attr == "pop")
