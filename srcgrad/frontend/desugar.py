"""Pass 4, desugar: lower loops over sequences and early exits to a few core forms.

Tuple targets holding array elements become one assignment each (element_tuples.py),
`n ** -2` and `np.array(u, copy=False)` say what they mean (spellings.py), calls
writing into an argument become writes (outputs.py), `dtype=int` NumPy's int type
(dtype_names.py), a loop's `else` clause an
`if` on a flag its breaks clear (loop_else.py), try statements calls of helpers that run
them as written (trying.py);
comprehensions, sums over sequences, arrays from lists and text are lowered
next, to loops and helper calls (comprehensions.py).

Guarantees to the next pass (the tree keeps the user's line numbers):
- Every `for` loop is `for <name> in range(...)` and its body does not assign
  the loop variable or the names its bounds read. Loops over arrays, lists,
  `enumerate(...)` and `zip(...)` index the sequence instead:
  `for x in xs: ...` becomes `for _i1 in range(len(xs)): x = xs[_i1]; ...`.
  A variable several such loops share gets a name per loop (`t__1`, `t__2`)
  where that changes nothing (`_loop_variables`), since each may hold values
  of another shape.
- No `continue`; `break` appears only as the last statement of a loop body,
  as `if _brkK: break`. Statements after a possible exit are guarded by
  `if not _skipK:` (loops) or `if not _ret:` (function body), or become the
  `else` branch of an `if` whose body always exits (so a value both paths
  assign, like an inlined helper's `_retval`, is seen assigned on both), so
  every statement of a body either runs to its end or is skipped as a whole;
  this is what lets the backward sweep replay an iteration that ended early.
- Exactly one `return`, the last statement of the function: other returns
  store their value in `_retval` and set `_ret`.
"""
from __future__ import annotations

import builtins
import copy
import itertools
from dataclasses import dataclass

import gast

from ..errors import SrcgradSyntaxError
from .comprehensions import lower
from .resolve import Resolved
from .dtype_names import spell_dtypes
from .element_tuples import lower_element_tuples
from .spellings import respell
from .loop_else import lower_loop_else
from .outputs import lower_outputs
from .trying import lower_try
from ..syntax import walk


def _name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def _assign(target, value, where):
    if isinstance(target, str):
        target = _name(target, store=True)
    return gast.copy_location(gast.Assign(targets=[target], value=value, type_comment=None), where)


def _const(value):
    return gast.Constant(value=value, kind=None)


def _call(func: str, *args):
    return gast.Call(func=_name(func), args=list(args), keywords=[])


def _always_exits(body) -> bool:
    """Whether a block always ends in return, break or continue."""
    last = body[-1] if body else None
    if isinstance(last, (gast.Return, gast.Break, gast.Continue)):
        return True
    return isinstance(last, gast.If) and _always_exits(last.body) and _always_exits(last.orelse)


def _loop_variables(resolved: Resolved, taken: set[str]) -> dict[int, dict[str, str]]:
    """id(loop) -> {v: v__K}: the variable of each loop over a sequence gets a name of its own
    when nothing outside those loops assigns it, none is inside another, and reads of it
    outside them all come after the last one (which then keeps the name).

    `for t in x: ...` then `for t in A: ...` makes t a number, then a row: one
    name for both would give its adjoint (and every shape read of it) the wrong
    shape in one of the loops. Renaming is exact: every read of t is inside a
    loop that binds t first, or after the last such loop, none inside another.
    """
    body = resolved.tree.body
    top = {id(n): k for k, stmt in enumerate(body) for n in walk(stmt)}
    loops: dict[str, list] = {}
    for node in walk(resolved.tree):
        if isinstance(node, gast.For) and not (
                isinstance(node.iter, gast.Call) and isinstance(node.iter.func, gast.Name)
                and node.iter.func.id == "range"):
            for n in walk(node.target):
                if isinstance(n, gast.Name):
                    loops.setdefault(n.id, []).append(node)
    others = list(resolved.local_functions.values())
    renamed: dict[int, dict[str, str]] = {}
    for var, fors in loops.items():
        inside = {id(n) for loop in fors for part in [loop.target, *loop.body, *loop.orelse]
                  for n in walk(part)}  # not the sequence: it is read before binding
        outside = [n for n in walk(resolved.tree) if isinstance(n, gast.Name)
                   and n.id == var and id(n) not in inside]
        places = sorted(top[id(loop)] for loop in fors)
        last = max(fors, key=lambda loop: top[id(loop)])
        captured = any(isinstance(n, gast.Name) and n.id == var for f in others
                       for n in walk(f))
        nested = any(inner is not loop and any(n is inner for n in walk(loop))
                     for loop in fors for inner in fors)
        if len(fors) < 2 or captured or nested or any(
                isinstance(n.ctx, gast.Store) for n in outside):
            continue
        if outside and (len(set(places)) < len(places)
                        or any(top[id(n)] <= places[-1] for n in outside)):
            continue  # a later read must see one loop's binding: the last one, alone
        k = 0
        for loop in fors:
            if loop is last and outside:
                continue  # later reads see the last loop's binding
            k += 1
            while f"{var}__{k}" in taken:
                k += 1
            taken.add(f"{var}__{k}")
            renamed.setdefault(id(loop), {})[var] = f"{var}__{k}"
    return renamed


