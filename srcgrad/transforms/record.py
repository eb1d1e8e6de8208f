"""Pass 9, record: record in the forward sweep exactly what the backward sweep reads.

The reverse pass undoes every assignment to a reassigned name, every write
into an array and every `append`. A value needs recording only when the
backward sweep reads the name at a point where one of its undo steps may
already have run (a read of the final value needs nothing). Kept undo steps
become recordings in the forward sweep:

- A name bound before each of its reassignments (a parameter, or a name
  first assigned at the top of the function: loop-carried values) records,
  per assignment site, the value about to be overwritten, and the backward
  sweep takes it back right after undoing that site. Inside a `for` loop
  without `break` the trip count is known on entry, so the tape is an array
  preallocated by trip count (the loop is recast):
      _tape_y = tape_array(y, trip_count(0, n, 1))    before the loop
      record_at(_tape_y, i, y);  y = ...               forward
      y = _tape_y[i]                                   backward
  This holds for a chain of nested counted loops whose inner trip counts stay
  the same in every outer iteration, indexed by the flattened iteration number
  `i * k + j` (iterations.py states the rule; the tape is then made at the
  first execution when an inner bound is a name bound inside the outer loop);
  elsewhere it is a stack: `_tape_y.append(y)` ... `y = _tape_y.pop()`.
- Any other name (a temporary assigned afresh in each iteration) is pushed
  after each assignment, `_tape_t.append(t)`, and `t = restore(_tape_t, t)`
  pops it and takes back the previous one. A temporary assigned once per
  iteration of such a chain of `for` loops goes into an array
  made at the first iteration (its type is known only then) and indexed by
  iteration: `record_at(_tape_t, i, t)` (which checks the shape stays the
  same); backward `t = restore_at(_tape_t, i, t)`, or `t = _tape_t[i]` at the start
  of the backward iteration where that is the same (`_load_at_start`). One assigned
  in a branch of such a loop body goes into an array too where the mirrored branch
  can load it at its start (`_record_in_branch` states when). The array tape copies, so
  an array written into after its assignment (`lap = np.zeros(n)`, then
  `lap[1:] = ...`) is recorded after the last statement of the block that
  writes into it before it is bound again: the backward sweep restores that
  final value and then undoes the writes one by one. A stack of values
  pushed after assignment holds each array itself, so writes into it reach
  the recorded value (normalize binds a copy wherever another name of the
  same array is written into: an inlined parameter, `v = a if c else b`);
  a stack of values about to be overwritten holds copies in a function that
  writes into arrays. A temporary `_t = a[i]`
  read from an array nothing writes into is read again instead (cheap).
- A write `y[i] = ...` pushes the element it overwrites on the site's tape:
  `_tape_y_at1.append(snapshot(y[i]))`; `hs.append(v)` needs nothing: the
  list itself holds the values.
- Cheap temporaries (`_t3 = i + 1`) are recomputed where the backward sweep
  reads them instead of being recorded (`rematerialize`).

A backward read that only needs a value's type and shape (`zeros_like(v)`,
`seed_like(v)`, the shape argument of `unbroadcast` and `fill_like`) does not count.
"""
from __future__ import annotations

import gast

import copy
import itertools

from ..analysis.shape_classes import shape_varying
from ..frontend.trees import reads, stores_in
from .optimize import blocks, drop_empty, written
from ..syntax import assign, call, const, insert_before, method, name, named, remove, walk
from .inverses import counters, dead_writes_back
from .iterations import in_branches, iteration, mirrored_branch, places
from .recompute import changes, is_restore, rematerialize, value_reads
from .reverse import Reversed


def _is_list_undo(stmt) -> bool:
    return (isinstance(stmt, gast.Expr) and written(stmt) is not None
            and not written(stmt).startswith("_adj_"))


def _undone(stmt) -> set[str]:
    """Names an outermost backward statement undoes (anywhere inside it)."""
    return {written(s) for b in blocks([stmt]) for s in b if is_restore(s) or _is_list_undo(s)}


def _read_after_undo(backward: list, varying) -> set[str]:
    """Names the backward sweep reads at a point where an undo step may already have run.

    A read before any undo of a name sees the forward sweep's final value,
    which the name still holds: that read needs no tape. The index of a write
    back (`y[m] = _tape_y_at1.pop()`) is a read: it must select what the
    forward write selected (a mask `m = y < 0.25` recomputed in each iteration).
    """
    undone, needed = set(), set()
    for stmt in backward:
        reads = {n for b in blocks([stmt]) for s in b
                 if not (is_restore(s) or _is_list_undo(s)) for n in value_reads(s, varying)}
        reads |= {n.id for b in blocks([stmt]) for s in b  # a write back's index: y[m] = ...
                  if is_restore(s) and isinstance(s.targets[0], gast.Subscript)
                  for n in walk(s.targets[0].slice) if isinstance(n, gast.Name)}
        inside = _undone(stmt)
        needed |= reads & (undone | inside)
        undone |= inside
    return needed


