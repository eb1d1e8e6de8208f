"""The generated code of a checkpointed loop (checkpoint.py): two drivers and the calls.

- `f__loopK_forward(state..., invariants..., start, stop, stride)` runs the loop as
  written, calling `f__loopK_step`, and keeps the state before the steps its plan picks
  (runtime/checkpoints.py: revolve when the trip count is known, online otherwise). It
  returns the state after the loop, the plan and a tuple of one snapshot store per
  state name.
- `f__loopK_backward(forward's tuple, its stores, invariants..., start, stride,
  _adj_<v>...)` follows the plan: advance without recording, keep a snapshot, restore
  one, or record one step and reverse it at once (`f__loopK_step_vjp`). It returns the
  state before the loop, the cotangents of the differentiated state before the loop, and
  those of the differentiated invariants summed over the steps.

In the gradient, the loop becomes `_cpK = f__loopK_forward(...)`, the state names read
from it and `_snapK`, its snapshot stores (what the tape report counts); the backward
sweep calls `f__loopK_backward`, puts the state back as it was before the loop (what the
backward code of the statements before it reads) and takes the cotangents. Snapshot
stores of numbers hold float64 unless the name certainly holds an int (a counter keeps
its type); an array's keep its dtype; a list's keep its length.
"""
from __future__ import annotations

import copy

import os

import gast

from ..runtime.checkpoints import ADVANCE, KEEP, RESTORE, STEP
from ..syntax import assign, call, comment, line_comment, name
from .checkpoint import Checkpoint
from .contributions import adj

_ACTIONS = ("# advance without recording", "# keep the state in a snapshot",
            "# restore a snapshot", "# record one step and reverse it at once")


def drivers(plan: Checkpoint, parsed, integers) -> list[gast.FunctionDef]:
    """The two drivers, their comments naming the user's loop (`parsed` locates it)."""
    user_loop = getattr(plan.loop, "srcgrad_user_loop", plan.loop)
    line = str(line_comment(parsed, user_loop).value.value)  # `for ...:   (file.py:12)`
    loc = parsed.loc(user_loop)
    where = f"{os.path.basename(loc.filename)}:{loc.lineno}"
    return [_parse(_forward_source(plan, line, where, integers)),
            _parse(_backward_source(plan, line))]


def forward_statements(plan: Checkpoint) -> list:
    """`_cpK = f__loopK_forward(...)` and the state names read from it."""
    held = f"_cp{plan.number}"
    args = [name(v) for v in plan.state + plan.invariants] + _bounds(plan, 3)
    out = [gast.copy_location(assign(held, call(f"{plan.base}_forward", *args)), plan.loop)]
    for j, v in enumerate(plan.state):
        out.append(gast.copy_location(assign(v, _item(held, j)), plan.loop))
    snaps = held.replace("_cp", "_snap")  # the tape report counts what `_snap...` holds
    out.append(gast.copy_location(assign(snaps, _item(held, len(plan.state) + 1)), plan.loop))
    return out


def backward_statements(plan: Checkpoint) -> list:
    """The backward sweep's call of `f__loopK_backward`, the state before the loop put back,
    the state's cotangents set and the invariants' accumulated (`add_cotangents`: a list's
    item by item)."""
    k = plan.number
    held, got = f"_cp{k}", f"_cpg{k}"
    args = ([name(held), name(f"_snap{k}")] + [name(v) for v in plan.invariants]
            + _bounds(plan, 2) + [name(adj(v)) for v in plan.active_state]
            + [name(adj(v)) for v in dict.fromkeys(plan.appended)])
    out = [assign(got, call(f"{plan.base}_backward", *args))]
    for j, v in enumerate(plan.state):
        out.append(assign(v, _item(got, j)))
    j = len(plan.state)
    for v in plan.active_state:
        out.append(assign(adj(v), call("zeros_plus", name(v), _item(got, j))))
        j += 1
    for v in dict.fromkeys(plan.appended):  # the items' cotangents the steps took popped
        out.append(assign(adj(v), _item(got, j)))
        j += 1
    for v in plan.active_invariants:
        out.append(assign(adj(v), call("add_cotangents", name(adj(v)), _item(got, j))))
        j += 1
    return out


