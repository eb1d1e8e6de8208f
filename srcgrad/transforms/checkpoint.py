"""Checkpointed loops: what a marked loop carries, and its step as a function.

A loop marked by `srcgrad.checkpointed` (frontend/checkpoint_marks.py) at the top of
the function is differentiated as a function of its *state*, one step at a time:

- `state`: the names its body assigns that a step may read before assigning them
  (carried from one step to the next), that code after the loop reads, or that the loop
  tests (a while loop's condition, a break flag), then the arrays it writes into that
  exist before it; each has a value before the loop (else the loop is refused).
- `invariants`: the names it reads and neither assigns nor writes into.
- `f__loopK_step(state..., invariants..., i)` returns the state after step i: the
  normalized body as written. Its gradient `f__loopK_step_vjp(..., _ct_<v>...)` is the
  ordinary reverse-mode code of `sum(_ct_v * v)` over the differentiated state, taken with
  respect to that state and the differentiated invariants (pipeline.py runs the usual
  passes on `Checkpoint.step_normalized`), so a step tapes as any code does, inner loops
  and calls included, and its tape lives only for that one call.

checkpoint_drivers.py writes the two functions the gradient calls in place of the
loop; runtime/checkpoints.py holds the schedules they follow.

A list from before the loop that each step appends to (at the body's top level, read
only after the loop) is state too: a snapshot keeps its length, and the step's vjp takes
the cotangent of each appended item instead of appending it.

Guarantees: a loop is checkpointed only when every name its steps exchange is in the
state above; a list read in the loop or appended to in a branch, a mark inside another
loop or a branch, and state with no value before the loop are refused with an error
naming the user's line and names.
"""
from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass, field

import gast

from ..analysis.activity import is_append, names_in
from ..analysis.scopes import upward_exposed
from ..errors import SrcgradSyntaxError, SrcgradWarning
from ..frontend.checkpoint_marks import Budget
from ..frontend.normalize import Normalized, is_break_check
from ..runtime import checkpoints
from ..syntax import assign, binop, call, function_def, name, with_comments, walk


@dataclass
class Checkpoint:
    loop: gast.AST  # the normalized loop
    base: str  # f__loopK: prefix of the generated functions
    snapshots: int  # or, with `budget`, chosen at run time
    state: list[str]
    invariants: list[str]
    var: str | None  # a for loop's variable
    bounds: list  # range(start, stop, stride) atoms of a for loop
    brk: str | None  # the break flag of a loop that can break
    lists: list[str] = field(default_factory=list)  # state lists the body only appends to
    appended: list[str] = field(default_factory=list)  # differentiated lists, per append
    active_state: list[str] = field(default_factory=list)
    active_invariants: list[str] = field(default_factory=list)
    step_normalized: Normalized | None = None  # the step's vjp, for the reverse passes
    budget: tuple | None = None  # (memory_limit in bytes, loops sharing it)

    @property
    def number(self) -> str:
        """K of f__loopK: the gradient holds the forward driver's tuple in `_cpK`."""
        return self.base.rsplit("loop", 1)[1]

    @property
    def counted(self) -> bool:
        """A for loop that cannot break: its trip count is known on entry (revolve)."""
        return self.var is not None and self.brk is None

    def cotangents(self) -> list[str]:
        """The step vjp's cotangent parameters: the differentiated state's, then one per
        append to a differentiated list (the item's), in the body's order."""
        return [f"_ct_{v}" for v in self.active_state] + self.item_cotangents()

    def item_cotangents(self) -> list[str]:
        return [f"_ct_{v}_{j + 1}" for j, v in enumerate(self.appended)]

    def step_params(self) -> list[str]:
        return self.state + self.invariants + ([self.var] if self.var else [])


def prepare(norm: Normalized, active, function_name: str) -> list[Checkpoint]:
    """A `Checkpoint` for each marked loop at the top of `norm.body` (set as the loop's
    `srcgrad_plan`); refuses marks anywhere else. A loop marked by a memory_limit that
    cannot be checkpointed is left as it is, with a warning saying why."""
    plans = []
    for k, stmt in enumerate(norm.body):
        for node in walk(stmt):
            if hasattr(node, "srcgrad_checkpoint") and node is not stmt:
                _nested(norm, k, node)
        if hasattr(stmt, "srcgrad_checkpoint"):
            try:
                plan = _plan(norm, k, f"{function_name}__loop{len(plans) + 1}", active)
            except SrcgradSyntaxError as exc:
                _recorded_in_full(stmt, exc)
                continue
            if not plan.state:  # no step hands anything on: nothing to keep or recompute
                del stmt.srcgrad_checkpoint
                continue
            stmt.srcgrad_plan = plan
            plans.append(plan)
    budgeted = [p for p in plans if isinstance(p.snapshots, Budget)]
    for plan in budgeted:  # the loops share the limit
        plan.budget = (int(plan.snapshots), len(budgeted))
    return plans


