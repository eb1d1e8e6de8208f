"""Sum loops reversed in place: each iteration's backward sweep runs right after its
forward sweep, with no tape (issue 13).

A loop whose iterations share nothing but sums (`total = total + e`) has a backward sweep
whose iteration j needs only what iteration j computed, the loop's invariants and the
adjoint of the sums, which the loop leaves unchanged. When that adjoint is known before
the loop runs (the function returns the sum: its adjoint is the seed), iteration j's
backward statements can run at the end of its forward iteration: what the backward loop
read from tapes is still in its names, and the tapes and the second loop go. det's
gradient keeps, per level, the `(value, partials)` of every child on a list until its
backward loop; reversed in place, each child's partials are used and freed at once
(ell = 5 to 9: 3.1-3.5x -> 1.46-1.77x its primal).

`immediate(rev)` rewrites the Reversed program (after record.py) for each counted `for`
loop F at the top of the forward sweep, in a branch of an `if` there, or at the top of
such a loop's body (a pair loop's inner loop, with the conditions of immediate_nests.py),
whose mirror B (the loop reverse.py made of it) sits at the same place in the backward
sweep, when:

1. F's body has no loop, `break`, `continue` or `return`; every name it binds is either a
   sum (bound once, by `s = s + e` or `s = e + s`, or `t = s + e; s = t` as normalization
   writes it, e not reading s, s read nowhere else in the body) or local: bound at most
   once along each path through the body's `if`s (whose tests are locals), and read only
   where it is bound on every path leading there (transforms/immediate_paths.py); it
   writes elements only of local arrays; its calls of anything but pure builtins and
   helpers take only locals, the loop index and constants, and its methods are pure ones
   or of locals; its other statements are line comments and what makes and fills tapes.
2. B's body reads tapes only as `x = _tape_x[k]` (k the loop index j, or a slot such as
   `i * _s4 + j` in a nest, reading names neither F nor B binds) or undoes them as
   `x = restore(_tape_x, x)`, of locals x that F records (`record_at(_tape_x, k, x)`,
   `_tape_x.append(x)`) after binding them, and reads no x after its undo; it calls no
   `.pop`, binds only adjoints and locals (recomputed: the same values), writes elements
   only of adjoints, reads the sums only for their shapes (liveness's `shape_only`),
   reads a local only where F's iteration has bound it (inside `if c:` where F bound it
   inside `if c:`), and binds nothing the backward sweep reads after B.
3. Every adjoint B's body reads before binding it is either
   - only accumulated into (`a[...] += e`, `a += e`, or through a view `v = a[i]` then
     only `v[...] += e`) and made by `a = zeros_like(p)` at the
     top of the backward sweep, p a parameter the forward sweep never rebinds: that
     statement moves to the top of the forward sweep (nothing reads a in between); or
   - the adjoint of a sum, bound before B along B's path to the seed through copies
     (`a = b`), ending at `seed_like(s)`, or `seed_like(r)` with `r = s` after F (the
     seed has the shape of s, known before F), a constant or the seed parameter; B's body may
     rebind it only to itself (`c = a; ...; a = c` or `unbroadcast(c, ...)`): it is
     computed once before F.

Soundness: by 1, iteration j's names hold at the end of its forward body the values the
backward sweep would give them (loaded from a tape, recomputed) when B runs iteration j,
wherever B reads them (2: on the path F took, B's tests being F's); an undo gives a name
the value iteration j-1 left, which B's iteration j never reads (2) and iteration j-1's
forward body left in it; invariants and parameters hold their values during F; by 3
the adjoints B's body reads hold the values they would at B's start; the sums' adjoints
are the same at every iteration; contributions to adjoint arrays are sums, in any order.
Names B's body binds are dead after B (2), and F's locals get back the same values. So
every value the function returns is the same; what changes is the order in which
contributions are added into adjoint arrays (rounding). A backward branch left with only
comments once B moves gets `pass` (an `else`, nothing).

B's recomputations of F's values stay (`dx = _t2 - _t3` again after the forward `dx`):
leaving them out, since the names still hold those values, made ba's gradient slower
(1.12x -> 1.29x its primal per call, compiled): values kept live across the whole body
cost more than recomputing them from the arrays.
"""
from __future__ import annotations

import gast

from ..analysis.liveness import live_after, reads
from ..frontend.trees import stores_in
from ..syntax import assign, is_call, is_comment, is_name, walk
from .immediate_adjoints import adjoint_inputs
from .immediate_nests import drop_emptied, mentions_outside, nest_ok, nest_reads, nests
from .immediate_paths import bound_once, element_base as _base, reads_bound, recorded