def record(rev: Reversed) -> Reversed:
    varying = shape_varying(rev.forward, rev.norm.inputs, rev.integers)
    rematerialize(rev, varying)
    while True:  # dropping undo steps can empty a branch whose test then needs no undo
        before = sum(len(b) for b in blocks(rev.backward))
        needed = _read_after_undo(rev.backward, varying)
        dead = {id(s) for s in dead_writes_back(rev.backward)}
        for block in blocks(rev.backward):
            block[:] = [s for s in block if id(s) not in dead and not (
                (is_restore(s) or _is_list_undo(s)) and written(s) not in needed)]
        _drop_final_restores(rev.backward)
        rev.backward = drop_empty(rev.backward)
        if sum(len(b) for b in blocks(rev.backward)) == before:  # each round only removes
            break
    restores = [s for b in blocks(rev.backward) for s in b if is_restore(s)]
    names = {written(s) for s in restores if isinstance(s.targets[0], gast.Name)}
    sites = {s.value.func.value.id for s in restores if isinstance(s.targets[0], gast.Subscript)}
    inverted = _invert_counters(rev, names, restores)
    integers = {written(s) for s in inverted.values()}
    before = _record_before(rev, [s for s in restores if isinstance(s.targets[0], gast.Name)
                                  and id(s) not in inverted], integers, varying)
    names -= {written(s) for s in before} | integers
    names -= _record_by_iteration(rev, names - varying, restores)  # a stack takes any shape
    _instrument(rev.forward, names, {k: t for k, t in rev.write_tapes.items() if t in sites})
    inputs = [name_ for name_ in rev.norm.inputs if name_ in names]
    tapes = sorted({n.id for b in itertools.chain(blocks(rev.backward), blocks(rev.forward))
                    for s in b for n in walk(s)
                    if isinstance(n, gast.Name) and n.id.startswith("_tape_")})
    preallocated = {s.targets[0].id for b in blocks(rev.forward) for s in b
                    if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
                    and s.targets[0].id.startswith("_tape_")}
    header = [assign(t, gast.List(elts=[], ctx=gast.Load())) for t in tapes
              if t not in preallocated]
    header += [gast.Expr(value=method(f"_tape_{v}", "append", name(v))) for v in inputs]
    rev.forward = header + rev.forward
    _keep_output_only_if_restored(rev)
    return rev


def _invert_counters(rev: Reversed, names: set[str], restores: list) -> dict:
    """Undo the steps of integer counters by arithmetic (inverses.py): id -> undo replaced."""
    found = counters(rev.forward, rev.norm.inputs, names)
    inverted = {}
    for undo in restores:
        site = rev.restore_sites.get(id(undo))
        inverse = found.get(written(undo), {}).get(id(site))
        if inverse is not None:
            undo.value = inverse
            inverted[id(undo)] = undo
    return inverted


def _keep_output_only_if_restored(rev: Reversed) -> None:
    """`_out = v` saves the result from the backward sweep's undo steps; drop it if none."""
    result = rev.norm.result
    if not (isinstance(rev.output, gast.Name) and rev.output.id == "_out"):
        return
    if any(written(s) == result.id for b in blocks(rev.backward) for s in b):
        return  # the backward sweep assigns it
    rev.forward = [s for s in rev.forward if not (
        isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
        and s.targets[0].id == "_out")]
    rev.output = result


def _defined_first(forward: list, inputs) -> dict:
    """Names certainly bound before each of their reassignments -> their first binding.

    Parameters (first binding: None), and names whose first assignment is a
    plain statement at the top of the function body, before any loop or branch
    that assigns them.
    """
    first = {name_: None for name_ in inputs}
    seen = set(inputs)
    for stmt in forward:
        stored = {n.id for n in walk(stmt) if isinstance(n, gast.Name)
                  and isinstance(n.ctx, gast.Store)}
        for var in stored - seen:
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                first[var] = stmt
        seen |= stored
    return first