def _nested(norm: Normalized, k: int, loop) -> None:
    """A marked loop below the top of the function (in statement k): refused, or with a
    memory_limit's mark, recorded in full with a warning."""
    what, hint = "a checkpointed loop inside another loop or a branch", (
        "checkpoint the outermost loop, at the top of the function")
    if _after_return(norm, k, loop):
        what, hint = "a checkpointed loop after a `return` inside a loop or branch above " \
            "it", "keep the value in a name and return it after the checkpointed loop"
    try:
        _refuse(norm, loop, what, hint)
    except SrcgradSyntaxError as exc:
        _recorded_in_full(loop, exc)


def _recorded_in_full(loop, exc: SrcgradSyntaxError) -> None:
    """A loop checkpointing refuses: the error, unless memory_limit marked it; then the
    loop is recorded in full, with a warning saying why."""
    if not isinstance(loop.srcgrad_checkpoint, Budget):
        raise exc
    warnings.warn(f"srcgrad: memory_limit: this loop is recorded in full: {exc}",
                  SrcgradWarning, stacklevel=2)
    del loop.srcgrad_checkpoint


def _after_return(norm: Normalized, k: int, loop) -> bool:
    """Whether the loop is in statement k only because of a `return` above it: desugar's
    `if not _ret:` around the rest of the function, or the arm of an `if` the other arm
    of which returns (`if c: return a` puts the rest in the `else`)."""
    guard = norm.body[k]
    if not isinstance(guard, gast.If):
        return False
    if isinstance(guard.test, gast.Name) and any(
            isinstance(s, gast.Assign) and getattr(s.targets[0], "id", None) == guard.test.id
            and isinstance(s.value, gast.UnaryOp) and isinstance(s.value.op, gast.Not)
            and names_in(s.value) == ["_ret"] for s in norm.body[:k]):
        return True
    for arm, other in ((guard.body, guard.orelse), (guard.orelse, guard.body)):
        if any(n is loop for s in arm for n in walk(s)):
            return any(isinstance(s, gast.Assign) and getattr(s.targets[0], "id", None)
                       == "_ret" for s in other)
    return False