_ADJ, _TAPE, _MADE = "_adj_", "_tape_", "_made_"
_PURE = {"range", "len", "abs", "min", "max", "float", "int", "bool", "linked", "tape_like",
         "trip_count", "record_at", "snapshot", "zeros_like", "seed_like", "unbroadcast"}
_PURE_METHODS = {"sum", "copy", "reshape", "dot", "mean", "max", "min", "prod", "ravel",
                 "flatten", "transpose", "astype", "any", "all"}


def immediate(rev) -> int:
    """Reverse each qualifying sum loop in place (module doc); how many."""
    made = 0
    for stmt, block in _candidates(rev.forward):
        mirror = _mirror(rev.backward, stmt, block, rev.forward)
        if mirror is not None and _fuse(rev, stmt, block, *mirror):
            made += 1
    for inner, outer, back, back_outer, before in list(nests(rev)):
        if _fuse(rev, inner, outer.body, back_outer.body, back, before, (outer, back_outer)):
            made += 1
            drop_emptied(rev, outer, back_outer, _only_tapes)
    return made


def _candidates(forward):
    """(loop, its block) for the counted loops at the top of the forward sweep or in a
    branch of an `if` there."""
    for stmt in list(forward):
        if isinstance(stmt, gast.For):
            yield stmt, forward
        elif isinstance(stmt, gast.If):
            for branch in (stmt.body, stmt.orelse):
                yield from ((s, branch) for s in list(branch) if isinstance(s, gast.For))


def _mirror(backward, loop, block, forward):
    """(backward block holding the loop reverse.py made of `loop`, that loop, the
    statements before it on its path) or None."""
    owner = next((s for s in forward if isinstance(s, gast.If)
                  and (block is s.body or block is s.orelse)), None)
    for k, stmt in enumerate(backward):
        if getattr(stmt, "srcgrad_reverses", None) is loop and owner is None:
            return backward, stmt, backward[:k]
        if owner is not None and isinstance(stmt, gast.If) \
                and gast.dump(stmt.test) == gast.dump(owner.test):
            branch = stmt.body if block is owner.body else stmt.orelse
            for j, inner in enumerate(branch):
                if getattr(inner, "srcgrad_reverses", None) is loop:
                    return branch, inner, backward[:k] + branch[:j]
    return None


def _fuse(rev, loop, block, back_block, back, before, nest=None) -> bool:
    """Move B's body into F's (module doc); `nest`: (O, P) when F is nested in a loop O
    whose mirror P holds B (immediate_nests.py)."""
    if not (isinstance(loop.iter, gast.Call) and isinstance(loop.iter.func, gast.Name)
            and loop.iter.func.id == "range" and not loop.orelse
            and isinstance(loop.target, gast.Name)):
        return False
    var = loop.target.id
    restored = set()
    kept, loads = _loads(back.body, var, restored)
    if kept is None:
        return False
    sums, local, branches, definite = _forward_names(loop.body, var)
    if sums is None or not set(loads) | restored <= local \
            or not recorded(loop.body, loads, restored, var) \
            or _slot_names(back.body) & set().union(*map(stores_in, kept)):
        return False
    if nest is not None and not nest_ok(nest[0], nest[1], loop, back, sums, _only_tapes):
        return False
    if not _backward_ok(kept, sums, local) or not reads_bound(kept, local, branches, definite):
        return False
    if not _calls_ok(_without(loop.body, None), local, var):
        return False
    inits, chain = adjoint_inputs(rev, kept, before, *((rev.forward, nest[0]) if nest else (
        block, loop)), sums)
    if inits is None:
        return False
    func = rev.function()
    bound = set().union(restored, *map(stores_in, kept))
    summed = {s.targets[0].id for s in inits}  # their contributions: the same sums
    live = live_after(func)[id(back)] if nest is None else nest_reads(func, nest[1], back)
    if bound & live - set(chain) - summed:
        return False
    tapes = {_TAPE + x for x in set(loads) | restored}
    body = _without(loop.body, tapes)
    made = [s for s in rev.forward + ([] if block is rev.forward else block)
            if _only_tapes(s, tapes)]  # `_tape_x = []`, `_made_x = False`
    if any(isinstance(n, gast.Name) and n.id in tapes for s in body + kept
           for n in walk(s)) or mentions_outside(rev, tapes, [loop, back] + made):
        return False
    loop.body = body + kept
    for stmt in made:
        (block if any(s is stmt for s in block) else rev.forward).remove(stmt)
    for stmt in inits:
        rev.backward.remove(stmt)
    at = next(k for k, s in enumerate(back_block) if s is back)
    note = at > 0 and is_comment(back_block[at - 1]) and (
        at + 1 == len(back_block) or is_comment(back_block[at + 1]))
    del back_block[at - note:at + 1]  # and its `# grad of:` line, left with nothing
    if back_block is not rev.backward and nest is None \
            and all(is_comment(s) for s in back_block):
        owner = next(s for s in rev.backward if isinstance(s, gast.If)
                     and (back_block is s.body or back_block is s.orelse))
        back_block[:] = [gast.Pass()] if back_block is owner.body else []
    rev.forward[0:0] = inits
    at = next(k for k, s in enumerate(block) if s is loop)
    block[at:at] = [gast.copy_location(assign(a, value), loop) for a, value in chain.items()]
    return True


