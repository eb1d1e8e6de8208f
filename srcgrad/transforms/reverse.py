"""Pass 7, reverse: the backward sweep, statement by statement, block by block.

Input: normalized code (normalize.py), active and reassigned names
(activity.py). Output (`Reversed`) guarantees:
- `forward` is the normalized primal plus loop counters (`_n1 = _n1 + 1`) for
  loops whose trip count is not known on entry (`while`, loops with `break`).
- `backward` visits the statements in reverse: `if` becomes `if` on the same
  (restored) condition, a loop runs its iterations backwards.
- Every active name `v` has an adjoint `_adj_v`: zeroed once per execution of
  its home block (scopes.py), then accumulated as `_adj_v = _adj_v + e`, or in
  place as `_adj_x[idx] += g` for an indexed read (`add_at(_adj_x, idx, g)` when
  idx may be an integer array or a mask, see `activity.plain_index`). The
  elements of a display a joining call takes (`np.concatenate((a, b))`) get
  item k of the rule's cotangent each.
  NOTE [adjoint ownership]: only a buffer made by `zeros_like` (or by
  optimize.py's `zeros_plus`, which it folds one into) is ever updated in
  place; optimize.py relies on this when it folds zero inits.
- After handling an assignment to a reassigned name `v`, the backward sweep
  restores the value `v` had before: `v = restore(_tape_v, v)`; a write
  `y[i] = e` is undone by `y[i] = _tape_y_at1.pop()` (a tape per write
  site, `write_tapes`); `hs.append(e)` by
  `hs.pop()`. record.py keeps the restores whose values the backward sweep
  reads and records those values in the forward sweep.
- Each block of generated code starts with a `Comment` naming the user's line.
- The function returns `(out, (_adj_w1, ...))` in `wrt` order.
"""
from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass

import gast

from ..analysis.activity import Activity, is_append, plain_index, simple_statements
from ..analysis.integer_arrays import maybe_integer_arrays
from ..analysis.scopes import scopes
from ..errors import NonScalarOutputError
from ..frontend.normalize import Normalized, is_break_check
from ..syntax import (walk, assign, binop, call, comment, const, function_def, insert_after,
                      insert_before, is_comment, line_comment, method, name, with_comments)
from .checkpoint_drivers import backward_statements, forward_statements
from .contributions import Contributions, adj, index_value


def tape(var: str) -> str:
    return f"_tape_{var}"


@dataclass
class Reversed:
    norm: Normalized
    forward: list
    backward: list
    wrt: list[str]
    output: gast.AST  # the function's value: its result atom, or `_out` if restores change it
    write_tapes: dict  # id(forward `y[i] = v` statement) -> name of the tape that undoes it
    restore_sites: dict  # id(backward `v = restore(...)`) -> the forward assignment it undoes
    seed: str | None = None  # parameter holding the output's cotangent (vjp), else seed_like
    integers: frozenset = frozenset()  # names that certainly hold an int (activity.integers)

    def function(self, called: str | None = None) -> gast.FunctionDef:
        """The joint function `f__grad` (or `called`): forward sweep, backward sweep, return."""
        norm = self.norm
        grads = [name(adj(w)) for w in self.wrt]
        final = gast.Return(value=gast.Tuple(
            elts=[self.output, gast.Tuple(elts=grads, ctx=gast.Load())], ctx=gast.Load()))
        params = norm.inputs + ([self.seed] if self.seed else [])
        return function_def(called or f"{norm.resolved.tree.name}__grad", params,
                            self.forward + self.backward + [final])


