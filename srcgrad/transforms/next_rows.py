"""A carried array recorded at the end of each step and then replaced by the array the
step made: that array is made in the tape's next row instead.

A time-stepping loop (`y = y + h * f(y)`, ode's RK4 step, a stencil) records the state
it starts each step with, for the backward sweep, and ends the step by rebinding it to
a new array:

    for i in range(E):
        ...                       # reads V
        A = np.empty(N)           # filled element by element from V and the stages
        ...
        record_at(T, i, V)
        V = A

`next_rows(func, kinds, roots)` makes A in T's row i + 1, which is what the record of the
next step would copy there, and records only the first state: one copy of the state per
step fewer (ode: 3% of its gradient).

    for i in range(E):
        ...
        if i + 1 < T.shape[0]:
            A = T[i + 1]
            same_shape(A, N)
        else:
            A = np.empty(N)
        ...
        if i == 0:
            record_at(T, i, V)
        V = A

Soundness rule. L is a loop `for i in range(E)` (or `range(0, E)`) with no `else` and no
`break`, `continue` or `return` at any depth, i not rebound in it; T a float array of
rank r + 1 bound once in the function, by `tape_array(...)` or `tape_like(...)` in a
statement of the function's body before the one holding L; at the top level of L's
body, `A = np.empty(N)` (A a float array of rank r, N a name), later
`record_at(T, i, V)` and right after it `V = A`; V and A bound nowhere else in L; and
- in L, no name that may share T's memory (analysis/roots.py, unknown memory included)
  is mentioned but in that record, and every write of memory that V's or A's roots
  reach is a store into an element or slice of the name V or of the name A (other
  names may read that memory: `prev = V`);
- no statement after L writes memory that T's, V's or A's roots reach, none before L
  T's (V's first state may be filled before L: step 0 records it as before), and none
  calls what srcgrad does not know.
Then the rewrite only changes where the state of each step i >= 1 lives: the array A
that step i - 1 makes is row i of T (i < T.shape[0] wherever the original records row
i), and every name that held that array holds the row. The array is written only
through V and A, which name it from step i - 1's `A = ...` to step i's record, so it
takes the same writes and holds at step i's record exactly the values the original
copied into row i there; after that record nothing writes it (in L only through V and
A, which name later arrays by then; after L not at all), so the row, and every name
reading it, keeps those values, as the original's row and array did. Row 0 is recorded
as before. Nothing else writes T, and rows are read only after L (the backward sweep).
The last step (no row i + 1) makes A as before, so V after L is an array of its own, as
before. same_shape fails where A's shape is not the rows' (the original's record would
have raised), and the generated function runs.
Guarantee: every value read is the same; V is a view of T's rows during L.
"""
from __future__ import annotations

import gast

from ..analysis import kinds as K
from ..analysis.extents import int_value, is_range
from ..analysis.roots import UNKNOWN, roots as roots_of
from ..syntax import assign, binop, call, const, is_call, name, walk
from .tape_rows import _bindings, _makes, _shapes_fit, _writes


def next_rows(func: gast.FunctionDef, kinds: dict, roots: dict) -> int:
    """Make carried arrays in their tapes' next rows (module doc); how many."""
    writes = _writes(func, kinds, roots)
    bound = _bindings(func)
    done = 0
    for top, loop in enumerate(func.body):
        if not _counted_from_zero(loop):
            continue
        found = _carried(loop, top, func, kinds, roots, writes, bound)
        if found is None:
            continue
        j, r, array, shape, tape, state = found
        counter = loop.target.id
        extent = gast.Subscript(value=gast.Attribute(value=name(tape), attr="shape",
                                                     ctx=gast.Load()),
                                slice=const(0), ctx=gast.Load())
        following = binop(name(counter), gast.Add(), const(1))
        row = gast.Subscript(value=name(tape), slice=following, ctx=gast.Load())
        made = loop.body[j]
        loop.body[j] = gast.copy_location(gast.If(
            test=gast.Compare(left=binop(name(counter), gast.Add(), const(1)),
                              ops=[gast.Lt()], comparators=[extent]),
            body=[assign(array, row),
                  gast.Expr(value=call("same_shape", name(array), name(shape)))],
            orelse=[made]), made)
        record = loop.body[r]
        loop.body[r] = gast.copy_location(gast.If(
            test=gast.Compare(left=name(counter), ops=[gast.Eq()], comparators=[const(0)]),
            body=[record], orelse=[]), record)
        done += 1
    return done


def _counted_from_zero(loop) -> bool:
    if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name)
            and not loop.orelse and is_range(loop.iter)):
        return False
    args = loop.iter.args
    return len(args) == 1 or (len(args) == 2 and int_value(args[0]) == 0)