def _record_before(rev: Reversed, restores: list, integers: set[str], varying) -> list:
    """Tape per assignment site, recording the value it overwrites (see module doc).

    For a name certainly bound before each reassignment, each site records
    the old value just before assigning, and the backward sweep takes it back
    right after undoing that site: `v = _tape_v.pop()`, or `v = _tape_v[i]`
    from an array preallocated by trip count when the site runs once per
    iteration of a chain of counted `for` loops (iterations.py; the loop is recast).
    The first binding needs no undo: nothing before it reads the name. An
    array tape of `integers` (counters, inverses.py) or of a name every assignment gives an
    int (activity.integer_names: `j = (j + 2) % n`) holds ints (`tape_like`); a name whose
    shape may vary (analysis/shape_classes.py) goes on a stack. Returns the restores converted.
    """
    first = _defined_first(rev.forward, rev.norm.inputs)
    where = places(rev.forward)
    held = _held(rev.forward)
    by_var: dict[str, list] = {}
    for restore in restores:
        if written(restore) in first:
            by_var.setdefault(written(restore), []).append(restore)
    converted = []
    for var, undos in by_var.items():
        live = [u for u in undos if rev.restore_sites[id(u)] is not first[var]]
        for k, undo in enumerate(live, 1):
            site = rev.restore_sites[id(undo)]
            tape = f"_tape_{var}" if len(live) == 1 else f"_tape_{var}__{k}"
            block, chain = where[id(site)]
            counted = iteration(block, chain) if var not in varying else None
            if counted is not None:
                index, size, ahead = counted
                undo.value = gast.Subscript(value=name(tape), slice=index, ctx=gast.Load())
                exact = var in integers or var in rev.integers  # an int stays an int
                make = call("tape_like" if exact else "tape_array", name(var), size)
                if ahead:
                    insert_before(rev.forward, chain[0], assign(tape, make))
                else:
                    insert_before(block, site, _at_first(index, assign(tape, make)))
                record = call("record_at", name(tape), copy.deepcopy(index), name(var))
                insert_before(block, site, gast.Expr(value=record))
            else:
                undo.value = method(tape, "pop")
                insert_before(block, site, gast.Expr(value=method(tape, "append", held(var))))
        for undo in undos:
            if rev.restore_sites[id(undo)] is first[var]:
                remove(rev.backward, undo)
        converted += undos
    return converted


def _record_by_iteration(rev: Reversed, names: set[str], restores: list) -> set[str]:
    """Temporaries assigned once per iteration of a chain of counted `for` loops (iterations.py):
    recorded into an array indexed by iteration, made at the first iteration (module doc).
    Returns the names handled."""
    where, branched = places(rev.forward), in_branches(rev.forward)
    sites: dict[str, list] = {}
    for block in blocks(rev.forward):
        for stmt in block:
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                sites.setdefault(stmt.targets[0].id, []).append(stmt)
    handled = set()
    for var in sorted(names):
        if len(sites.get(var, [])) != 1:
            continue
        site = sites[var][0]
        block, chain = where[id(site)]
        counted = iteration(block, chain)
        if counted is None:
            if id(site) in branched and _record_in_branch(rev, var, site, branched[id(site)],
                                                          restores):
                handled.add(var)
            continue
        index, size, _ = counted
        tape = f"_tape_{var}"
        make = _at_first(index, assign(tape, call("tape_like", name(var), size)))
        record = gast.Expr(value=call("record_at", name(tape), copy.deepcopy(index), name(var)))
        at = block.index(site)
        last = _last_change(block, at, var)
        block.insert(last + 1, gast.copy_location(record, block[last]))
        block.insert(at + 1, gast.copy_location(make, site))
        for undo in restores:
            if written(undo) == var and isinstance(undo.targets[0], gast.Name):
                undo.value = call("restore_at", name(tape), copy.deepcopy(index), name(var))
                _load_at_start(rev.backward, undo, var, tape, index)
        handled.add(var)
    return handled


def _record_in_branch(rev: Reversed, var: str, site, place, restores: list) -> bool:
    """A temporary assigned in a branch of a counted loop's body (iterations.in_branches)
    into slot k of an array (made at the first execution, `_made_t`), loaded where the
    mirrored backward branch starts: the same value for each read there when the undo is
    `t`'s only binding in the backward loop's body and every other mention of `t` there
    precedes it in that block (design.md, "Tapes indexed by iteration"); whether it was."""
    body, chain = place
    counted = iteration(body, chain)
    undos = [u for u in restores if written(u) == var and isinstance(u.targets[0], gast.Name)]
    found = mirrored_branch(rev.backward, undos[0]) if len(undos) == 1 else None
    if counted is None or found is None:
        return False
    index, size, _ = counted
    loop_body, block = found
    if _mentions(loop_body, var) != _mentions(block[:block.index(undos[0])], var) + 2 or \
            _index_rebound(loop_body, index, var):
        return False  # the undo itself mentions var twice
    tape, made = f"_tape_{var}", f"_made_{var}"
    forward_block = next(b for b in blocks(rev.forward) if any(s is site for s in b))
    where = next(k for k, s in enumerate(forward_block) if s is site)
    last = _last_change(forward_block, where, var)
    record = gast.Expr(value=call("record_at", name(tape), copy.deepcopy(index), name(var)))
    forward_block.insert(last + 1, gast.copy_location(record, forward_block[last]))
    make = gast.If(test=gast.UnaryOp(op=gast.Not(), operand=name(made)),
                   body=[assign(tape, call("tape_like", name(var), size)),
                         assign(made, const(True))], orelse=[])
    forward_block.insert(where + 1, gast.copy_location(make, site))
    insert_before(rev.forward, chain[0], assign(made, const(False)))
    _load_first(block, undos[0], var, tape, index)
    return True