def _plan(norm: Normalized, k: int, base: str, active) -> Checkpoint:
    loop = norm.body[k]
    body = step_body(loop)
    brk = loop.body[-1].test.id if body is not loop.body else None
    before = set(norm.inputs) | {n.id for s in norm.body[:k] for n in walk(s)
                                 if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    mentioned = list(dict.fromkeys(n.id for s in body for n in walk(s)
                                   if isinstance(n, gast.Name)))
    var = loop.target.id if isinstance(loop, gast.For) else None
    after = {v for v in mentioned + [var] if v is not None and _exposed(v, norm.body[k + 1:])}
    assigned = {n.id for s in body for n in walk(s)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    tested = {loop.test.id} if isinstance(loop, gast.While) else set()
    written = _written(body, before)
    lists = _lists(norm, loop, body, before)
    state = [v for v in mentioned if v in assigned and (
        _exposed(v, body) or v in after or v in tested or v == brk)]
    state += [v for v in written + lists if v not in state]
    if "_retval" in assigned:  # desugar's return slot: no value before the loop
        _refuse(norm, loop, "a `return` inside a checkpointed loop", "leave the loop with "
                "`break` and return after it")
    for v in state:
        if v not in before:
            _refuse(norm, loop, f"a checkpointed loop whose state {_user(norm, v)!r} has no "
                    "value before the loop", f"give {_user(norm, v)} a value before the loop "
                    "(each step starts from the state the step before left)")
    if var is not None and var in after:
        _refuse(norm, loop, f"reading the variable {_user(norm, var)!r} of a checkpointed loop "
                "after it", f"keep the value you need in a name of your own inside the loop "
                f"(last = {_user(norm, var)}), given a value before it")
    invariants = [v for v in mentioned if v in before and v not in assigned
                  and v not in written and v not in lists and v != var]
    plan = Checkpoint(loop, base, loop.srcgrad_checkpoint, state, invariants, var,
                      list(loop.iter.args) if var else [], brk)
    plan.lists = lists
    plan.appended = [s.value.func.value.id for s in body if is_append(s)
                     and s.value.func.value.id in lists and s.value.func.value.id in active]
    plan.active_state = [v for v in state if v in active and v not in lists]
    plan.active_invariants = [v for v in invariants if v in active]
    plan.step_normalized = _step_normalized(norm, plan, body)
    return plan


def _exposed(v: str, stmts: list) -> bool:
    """Whether `stmts` may read v before assigning it. An inner or later loop over v
    (`for v in range(m):`) assigns v before its body reads it: it neither reads v nor,
    since it may run no step, surely assigns it (scopes.upward_exposed counts a loop's
    variable as read)."""
    if any(_over(n, v) for s in stmts for n in walk(s)):
        stmts = copy.deepcopy(stmts)
        for loop in [n for s in stmts for n in walk(s) if _over(n, v)]:
            loop.target = name("_sg_loop_var", store=True)
            loop.body.insert(0, assign(v, name("_sg_loop_var")))
    return upward_exposed(v, stmts)


def _over(node, v: str) -> bool:
    """`node` is `for v in ...:` with a header that does not read v."""
    return (isinstance(node, gast.For) and isinstance(node.target, gast.Name)
            and node.target.id == v and v not in names_in(node.iter))


def step_body(loop) -> list:
    """The loop's body without desugar's closing `if _brkK: break`."""
    return loop.body[:-1] if loop.body and is_break_check(loop.body[-1]) else loop.body


def _lists(norm, loop, body, before) -> list[str]:
    """Lists from before the loop that the body appends to: each step appends the same
    number of items (every append is a statement of the body itself, not of a branch or
    inner loop), and the body reads the list nowhere else; refused otherwise."""
    out = []
    for stmt in walk(gast.Module(body=body, type_ignores=[])):
        if is_append(stmt) and stmt.value.func.value.id in before:
            receiver = stmt.value.func.value.id
            mentions = [n for s in body for n in walk(s)
                        if isinstance(n, gast.Name) and n.id == receiver]
            appends = [s for s in body if is_append(s) and s.value.func.value.id == receiver]
            if not any(s is stmt for s in body) or len(mentions) != len(appends):
                _refuse(norm, loop, f"a checkpointed loop that reads the list "
                        f"{_user(norm, receiver)!r} or appends to it in a branch or an inner "
                        "loop", "append once per step at the loop's top level and read the "
                        "list after the loop, or collect the values in an array (y[i] = v)")
            if receiver not in out:
                out.append(receiver)
    return out


def _written(body, before) -> list[str]:
    out = []
    for stmt in walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
            base = stmt.targets[0].value.id
            if base in before and base not in out:
                out.append(base)
    return out


def _step_normalized(norm: Normalized, plan: Checkpoint, body: list) -> Normalized | None:
    """The normalized step with output `sum(_ct_v * v)` over the differentiated state and
    the items appended to differentiated lists (which it no longer appends)."""
    if not plan.active_state and not plan.appended:
        return None
    stmts, items = [], []
    for stmt in copy.deepcopy(body):
        if is_append(stmt) and stmt.value.func.value.id in plan.lists:
            if stmt.value.func.value.id in plan.appended:
                items.append(stmt.value.args[0])
            continue
        stmts.append(stmt)
    norm.resolved.callees.setdefault("cotangent_dot", checkpoints.cotangent_dot)
    total = None
    for j, (v, ct) in enumerate(zip([name(v) for v in plan.active_state] + items,
                                    plan.cotangents())):
        term = f"_sg_dot{j + 1}"
        stmts.append(gast.copy_location(assign(term, call("cotangent_dot", v, name(ct))),
                                        plan.loop))
        if total is None:
            total = term
        else:
            stmts.append(gast.copy_location(assign(f"_sg_sum{j + 1}", binop(
                name(total), gast.Add(), name(term))), plan.loop))
            total = f"_sg_sum{j + 1}"
    stmts.append(gast.copy_location(gast.Return(value=name(total)), plan.loop))
    inputs = plan.step_params() + plan.cotangents()
    return Normalized(norm.resolved, stmts, inputs, set(norm.mutated))


def step_function(norm: Normalized, plan: Checkpoint) -> gast.FunctionDef:
    """`f__loopK_step(state..., invariants..., i)`: one step as written; returns the state."""
    body = with_comments(copy.deepcopy(step_body(plan.loop)), norm.resolved.parsed, "")
    body.append(gast.Return(value=gast.Tuple(elts=[name(v) for v in plan.state],
                                             ctx=gast.Load())))
    return function_def(f"{plan.base}_step", plan.step_params(), body)


def _user(norm: Normalized, v: str) -> str:
    return v.split("__")[0] if "__" in v else v


def _refuse(norm: Normalized, node, what: str, hint: str):
    parsed = norm.resolved.parsed
    where = getattr(node, "srcgrad_user_loop", node)
    raise SrcgradSyntaxError(f"srcgrad cannot differentiate {parsed.func.__qualname__}: {what} "
                             f"is not supported; {hint}", parsed.loc(where))