def _carried(loop, top, func, kinds, roots, writes, bound):
    """(j, r, A, N, T, V) of the module doc's shape in `loop`, or None."""
    counter = loop.target.id
    for node in walk(loop):
        if isinstance(node, (gast.Break, gast.Continue, gast.Return)):
            return None
        if isinstance(node, gast.Name) and node.id == counter \
                and isinstance(node.ctx, gast.Store) and node is not loop.target:
            return None
    body = loop.body
    for r in range(len(body) - 1):
        found = _record(body[r], counter)
        if found is None:
            continue
        tape, state = found
        rebind = body[r + 1]
        if not (isinstance(rebind, gast.Assign) and len(rebind.targets) == 1
                and isinstance(rebind.targets[0], gast.Name)
                and rebind.targets[0].id == state and isinstance(rebind.value, gast.Name)):
            continue
        array = rebind.value.id
        j = next((j for j in range(r - 1, -1, -1)
                  if isinstance(body[j], gast.Assign) and len(body[j].targets) == 1
                  and isinstance(body[j].targets[0], gast.Name)
                  and body[j].targets[0].id == array), None)
        if j is None or not _makes(body[j], array):
            continue
        if _sound(loop, top, j, r, array, tape, state, func, kinds, roots, writes, bound):
            return j, r, array, body[j].value.args[0].id, tape, state
    return None


def _record(stmt, counter):
    """(T, V) of `record_at(T, counter, V)`, else None."""
    if not (isinstance(stmt, gast.Expr) and is_call(stmt.value, "record_at")
            and len(stmt.value.args) == 3 and not stmt.value.keywords):
        return None
    tape, index, state = stmt.value.args
    if isinstance(tape, gast.Name) and isinstance(state, gast.Name) \
            and isinstance(index, gast.Name) and index.id == counter:
        return tape.id, state.id
    return None


def _sound(loop, top, j, r, array, tape, state, func, kinds, roots, writes, bound) -> bool:
    if array == state or not _shapes_fit(kinds.get(array), kinds.get(tape)) \
            or not _shapes_fit(kinds.get(state), kinds.get(tape)):
        return False
    where = bound.get(tape)
    if where is None or where >= top or not _makes_tape(func.body[where]):
        return False
    tape_roots = roots.get(tape)
    carried = (roots.get(state) or set()) | (roots.get(array) or set())
    if not tape_roots or not roots.get(state) or not roots.get(array) \
            or UNKNOWN in tape_roots | carried:
        return False
    for node in walk(loop):  # V and A bound once each in L
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) \
                and node.id in (state, array) \
                and node is not loop.body[j].targets[0] \
                and node is not loop.body[r + 1].targets[0]:
            return False
    # Who may share memory in L: roots of the function up to L (flow-insensitive over the
    # whole function, the backward sweep's `V = T[i]` would make V share T's memory), of
    # the names that can hold memory (shapes and numbers cannot).
    prefix = gast.FunctionDef(name=func.name, args=func.args, body=func.body[:top + 1],
                              decorator_list=[], returns=None, type_comment=None,
                              type_params=[])
    before = roots_of(prefix, kinds)
    held = {n: rs for n, rs in before.items() if K.holds_memory(kinds.get(n))}
    tape_before = before.get(tape) or {UNKNOWN}
    carried_before = (before.get(state) or {UNKNOWN}) | (before.get(array) or {UNKNOWN})
    if UNKNOWN in tape_before | carried_before:
        return False
    sharing_tape = {n for n, rs in held.items() if rs & tape_before or UNKNOWN in rs}
    record = loop.body[r]
    for stmt in loop.body:
        if stmt is not record and any(isinstance(n, gast.Name) and n.id in sharing_tape
                                      for n in walk(stmt)):
            return False
    inside = {id(n) for n in walk(loop)}
    for node, access in _writes(prefix, kinds, before):
        if id(node) in inside and access & carried_before and not _through(node, state, array):
            return False
    after = {id(n) for stmt in func.body[top + 1:] for n in walk(stmt)}
    for node, access in writes:
        if UNKNOWN in access or id(node) in after and access & (tape_roots | carried):
            return False
    earlier = {id(n) for stmt in func.body[:top] for n in walk(stmt)}
    return not any(id(node) in earlier and access & tape_before
                   for node, access in _writes(prefix, kinds, before))


def _through(stmt, state, array) -> bool:
    """Whether `stmt` writes only an element or slice of the name V or A itself."""
    if not isinstance(stmt, (gast.Assign, gast.AugAssign)):
        return False
    targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
    return all(isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name)
               and t.value.id in (state, array) for t in targets)


def _makes_tape(stmt) -> bool:
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
        and (is_call(stmt.value, "tape_array") or is_call(stmt.value, "tape_like"))