def _load_at_start(backward: list, undo, var: str, tape: str, index) -> None:
    """`var = _tape_var[index]` at the start of the backward iteration instead of
    `var = restore_at(_tape_var, index, var)` at the undo (no branch on the index, no
    value carried from one backward iteration to the next).

    At the start of backward iteration i, `var` holds iteration i's value under both:
    the undo of iteration i + 1 took it from the tape, and before the first one it is
    the forward sweep's last value, which the tape holds too. So the load is the same
    value where the undo was the only binding of `var` in the loop's body, nothing in
    the body after the undo mentions `var` (it would read iteration i - 1's value), and
    nothing in the body binds the index's names. After the loop both leave iteration
    0's value (restore_at keeps `var` at index 0)."""
    body = next((b for stmt in (s for b in blocks(backward) for s in b)
                 if isinstance(stmt, gast.For) for b in [stmt.body] if undo in b), None)
    if body is None:
        return
    binds = sum(1 for s in body for n in walk(s) if isinstance(n, gast.Name)
                and isinstance(n.ctx, gast.Store) and n.id == var)
    at = next(k for k, s in enumerate(body) if s is undo)
    if binds != 1 or _mentions(body[at + 1:], var) or _index_rebound(body, index, var):
        return
    _load_first(body, undo, var, tape, index)


def _mentions(stmts: list, var: str) -> int:
    return sum(len(named(s, var)) for s in stmts)


def _index_rebound(body: list, index, var: str) -> bool:
    """Whether `body` binds a name (other than `var`) that the tape index reads."""
    return bool((set().union(*map(stores_in, body)) - {var}) & reads(index))


def _load_first(block: list, undo, var: str, tape: str, index) -> None:
    """Drop `undo` from `block` and start the block with `var = tape[index]` instead."""
    del block[next(k for k, s in enumerate(block) if s is undo)]
    load = assign(var, gast.Subscript(value=name(tape), slice=copy.deepcopy(index),
                                      ctx=gast.Load()))
    block.insert(0, gast.copy_location(load, undo))


def _at_first(index, stmt):
    """`if index == 0: stmt`: a tape made at the first execution, when its type is known."""
    test = gast.Compare(left=copy.deepcopy(index), ops=[gast.Eq()], comparators=[const(0)])
    return gast.If(test=test, body=[stmt], orelse=[])


def _drop_final_restores(backward: list) -> None:
    """Undo steps at the end of the backward sweep that nothing reads afterwards."""
    later: set[str] = set()
    for k in range(len(backward) - 1, -1, -1):
        stmt = backward[k]
        if (is_restore(stmt) or _is_list_undo(stmt)) and written(stmt) not in later:
            del backward[k]
            continue
        later |= {n.id for n in walk(stmt) if isinstance(n, gast.Name)}


def _instrument(forward: list, names: set[str], sites: dict[int, str]) -> None:
    for block in list(blocks(forward)):
        k = 0
        while k < len(block):
            stmt = block[k]
            target = stmt.targets[0] if isinstance(stmt, gast.Assign) else None
            if isinstance(target, gast.Name) and target.id in names:
                push = method(f"_tape_{target.id}", "append", name(target.id))
                last = _last_change(block, k, target.id)
                block.insert(last + 1, gast.copy_location(gast.Expr(value=push), block[last]))
            elif isinstance(target, gast.Subscript) and id(stmt) in sites:
                old = gast.Subscript(value=name(target.value.id), slice=target.slice,
                                     ctx=gast.Load())
                push = method(sites[id(stmt)], "append", call("snapshot", old))
                block.insert(k, gast.copy_location(gast.Expr(value=push), stmt))
                k += 1
            k += 1


def _last_change(block: list, at: int, var: str) -> int:
    """The last statement of `block` after `block[at]` (which binds `var`) that writes into
    or appends to `var` before anything binds it again; `at` if none."""
    last = at
    for j in range(at + 1, len(block)):
        if any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id == var
               for n in walk(block[j])):
            break
        if changes(block[j], {var}):
            last = j
    return last


def _held(forward: list):
    """What a stack tape of values about to be overwritten holds: a copy (`snapshot(v)`) if
    the function writes into any array (a later write through another name of the same
    array would change a value held by reference), else the value itself."""
    writes = any(isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript)
                 for b in blocks(forward) for s in b)
    return (lambda var: call("snapshot", name(var))) if writes else name