class _Reverser(Contributions):
    """The pass's state and statement-by-statement reversal; contributions.py adds each
    statement's adjoint contributions."""

    def __init__(self, norm: Normalized, activity: Activity, forward: list):
        self.norm = norm
        self.parsed = norm.resolved.parsed
        self.active = activity.active
        self.reassigned = activity.reassigned
        self.integers = activity.integers
        top = set(norm.inputs) | {_result_name(norm)}
        self.scopes = scopes(forward, set(self.active), top, set(norm.inputs))
        taken = {n.id for stmt in norm.body for n in walk(stmt) if isinstance(n, gast.Name)}
        self.fresh = (f"_r{i}" for i in itertools.count(1) if f"_r{i}" not in taken).__next__
        # `_nK` counts a loop's iterations, `_iK` runs its backward loop: K must be
        # free for both (desugar's loop indices are `_iK` too).
        self.counters = (k for k in itertools.count(1)
                         if f"_n{k}" not in taken and f"_i{k}" not in taken)
        self.loop_depth = _loop_depths(forward)
        self.counted: list = []  # (loop, counter name) for loops counted in the forward sweep
        self.write_sites = itertools.count(1)
        self.write_tapes: dict[int, str] = {}  # id(forward `y[i] = v`) -> its undo tape
        self.maybe_integer = maybe_integer_arrays(forward)
        self.restore_sites: dict[int, gast.AST] = {}  # id(backward restore) -> forward assignment

    # ---- blocks ------------------------------------------------------------------
    def block(self, stmts) -> list:
        out = [assign(adj(v), call("zeros_like", name(v))) for v in sorted(self.active)
               if self.scopes.home.get(v) == id(stmts) and v != _result_name(self.norm)]
        last = last_line = None
        for stmt in reversed(stmts):
            if is_comment(stmt):
                continue
            line = getattr(stmt, "lineno", None)
            produced = self.statement(stmt)
            if produced and line is not None and line != last_line:
                last_line = line
                note = line_comment(self.parsed, stmt, "grad of: ")
                if note.value.value != last:  # one note per user line (parse.py: generated
                    last = note.value.value   # code's lines of one user line share it)
                    out.append(note)
            out.extend(produced)
        return out

    def statement(self, stmt) -> list:
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0]
            if isinstance(target, gast.Subscript):
                return self.write(stmt, target)
            return self.assignment(stmt, target.id, stmt.value)
        if is_append(stmt):
            return self.append(stmt)
        if isinstance(stmt, gast.If):
            body, orelse = self.block(stmt.body), self.block(stmt.orelse)
            if not any(not is_comment(s) for s in body + orelse):
                return []
            return [gast.copy_location(gast.If(test=stmt.test, body=body or [gast.Pass()],
                                               orelse=orelse), stmt)]
        if hasattr(stmt, "srcgrad_plan"):  # a checkpointed loop: checkpoint_drivers.py
            return backward_statements(stmt.srcgrad_plan)
        if isinstance(stmt, gast.For):
            return self.for_loop(stmt)
        if isinstance(stmt, gast.While):
            return self.while_loop(stmt)
        return []  # print(...), assert, break: nothing to undo

    def assignment(self, stmt, target: str, value) -> list:
        out = []
        if target in self.active:
            out += self.contributions(stmt, target, value)
            if target in self.scopes.resets:
                out.append(assign(adj(target), call("zeros_like", name(target))))
        if target in self.reassigned:
            undo = assign(target, call("restore", name(tape(target)), name(target)))
            self.restore_sites[id(undo)] = stmt
            out.append(undo)
        return out

    def write(self, stmt, target) -> list:
        base, index = target.value.id, target.slice
        out = []
        if base in self.active:
            if not plain_index(index, self.integers):
                out.append(self.write_check(stmt, index))
            slot = gast.Subscript(value=name(adj(base)), slice=index, ctx=gast.Load())
            value = stmt.value
            zero = gast.Subscript(value=name(adj(base)), slice=index, ctx=gast.Store())
            if isinstance(value, gast.Name) and value.id == base:  # `v[:] = v`: the slot's
                held = self.fresh()                                # cotangent goes to all of v
                out += [assign(held, call("snapshot", slot)),
                        assign(zero, call("zeros_like", copy.deepcopy(slot))),
                        self.accumulate(base, call("unbroadcast", name(held), name(base)))]
                slot = None
            elif isinstance(value, gast.Name) and value.id in self.active:
                written = call("snapshot", slot)
                if base in self.maybe_integer:  # zero where the array holds integers
                    written = call("stored", written, name(base))
                out.append(self.accumulate(value.id, call("unbroadcast", written, name(value.id))))
            if slot is not None:
                out.append(assign(zero, call("zeros_like", slot)))
        # One tape per write site: each site writes values of one type (an element, a row).
        site = tape(f"{base}_at{next(self.write_sites)}")
        self.write_tapes[id(stmt)] = site
        undo = gast.Subscript(value=name(base), slice=index, ctx=gast.Store())
        out.append(assign(undo, method(site, "pop")))
        return out

    def append(self, stmt) -> list:
        receiver = stmt.value.func.value.id
        item = stmt.value.args[0]
        out = []
        if receiver in self.active:
            popped = method(adj(receiver), "pop")
            if isinstance(item, gast.Name) and item.id in self.active:
                out.append(self.accumulate(item.id, popped))
            else:
                out.append(gast.Expr(value=popped))
        out.append(gast.Expr(value=method(receiver, "pop")))
        return out

    # ---- loops -------------------------------------------------------------------
    def for_loop(self, stmt) -> list:
        args = stmt.iter.args
        start, stop, step = (const(0), args[0], const(1)) if len(args) == 1 else (
            args[0], args[1], args[2] if len(args) > 2 else const(1))
        counter = self.counter_for(stmt) if ends_early(stmt) else None
        unit = isinstance(step, gast.Constant) and step.value == 1
        if counter is not None:
            last = binop(start, gast.Add(), binop(name(counter), gast.Sub(), const(1)) if unit else
                         gast.BinOp(left=binop(name(counter), gast.Sub(), const(1)),
                                    op=gast.Mult(), right=step))
        else:
            last = binop(stop, gast.Sub(), const(1)) if unit else call("range_last", start, stop, step)
        end = binop(start, gast.Sub(), const(1)) if unit else binop(start, gast.Sub(), step)
        neg = const(-1) if unit else gast.UnaryOp(op=gast.USub(), operand=step)
        return self.reversed_loop(stmt, stmt.target.id, call("range", last, end, neg), counter)

    def while_loop(self, stmt) -> list:
        counter = self.counter_for(stmt)
        index = f"_i{counter[2:]}"
        return self.reversed_loop(stmt, index, call("range", name(counter)), counter)

    def counter_for(self, loop) -> str:
        """Count the iterations in the forward sweep (`_nK`); see `Reversed.forward`."""
        counter = f"_n{next(self.counters)}"
        loop.body.insert(0, gast.copy_location(
            assign(counter, gast.BinOp(left=name(counter), op=gast.Add(), right=const(1))), loop))
        self.counted.append((loop, counter))
        return counter

    def reversed_loop(self, stmt, var, iterable, counter) -> list:
        body = self.block(stmt.body)
        if not any(not is_comment(s) for s in body):
            return []
        loop = gast.For(target=name(var, store=True), iter=iterable, body=body, orelse=[],
                        type_comment=None)
        loop.srcgrad_reverses = stmt  # the forward loop it reverses (immediate.py)
        out = [gast.copy_location(loop, stmt)]
        if counter is not None and self.depth_of(stmt) > 0:
            out.insert(0, assign(counter, method(tape(counter), "pop")))
        return out

    def depth_of(self, loop) -> int:
        return self.loop_depth.get(id(loop), 0)

    def write_check(self, stmt, index):
        """A run-time check that a write `y[idx] = v` into a differentiated y has no index array."""
        loc = self.parsed.loc(stmt)
        message = (f"{loc}: srcgrad cannot differentiate `{loc.text.strip()}`: it writes through "
                   f"an integer-array index (a repeated index is written twice); write "
                   f"element by element in a loop, or select with a boolean mask or np.where")
        return gast.Expr(value=call("check_write_index", index_value(index), const(message)))