def _loads(body, var, restored):
    """B's body without its tape loads `x = _tape_x[k]` and its undos
    `x = restore(_tape_x, x)` (in its `if`s too), and the names loaded; (None, None) if it
    reads a tape otherwise, pops, or reads a name after its undo (which gave it an earlier
    iteration's value). The names loaded map to their slots k (dumped); the undone ones
    are added to `restored`."""
    kept, loads = [], {}
    for stmt in body:
        if reads(stmt.test if isinstance(stmt, gast.If) else stmt, False) & restored:
            return None, None
        if _tape_read(stmt, var, lambda v: isinstance(v, gast.Subscript)
                      and isinstance(v.value, gast.Name)):
            x, slot = stmt.targets[0].id, gast.dump(stmt.value.slice)
            if loads.setdefault(x, slot) != slot:
                return None, None  # one tape read at two slots
            continue
        if _tape_read(stmt, var, lambda v: is_call(v, "restore") and len(v.args) == 2
                      and isinstance(v.args[0], gast.Name)
                      and is_name(v.args[1], stmt.targets[0].id)):
            restored.add(stmt.targets[0].id)
            continue
        if isinstance(stmt, gast.If):
            paths = set(restored), set(restored)  # undone on the way through each branch
            (body_kept, body_loads), (else_kept, else_loads) = (
                _loads(stmt.body, var, paths[0]), _loads(stmt.orelse, var, paths[1]))
            restored |= paths[0] | paths[1]
            if body_kept is None or else_kept is None \
                    or any(n.startswith(_TAPE) for n in reads(stmt.test, False)):
                return None, None
            for x, slot in [*body_loads.items(), *else_loads.items()]:
                if loads.setdefault(x, slot) != slot:
                    return None, None
            kept.append(gast.copy_location(gast.If(
                test=stmt.test, body=body_kept or [gast.Pass()], orelse=else_kept), stmt))
            continue
        for n in walk(stmt):
            if isinstance(n, gast.Name) and n.id.startswith(_TAPE):
                return None, None
            if isinstance(n, gast.Call) and (
                    isinstance(n.func, gast.Attribute) and n.func.attr == "pop"
                    or isinstance(n.func, gast.Name) and n.func.id == "restore"):
                return None, None
        kept.append(stmt)
    return kept, loads


def _slot_names(body) -> set:
    """Names the slots of B's tape loads read (`_tape_x[i * _s4 + j]`)."""
    return set().union(*(reads(n.slice, False) for s in body for n in walk(s)
                         if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name)
                         and n.value.id.startswith(_TAPE)))


def _tape_read(stmt, var, shape) -> bool:
    """`x = <value of the tape _tape_x>` with the value of the given `shape`."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and shape(stmt.value)):
        return False
    tape = stmt.value.value if isinstance(stmt.value, gast.Subscript) else stmt.value.args[0]
    return tape.id == _TAPE + stmt.targets[0].id


def _without(body, tapes):
    """F's body without the statements that make and fill `tapes` (in its `if`s too)."""
    kept = []
    for stmt in body:
        if _only_tapes(stmt, tapes):
            continue
        if isinstance(stmt, gast.If) and not _only_tapes(stmt, None):
            stmt = gast.copy_location(gast.If(test=stmt.test, body=_without(
                stmt.body, tapes) or [gast.Pass()], orelse=_without(stmt.orelse, tapes)), stmt)
        kept.append(stmt)
    return kept