def _bounds(plan: Checkpoint, count: int) -> list:
    """start, stop, stride (or start, stride) of a for loop's range; nothing for a while."""
    if plan.var is None:
        return []
    given = plan.bounds
    args = [gast.Constant(value=v, kind=None) if isinstance(v, int) else copy.deepcopy(v)
            for v in ([0, given[0], 1] if len(given) == 1 else
                      [given[0], given[1], given[2] if len(given) > 2 else 1])]
    return args if count == 3 else [args[0], args[2]]


def _item(held: str, j: int):
    return gast.Subscript(value=name(held), slice=gast.Constant(value=j, kind=None),
                          ctx=gast.Load())


def _joined(names) -> str:
    return ", ".join(names)


def _unpack(names) -> str:
    return _joined(names) + ("," if len(names) == 1 else "")


def _forward_source(plan: Checkpoint, line: str, where: str, integers) -> str:
    state, s = plan.state, ("_snapshots" if plan.budget is not None else plan.snapshots)
    params = _joined(state + plan.invariants + (["_start", "_stop", "_stride"] if plan.var
                                                 else []))
    step_args = _joined(state + plan.invariants + (["_start + _k * _stride"] if plan.var else []))
    exact = set(integers) | set(plan.lists)  # the rest may hold a float after a step
    stores = "\n".join(f"    _snap_{v} = {'tape_like' if v in exact else 'tape_array'}"
                       f"({_held(plan, v)}, {s})" for v in state)
    keep = "\n".join(f"            record_at(_snap_{v}, _slot, {_held(plan, v)})" for v in state)
    how = ("revolve: the trip count is known" if plan.counted
           else "online: the trip count is known only at the end")
    if plan.budget is not None:
        sizes = " + ".join(f"state_bytes({_held(plan, v)})" for v in state)
        steps = "_steps" if plan.var is not None else "-1"
        limit, loops = plan.budget
        stores = (f"    '# memory_limit: as many snapshots as {limit} bytes over {loops} "
                  f"loop(s) hold'\n    _snapshots = budget_snapshots({limit}, {loops}, "
                  f"{sizes}, {steps}, {where!r})\n" + stores)
    count = "snapshots chosen by memory_limit" if plan.budget is not None else (
        f"at most {s} snapshots")
    made = f"revolve_plan(_steps, {s})" if plan.counted else f"online_plan({s})"
    if plan.var is not None:
        header = ("    _steps = trip_count(_start, _stop, _stride)\n" + stores
                  + f"\n    _plan = {made}\n    _done = 0\n    for _k in range(_steps):\n")
    else:
        header = (f"{stores}\n    _plan = {made}\n    _done = 0\n    _k = 0\n"
                  f"    while {plan.loop.test.id}:\n")
    tail = "        _done = _k + 1\n" + (f"        if {plan.brk}:\n            break\n"
                                         if plan.brk else "")
    if plan.var is None:
        tail += "        _k = _k + 1\n"
    return (f"def {plan.base}_forward({params}):\n"
            f"    '# checkpointed forward sweep of: {line}'\n"
            f"    '# runs the loop, keeping its state ({_joined(state)}) before the steps the "
            f"schedule picks ({how}; {count})'\n"
            f"{header}"
            f"        if snapshot_due(_plan, _k):\n"
            f"            _slot = take_slot(_plan, _k)\n{keep}\n"
            f"        {_unpack(state)} = {plan.base}_step({step_args})\n{tail}"
            f"    finish_plan(_plan, _done)\n"
            f"    return {_joined(state + ['_plan'])}, "
            f"({_unpack(['_snap_' + v for v in state])})\n")