def _rename(body, old: str, new: str) -> None:
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and node.id == old:
                node.id = new


def _stored(nodes) -> set[str]:
    return {n.id for stmt in nodes for n in walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


@dataclass
class _Loop:
    brk: str
    skip: str
    exits: bool = False  # a break, continue or return may leave the body early
    breaks: bool = False  # a break or return may leave the loop
    returns: bool = False  # a return inside


class _Desugar:
    def __init__(self, resolved: Resolved):
        self.resolved = resolved
        self.parsed = resolved.parsed
        self.ids = itertools.count(1)
        self.taken = {n.id for n in walk(resolved.tree) if isinstance(n, gast.Name)}
        self.flags_return = False
        self.renamed = _loop_variables(resolved, self.taken)

    def next_id(self) -> int:
        """A number K for `_brkK`, `_skipK`, `_iK`, `_sK` that the code does not use yet
        (generated code, differentiated again, has such names of its own)."""
        while True:
            k = next(self.ids)
            if not {f"_brk{k}", f"_skip{k}", f"_i{k}", f"_s{k}"} & self.taken:
                return k

    def fail(self, node, what, hint=""):
        raise SrcgradSyntaxError(
            f"srcgrad cannot differentiate {self.parsed.func.__qualname__}: {what} is not "
            "supported" + (f"; {hint}" if hint else ""), self.parsed.loc(node))

    def is_builtin(self, node, name) -> bool:
        return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
                and node.func.id == name
                and self.resolved.callees.get(name) is getattr(builtins, name))

    # ---- blocks and early exits ---------------------------------------------------
    def block(self, stmts, loop: _Loop | None) -> tuple[list, bool]:
        """Lowered statements, and whether they may leave early (break/continue/return)."""
        out = []
        for k, stmt in enumerate(stmts):
            leaves = isinstance(stmt, gast.If) and not stmt.orelse and _always_exits(stmt.body)
            lowered, exits = self.statement(stmt, loop)
            out.extend(lowered)
            if exits:
                rest, _ = self.block(stmts[k + 1:], loop)
                if rest and leaves:  # `if c: ...; return a` then the rest: its else branch
                    stmt.orelse = rest
                elif rest:
                    flag = loop.skip if loop else "_ret"
                    guard = gast.If(test=gast.UnaryOp(op=gast.Not(), operand=_name(flag)),
                                    body=rest, orelse=[])
                    out.append(gast.copy_location(guard, stmts[k + 1]))
                return out, True
        return out, False

    def statement(self, stmt, loop):
        if isinstance(stmt, gast.Break):
            loop.exits = loop.breaks = True
            return [_assign(loop.brk, _const(True), stmt), _assign(loop.skip, _const(True), stmt)], True
        if isinstance(stmt, gast.Continue):
            loop.exits = True
            return [_assign(loop.skip, _const(True), stmt)], True
        if isinstance(stmt, gast.Return):
            if not self.flags_return:
                return [stmt], False
            out = [_assign("_retval", stmt.value, stmt), _assign("_ret", _const(True), stmt)]
            if loop is not None:
                loop.exits = loop.breaks = loop.returns = True
                out += [_assign(loop.brk, _const(True), stmt), _assign(loop.skip, _const(True), stmt)]
            return out, True
        if isinstance(stmt, gast.If):
            stmt.body, exits_then = self.block(stmt.body, loop)
            stmt.orelse, exits_else = self.block(stmt.orelse, loop)
            return [stmt], exits_then or exits_else
        if isinstance(stmt, (gast.For, gast.While)):
            return self.loop(stmt, loop)
        return [stmt], False

    def loop(self, stmt, outer: _Loop | None):
        k = self.next_id()
        pre = []
        for old, new in self.renamed.get(id(stmt), {}).items():
            for node in walk(stmt.target):
                if isinstance(node, gast.Name) and node.id == old:
                    node.id = new
            _rename(stmt.body, old, new)
        if isinstance(stmt, gast.For):
            pre, target, iterable, prefix = self.iteration(stmt)
            stmt.target, stmt.iter = target, iterable
            stmt.body = prefix + stmt.body
        inner = _Loop(brk=f"_brk{k}", skip=f"_skip{k}")
        body, _ = self.block(stmt.body, inner)
        if inner.exits:
            body.insert(0, _assign(inner.skip, _const(False), stmt))
        if inner.breaks:
            pre.append(_assign(inner.brk, _const(False), stmt))
            leave = gast.If(test=_name(inner.brk), body=[gast.Break()], orelse=[])
            body.append(gast.copy_location(leave, stmt))
        stmt.body = body
        out = pre + [stmt]
        if not inner.returns:
            return out, False
        if outer is not None:  # a return inside also leaves the enclosing loop
            outer.exits = outer.breaks = outer.returns = True
            propagate = gast.If(test=_name("_ret"), body=[
                _assign(outer.brk, _const(True), stmt), _assign(outer.skip, _const(True), stmt)],
                orelse=[])
            out.append(gast.copy_location(propagate, stmt))
        return out, True

    # ---- for loops over sequences -------------------------------------------------
    def iteration(self, stmt):
        """(statements before the loop, loop variable, range(...) call, body prefix)."""
        target, it = stmt.target, stmt.iter
        assigned = _stored(stmt.body)
        pre = []
        if self.is_builtin(it, "reversed") and len(it.args) == 1 \
                and self.is_builtin(it.args[0], "range"):
            pre, it = self.reversed_range(it.args[0], assigned, stmt)
        if self.is_builtin(it, "range"):
            if not isinstance(target, gast.Name):
                self.fail(stmt, "unpacking the variable of a range loop")
            if target.id in assigned:
                self.fail(stmt, f"assigning to the loop variable {target.id!r} inside the loop",
                          "use another name for the new value")
            args = []
            for arg in it.args:
                arg, hoisted = self.hoist(arg, assigned, stmt)
                pre += hoisted
                args.append(arg)
            it.args = args
            return pre, target, it, []
        index = None
        if self.is_builtin(it, "enumerate"):
            if not (isinstance(target, gast.Tuple) and len(target.elts) == 2):
                self.fail(stmt, "enumerate(...) without unpacking into (index, item)")
            start = it.args[1] if len(it.args) > 1 else _const(0)
            if it.keywords:
                start = it.keywords[0].value
            index, target, it = target.elts[0], target.elts[1], it.args[0]
        pre, length, element = self.sequence(it, assigned, stmt)
        if isinstance(index, gast.Name) and isinstance(start, gast.Constant) \
                and start.value == 0 and index.id not in assigned:
            var, prefix = index.id, []
        else:
            var = f"_i{self.next_id()}"
            prefix = []
            if index is not None:
                prefix.append(_assign(index, gast.BinOp(left=_name(var), op=gast.Add(),
                                                        right=start), stmt))
        bind = _assign(target, element(_name(var)), stmt)
        bind.element_of_loop = stmt  # error messages name the loop, not `seq[_iK]`
        prefix.append(bind)
        return pre, _name(var, store=True), _call("range", length), prefix

    def reversed_range(self, it, assigned, where):
        """`reversed(range(...))` as a range counting down, and the statements before it."""
        if len(it.args) < 3:
            start, stop = (_const(0), it.args[0]) if len(it.args) == 1 else it.args
            less_one = lambda e: _const(e.value - 1) if isinstance(e, gast.Constant) else \
                gast.BinOp(left=e, op=gast.Sub(), right=_const(1))  # noqa: E731
            return [], gast.copy_location(_call("range", less_one(stop), less_one(start),
                                                _const(-1)), it)
        pre, parts = [], []
        for arg in it.args:  # evaluated once, as Python does
            arg, hoisted = self.hoist(arg, assigned, where)
            pre += hoisted
            parts.append(arg)
        a, b, step = (lambda k=k: copy.deepcopy(parts[k]) for k in range(3))
        self.resolved.callees.setdefault("len", builtins.len)
        count = _call("len", _call("range", a(), b(), step()))  # range(a + (count-1)*step,
        first = gast.BinOp(left=a(), op=gast.Add(), right=gast.BinOp(  # a - step, -step)
            left=gast.BinOp(left=count, op=gast.Sub(), right=_const(1)), op=gast.Mult(),
            right=step()))
        down = _call("range", first, gast.BinOp(left=a(), op=gast.Sub(), right=step()),
                     gast.UnaryOp(op=gast.USub(), operand=step()))
        return pre, gast.copy_location(down, it)

    def sequence(self, it, assigned, where):
        """(statements before the loop, length expression, index -> element expression)."""
        if self.is_builtin(it, "reversed") and len(it.args) == 1:  # `for t in reversed(xs)`
            pre, length, element = self.sequence(it.args[0], assigned, where)
            last = gast.BinOp(left=length, op=gast.Sub(), right=_const(1))
            return pre, length, lambda i: element(gast.BinOp(left=last, op=gast.Sub(), right=i))
        if self.is_builtin(it, "zip"):
            parts = [self.hoist(a, assigned, where, always_name=True) for a in it.args]
            pre = [s for _, hoisted in parts for s in hoisted]
            names = [a for a, _ in parts]
            self.resolved.callees.setdefault("min", builtins.min)
            self.resolved.callees.setdefault("len", builtins.len)
            length = _call("len", names[0])
            for other in names[1:]:
                length = _call("min", length, _call("len", other))
            return pre, length, lambda i: gast.Tuple(
                elts=[gast.Subscript(value=n, slice=i, ctx=gast.Load()) for n in names],
                ctx=gast.Load())
        seq, pre = self.hoist(it, assigned, where, always_name=True)
        self.resolved.callees.setdefault("len", builtins.len)
        return pre, _call("len", seq), lambda i: gast.Subscript(value=seq, slice=i, ctx=gast.Load())

    def hoist(self, expr, assigned, where, always_name=False):
        """`expr`, evaluated once before the loop when the body could change it."""
        if isinstance(expr, gast.Constant) and not always_name:
            return expr, []
        if isinstance(expr, gast.Name) and expr.id not in assigned:
            return expr, []
        temp = f"_s{self.next_id()}"
        hoisted = _assign(temp, expr, where)
        hoisted.hoisted_loop = where  # error messages name the loop, not `_sK`
        return _name(temp), [hoisted]


def desugar(resolved: Resolved) -> Resolved:
    tree = resolved.tree
    lower_element_tuples(tree)
    respell(tree)
    lower_outputs(resolved)
    spell_dtypes(resolved)
    lower_loop_else(tree)
    lower_try(resolved)
    lower(resolved, {n.id for n in walk(tree) if isinstance(n, gast.Name)})
    returns = [n for n in walk(tree) if isinstance(n, gast.Return)]
    pass_ = _Desugar(resolved)
    pass_.flags_return = not (len(returns) == 1 and returns[0] is tree.body[-1])
    body, _ = pass_.block(tree.body, None)
    if pass_.flags_return:
        last = tree.body[-1]
        body = [_assign("_ret", _const(False), tree.body[0])] + body
        body.append(gast.copy_location(gast.Return(value=_name("_retval")), last))
    tree.body = body
    return resolved