def _forward_names(body, var):
    """(sums, locals, {test: bound after each branch}, locals bound on every path) of F's
    body (module doc, 1), or Nones."""
    stores, loads = {}, {}
    for k, stmt in enumerate(body):
        for n in walk(stmt):
            if isinstance(n, (gast.For, gast.While, gast.Break, gast.Continue, gast.Return)):
                return None, None, None, None
            if isinstance(n, gast.Name):
                (stores if isinstance(n.ctx, gast.Store) else loads).setdefault(
                    n.id, set()).add(k)
    sums = {total for stmt in body if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)
            for total in [_sum_of(stmt, body, stores, loads)] if total is not None}
    local, branches, definite = bound_once(body, var, sums, _skipped)
    if local is None or sums & local:
        return None, None, None, None
    return sums, local, branches, definite


def _skipped(stmt) -> bool:
    return _only_tapes(stmt, None) or (
        isinstance(stmt, gast.Expr) and is_call(stmt.value, "record_at"))


def _sum_of(stmt, body, stores, loads):
    """s when `stmt` is `s = s + e` or `s = e + s` (e not reading s), or `s = t` after
    `t = s + e` with t read only there; s bound and read nowhere else in the body."""
    target, value = stmt.targets[0].id, stmt.value
    k = next(j for j, s in enumerate(body) if s is stmt)
    if stores.get(target) != {k}:
        return None
    if isinstance(value, gast.Name):
        at = stores.get(value.id, set())
        if len(at) != 1 or loads.get(value.id) != {k}:
            return None
        made = body[next(iter(at))]
        if not (isinstance(made, gast.Assign) and len(made.targets) == 1
                and isinstance(made.targets[0], gast.Name)):
            return None
        value, k = made.value, next(iter(at))
    if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)):
        return None
    for mine, other in ((value.left, value.right), (value.right, value.left)):
        if is_name(mine, target) and target not in reads(other, False) \
                and loads.get(target) == {k}:
            return target
    return None


def _only_tapes(stmt, tapes) -> bool:
    """`_tape_x = ...`, `_made_x = ...`, `if ...:` of those, `record_at(_tape_x, ...)` or
    `_tape_x.append(...)` (of `tapes`, or of any tape when None)."""
    def tape(n):
        if not isinstance(n, gast.Name):
            return False
        made = _TAPE + n.id[len(_MADE):] if n.id.startswith(_MADE) else n.id
        return made.startswith(_TAPE) and (tapes is None or made in tapes)
    if isinstance(stmt, gast.Assign):
        return len(stmt.targets) == 1 and tape(stmt.targets[0])
    if isinstance(stmt, gast.If):
        inner = [s for s in stmt.body if not is_comment(s)]
        return bool(inner) and not stmt.orelse and all(_only_tapes(s, tapes) for s in inner)
    if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
        return False
    value = stmt.value
    if isinstance(value.func, gast.Attribute) and value.func.attr == "append":
        return tape(value.func.value)
    return is_call(value, "record_at") and bool(value.args) and tape(value.args[0])


def _backward_ok(kept, sums, local) -> bool:
    """B's body binds only adjoints and locals, writes elements only of adjoints, reads
    the sums only for their shapes."""
    for stmt in kept:
        if sums & reads(stmt, True):
            return False
        for n in walk(stmt):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) \
                    and not (n.id.startswith(_ADJ) or n.id in local):
                return False
            if isinstance(n, (gast.Assign, gast.AugAssign)):
                for t in getattr(n, "targets", None) or [n.target]:
                    if isinstance(t, gast.Subscript) and not _base(t).startswith(_ADJ):
                        return False
            if isinstance(n, (gast.For, gast.While)) and n.orelse:
                return False
    return True


def _calls_ok(body, local, var) -> bool:
    """Calls other than of pure builtins and helpers take only locals, the index and
    constants; methods are pure ones, or called on locals."""
    for n in (n for s in body for n in walk(s)):
        if not isinstance(n, gast.Call):
            continue
        if isinstance(n.func, gast.Name) and n.func.id not in _PURE:
            for arg in n.args + [k.value for k in n.keywords]:
                if not (isinstance(arg, gast.Constant) or isinstance(arg, gast.Name)
                        and (arg.id in local or arg.id == var)):
                    return False
        if isinstance(n.func, gast.Attribute) and n.func.attr not in _PURE_METHODS:
            receiver = n.func.value
            if not (isinstance(receiver, gast.Name) and (receiver.id in local or receiver.id in
                                                          ("np", "math"))):
                return False
    return True