def _backward_source(plan: Checkpoint, line: str) -> str:
    state, n = plan.state, len(plan.state)
    lists = [adj(v) for v in dict.fromkeys(plan.appended)]
    cts = [adj(v) for v in plan.active_state] + lists
    params = _joined(["_cp", "_snaps"] + plan.invariants + (["_start", "_stride"] if plan.var
                                                             else []) + cts)
    at = "_start + {} * _stride" if plan.var else None
    step_args = _joined(state + plan.invariants + ([at.format("_k")] if at else []))
    unpack = "\n".join(f"    {v} = _cp[{j}]" for j, v in enumerate(state))
    stores = "\n".join(f"    _snap_{v} = _snaps[{j}]" for j, v in enumerate(state))
    zeros = "".join(f"    {adj(v)} = zeros_like({v})\n" for v in plan.active_invariants)
    keep = "\n".join(f"            record_at(_snap_{v}, _arg, {_held(plan, v)})" for v in state)
    back = "\n".join(_restore(plan, v, "_arg", "            ") for v in state)
    first = "\n".join(_restore(plan, v, "_first", "        ") for v in state)
    grads = cts + [adj(v) for v in plan.active_invariants]
    step = _step_back(plan) if cts else "            pass\n"
    return (f"def {plan.base}_backward({params}):\n"
            f"    '# checkpointed backward sweep of: {line}'\n"
            f"    '# follows the schedule: restore a snapshot, advance without recording, or "
            f"record one step and reverse it at once (a tape of one step)'\n"
            f"{unpack}\n    _plan = _cp[{n}]\n{stores}\n{zeros}    _k = 0\n"
            f"    while True:\n        _kind, _arg = next_action(_plan)\n"
            f"        if _kind == {ADVANCE}:\n            {_ACTIONS[0]!r}\n"
            f"            for _j in range(_arg):\n"
            f"                {_unpack(state)} = {plan.base}_step({step_args})\n"
            f"                _k = _k + 1\n"
            f"        elif _kind == {KEEP}:\n            {_ACTIONS[1]!r}\n{keep}\n"
            f"        elif _kind == {RESTORE}:\n            {_ACTIONS[2]!r}\n{back}\n"
            f"            _k = plan_position(_plan)\n"
            f"        elif _kind == {STEP}:\n            {_ACTIONS[3]!r}\n{step}"
            f"        else:\n            break\n"
            f"    if loop_ran(_plan):\n        '# the state before the loop'\n"
            f"        _first = first_slot(_plan)\n{first}\n"
            f"    return ({_unpack(state + grads)})\n")


def _held(plan: Checkpoint, v: str) -> str:
    """What a snapshot of state v keeps: a list's length (its items are never changed),
    else the value."""
    return f"len({v})" if v in plan.lists else v


def _restore(plan: Checkpoint, v: str, slot: str, indent: str) -> str:
    if v in plan.lists:
        return f"{indent}truncate({v}, _snap_{v}[{slot}])"
    return f"{indent}{v} = restored(_snap_{v}, {slot})"


def _step_back(plan: Checkpoint) -> str:
    """STEP: the appended items' cotangents popped (last first), then the step's vjp."""
    at = ["_start + _arg * _stride"] if plan.var else []
    items = plan.item_cotangents()
    pops = "".join(f"            {ct} = {adj(v)}.pop()\n"
                   for v, ct in reversed(list(zip(plan.appended, items))))
    args = _joined(plan.state + plan.invariants + at + [adj(v) for v in plan.active_state]
                   + items)
    taken = "".join(f"            {adj(v)} = _g[{j}]\n" for j, v in enumerate(plan.active_state))
    j0 = len(plan.active_state)
    taken += "".join(f"            {adj(v)} = add_cotangents({adj(v)}, _g[{j0 + j}])\n"
                     for j, v in enumerate(plan.active_invariants))
    call_ = f"            _out, _g = {plan.base}_step_vjp({args})\n"
    return pops + call_ + (taken or "            pass\n")


class _Comments(gast.NodeTransformer):
    def visit_Expr(self, node):
        value = node.value
        if isinstance(value, gast.Constant) and isinstance(value.value, str) and (
                value.value.startswith("# ")):
            return comment(value.value[2:])
        return node


def _parse(source: str) -> gast.FunctionDef:
    return _Comments().visit(gast.parse(source)).body[0]