def ends_early(loop) -> bool:
    """Whether the loop can end early: desugar puts `if _brkK: break` last in its body."""
    return bool(loop.body) and is_break_check(loop.body[-1])


def _result_name(norm: Normalized):
    result = norm.result
    return result.id if isinstance(result, gast.Name) else None


def _loop_depths(body, depth=0, out=None) -> dict[int, int]:
    out = {} if out is None else out
    for stmt in body:
        if isinstance(stmt, (gast.For, gast.While)):
            out[id(stmt)] = depth
            _loop_depths(stmt.body, depth + 1, out)
        elif isinstance(stmt, gast.If):
            _loop_depths(stmt.body, depth, out)
            _loop_depths(stmt.orelse, depth, out)
    return out


def _reject_tuple_result(norm):
    result = norm.result
    for stmt, _ in simple_statements(norm.body):
        if (isinstance(stmt, gast.Assign) and isinstance(result, gast.Name)
                and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == result.id
                and isinstance(stmt.value, gast.Tuple)):
            raise NonScalarOutputError(
                f"{norm.resolved.parsed.func.__qualname__} returns a tuple; grad needs a scalar "
                "output. Differentiate one element, or a scalar combination of them.",
                norm.resolved.parsed.loc(stmt))


def reverse(norm: Normalized, activity: Activity, wrt: list[str],
            seed: str | None = None) -> Reversed:
    """The backward sweep; `seed` names a parameter holding the output's cotangent (vjp)."""
    _reject_tuple_result(norm)
    forward = norm.body[:-1]
    rev = _Reverser(norm, activity, forward)
    out_name = _result_name(norm)
    backward = [comment("backward sweep")]
    if out_name in activity.active:
        backward.append(assign(adj(out_name), name(seed) if seed else call("seed_like",
                                                                             name(out_name))))
    backward += rev.block(forward)
    for w in wrt:
        if w not in activity.active:
            backward.append(assign(adj(w), call("zeros_like", name(w))))
    for loop, counter in rev.counted:  # counters start at zero before their loop
        insert_before(forward, loop, assign(counter, const(0)))
        if rev.depth_of(loop) > 0:
            insert_after(forward, loop, gast.Expr(value=method(tape(counter), "append",
                                                                 name(counter))))
    for loop in [s for s in forward if hasattr(s, "srcgrad_plan")]:
        k = forward.index(loop)
        forward[k:k + 1] = forward_statements(loop.srcgrad_plan)
    forward = with_comments(forward, norm.resolved.parsed, "")
    output = norm.result
    if out_name in activity.reassigned:  # the backward sweep restores it: keep the value
        forward.append(assign("_out", name(out_name)))
        output = name("_out")
    return Reversed(norm, forward, backward, list(wrt), output, rev.write_tapes,
                    rev.restore_sites, seed, activity.integers)
