"""Pass 5, normalize: one operation per statement (A-normal form), SSA where possible.

Guarantees to the next pass (`Normalized.body`), where an *atom* is a name,
a constant, or a static dotted reference such as `np.pi`:

    name = atom                      copy
    name = atom <op> atom            BinOp
    name = <op> atom                 UnaryOp (-x, +x, not x, ~x)
    name = atom <cmp> atom           Compare (one comparison)
    name = f(atom, ..., k=atom)      Call; f is a static dotted name (see resolve)
    name = f((atom, ...), ...)       np.concatenate/stack/hstack/vstack/array/asarray:
                                     the first argument stays a tuple display (nested
                                     for np.array), see rules/joining.py
    name = atom.shape|size|ndim      data attribute
    name = atom[index]               index: atom, slice of atoms, or tuple of those
    name = (atom, ...) | [atom, ...] tuple or list display
    name[index] = atom               write into an array or list element
    f(atom, ...) | name.append(atom) call for its effect
    assert atom
    if atom: ... else: ...
    for name in range(atom, atom, atom): ...
    while atom: ...                  the condition's statements run before the
                                     loop and again at the end of the body
    break                            only as `if _brkK: break`, last in a body
    return atom                      exactly once, last

Names assigned only at the top level of the function are in SSA form: a user
variable keeps its name at its first assignment and becomes `x__2`, `x__3`,
... at later ones, so the backward sweep reads every intermediate value for
free. Names assigned inside a loop or branch keep one name throughout (the
reverse pass records the values it needs). Temporaries are `_t1`, `_t2`, ....
Each statement keeps the line number of the user statement it came from.

A value read from an array that the function writes into is copied when a user
variable keeps it (`snapshot`), so a later write cannot change it behind the
backward sweep's back.

`z op= v` on a name becomes `z = z op v`; that statement and every write
`z[i] = v` carry an `aliasing.Update` mark, and aliasing.py puts a run-time
check before those whose array something else may still use (where NumPy's
in-place semantics would give other numbers).
"""
from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field

import gast

from .aliasing import Update, UserNames, guard_updates, source_text, symbol
from .aliasing import dotted as _dotted
from .calls import Recursive, grad_all_name
from .errors import SrcgradSyntaxError
from .resolve import Resolved
from .runtime import snapshot

# Calls whose result may share memory with an argument (a view).
_VIEWS = ("np.transpose", "np.reshape", "np.ravel", "np.swapaxes", "np.expand_dims", "np.squeeze")


@dataclass
class Normalized:
    resolved: Resolved
    body: list  # statements in the forms above; the last one is `return atom`
    inputs: list[str]  # parameters, then data globals, in generated-signature order
    mutated: set[str] = field(default_factory=set)  # names written into (y[i] = v, .append)

    @property
    def result(self):
        return self.body[-1].value


def _name(id_, ctx=None):
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def _chain_root(node):
    while isinstance(node, gast.Attribute):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _nested_stores(body) -> set[str]:
    """Names assigned anywhere inside a loop or branch (they are not put in SSA form)."""
    names = set()
    for stmt in body:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            for node in gast.walk(stmt):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    names.add(node.id)
    return names


def _mutated(body) -> set[str]:
    names = set()
    for stmt in body:
        for node in gast.walk(stmt):
            targets = node.targets if isinstance(node, gast.Assign) else (
                [node.target] if isinstance(node, gast.AugAssign) else [])
            names |= {t.value.id for t in targets if isinstance(t, gast.Subscript)}
            if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                    and node.func.attr == "append"):
                names.add(node.func.value.id)
    return names


class _Normalizer:
    def __init__(self, resolved: Resolved, mode: str):
        self.mode = mode  # "reverse" or "forward": how a recursive call is spelled
        body = resolved.tree.body
        self.inputs = resolved.params + resolved.data_globals
        self.parsed = resolved.parsed
        self.mutated = _mutated(body)
        self.unversioned = _nested_stores(body) | self.mutated
        self.version = {name: name for name in self.inputs}  # user name -> current SSA name
        self.count = {name: 1 for name in self.inputs}
        self.temps = itertools.count(1)
        self.taken = _all_names(resolved)
        self.blocks: list[list] = [[]]
        self.where = None  # the user statement being normalized
        self.names = UserNames(resolved.parsed)  # generated name -> the user's, for messages
        self.lists: set[str] = set()  # SSA names bound to a list display
        self.copies: dict[str, int] = {}  # callee name -> inlined copies so far

    def fail(self, node, what, hint):
        raise SrcgradSyntaxError(f"srcgrad cannot differentiate {self.parsed.func.__qualname__}: "
                                 f"{what} is not supported; {hint}", self.parsed.loc(node))

    # ---- naming ------------------------------------------------------------------
    def fresh_temp(self) -> str:
        """`_t1`, `_t2`, ...: skipping names the code already has (generated code, differentiated
        again, has temporaries of its own)."""
        while True:
            temp = f"_t{next(self.temps)}"
            if temp not in self.taken:
                return temp

    def define(self, user_name: str) -> str:
        if user_name in self.unversioned or user_name.startswith("_"):
            self.version[user_name] = user_name
            return user_name
        n = self.count.get(user_name, 0) + 1
        self.count[user_name] = n
        self.version[user_name] = user_name if n == 1 else f"{user_name}__{n}"
        return self.version[user_name]

    def emit(self, stmt):
        self.blocks[-1].append(gast.copy_location(stmt, self.where))

    def assign(self, target: str, value):
        self.emit(gast.Assign(targets=[_name(target, gast.Store())], value=value, type_comment=None))

    def nested(self, stmts) -> list:
        """Normalize a nested block (a loop or branch body) and return it."""
        self.blocks.append([])
        for stmt in stmts:
            self.statement(stmt)
        return self.blocks.pop()

    # ---- calls into user code (calls.py) ----------------------------------------
    def call_user(self, call):
        """Inline `call` here; return the callee's result (an atom, or a tuple of atoms)."""
        callee = call.callee
        values = self.arguments(call, callee)
        if isinstance(callee, Recursive):
            return self.call_recursive(callee, values)
        k = self.copies[callee.name] = self.copies.get(callee.name, 0) + 1
        rename = {n: f"{n}__{callee.name}{k}" for n in callee.locals}
        self.names.inlined.update({new: (n, callee.name) for n, new in rename.items()})
        body = copy.deepcopy(callee.body)
        for node in (n for stmt in body for n in gast.walk(stmt)):
            if isinstance(node, gast.Name) and node.id in rename:
                node.id = rename[node.id]
        nested = len(self.blocks) > 1  # in a loop or branch: no SSA names for this copy
        self.unversioned |= set(rename.values()) if nested else (
            _nested_stores(body) | _mutated(body))
        self.mutated |= _mutated(body)
        written = _mutated(callee.body)  # the callee's own names
        where = self.where
        for param, value in zip(callee.params, values):
            self.bind_parameter(call, rename[param], value, param in written)
        for stmt in body[:-1]:
            self.statement(stmt)
        self.where = body[-1]
        result = body[-1].value
        if isinstance(result, gast.Tuple):  # `return a, b` feeds `u, v = f(x)` directly
            result = gast.Tuple(elts=[self.atom(e) for e in result.elts], ctx=gast.Load())
        else:
            result = self.atom(result)
        self.where = where
        return result

    def bind_parameter(self, call, param: str, value, written: bool):
        """Bind an inlined copy's parameter to the caller's argument atom.

        A callee that writes into a caller's array would change it behind the
        caller's back (srcgrad does not differentiate through shared arrays)
        unless it rebinds the parameter to its own array first
        (`u = u.copy()`); a callee that only reads an array the caller writes
        into later gets a copy, so the backward sweep reads what it saw.
        """
        caller_array = isinstance(value, gast.Name) and value.id in self.version
        shown = self.names.show(value.id) if caller_array else ""
        if caller_array and value.id in self.mutated:  # the callee's name must not see
            value = _snapshot(value)                   # the caller's later writes
        if caller_array and written:
            user = param.rsplit("__", 1)[0]
            if not _rebound_before_written(call.callee.body, user):
                self.fail(call, f"{call.callee.name}() writing into its parameter {user!r}, "
                          f"which is the caller's {shown}",
                          f"copy it first inside {call.callee.name}(): {user} = {user}.copy()")
            self.assign(self.define(param), value)  # rebound before any write: no sharing
            return
        self.bind(_name(param, gast.Store()), value)

    def arguments(self, call, callee) -> list:
        """The atoms bound to each parameter, evaluated left to right as Python does."""
        what = f"the call to {callee.name}()"
        if len(call.args) > len(callee.params):
            self.fail(call, f"{what} with {len(call.args)} positional arguments",
                      f"it takes {len(callee.params)}")
        given = dict(zip(callee.params, call.args))
        for keyword in call.keywords:
            if keyword.arg not in callee.params or keyword.arg in given:
                self.fail(call, f"{what} with the keyword {keyword.arg!r}",
                          f"its parameters are {', '.join(callee.params)}")
            given[keyword.arg] = keyword.value
        atoms = {name: self.atom(value) for name, value in given.items()}
        for name in callee.params:
            if name not in atoms:
                if name not in callee.defaults:
                    self.fail(call, f"{what} without a value for {name!r}",
                              "pass every parameter that has no default")
                atoms[name] = copy.deepcopy(callee.defaults[name])
        return [atoms[name] for name in callee.params]

    def call_recursive(self, callee: Recursive, values):
        """`f__grad_all(args)`, its value linked to each argument by its partial derivative.

        For forward mode the call stays `f(args)` (forward.py calls `f__jvp_all`).
        """
        if self.mode == "forward":
            kept = gast.Call(func=_name(callee.name), args=values, keywords=[])
            kept.callee = callee
            return self._store(kept, None)
        both = self._store(gast.Call(func=_name(grad_all_name(callee.name)), args=values,
                                     keywords=[]), None)
        value = self._store(_item(both, 0), None)
        partials = self._store(_item(both, 1), None)
        for k, arg in enumerate(values):
            if isinstance(arg, gast.Name):
                partial = self._store(_item(partials, k), None)
                value = self._store(gast.Call(func=_name("linked"), args=[value, partial, arg],
                                              keywords=[]), None)
        return value

    # ---- expressions -------------------------------------------------------------
    def atom(self, node, target: str | None = None):
        """Emit statements computing `node`; return an atom holding its value.

        With `target`, the final operation is assigned straight to that name.
        """
        if isinstance(node, gast.UnaryOp) and isinstance(node.operand, gast.Constant) \
                and isinstance(node.op, (gast.USub, gast.UAdd)):
            sign = -1 if isinstance(node.op, gast.USub) else 1
            node = gast.Constant(value=sign * node.operand.value, kind=None)  # x[-1]
        if isinstance(node, gast.Constant):
            return self._store(node, target) if target else node
        if isinstance(node, gast.Name):
            current = _name(self.version.get(node.id, node.id))
            if target and node.id in self.mutated:  # `x if c else ...` of an array
                current = _snapshot(current)         # written later
            return self._store(current, target) if target else current
        if isinstance(node, gast.Attribute) and _chain_root(node) not in self.version:
            return self._store(node, target) if target else node  # static, e.g. np.pi
        if isinstance(node, gast.IfExp):
            return self.if_expression(node, target or self.fresh_temp())
        if isinstance(node, gast.BoolOp):
            return self.bool_operation(node, target or self.fresh_temp())
        if isinstance(node, gast.Compare) and len(node.ops) > 1:
            return self.chained_comparison(node, target or self.fresh_temp())
        if getattr(node, "callee", None) is not None:
            result = self.call_user(node)
            return self._store(result, target) if target else result
        if isinstance(node, gast.Subscript) and _chain_root(node.value) in self.mutated:
            # x[0] of an array written later may be a view: keep the values read now
            view = self._store(self.operation(node), None)
            return self._store(_snapshot(view), target)
        return self._store(self.operation(node), target)

    def _store(self, value, target):
        name = target or self.fresh_temp()
        self.assign(name, value)
        return _name(name)

    def operation(self, node):
        """`node` with every operand replaced by an atom (one operation left)."""
        if getattr(node, "callee", None) is not None:
            return self.call_user(node)
        if isinstance(node, gast.BinOp):
            return gast.BinOp(left=self.value(node.left), op=node.op, right=self.value(node.right))
        if isinstance(node, gast.UnaryOp):
            return gast.UnaryOp(op=node.op, operand=self.value(node.operand))
        if isinstance(node, gast.Compare):
            return gast.Compare(left=self.value(node.left), ops=node.ops,
                                comparators=[self.value(node.comparators[0])])
        if isinstance(node, gast.Call):
            use = self.atom if _dotted(node.func) == "len" else self.value
            args = [self.call_argument(node, k, a, use) for k, a in enumerate(node.args)]
            return gast.Call(func=node.func, args=args,
                             keywords=[gast.keyword(arg=k.arg, value=self.value(k.value))
                                       for k in node.keywords])
        if isinstance(node, gast.Attribute):
            return gast.Attribute(value=self.atom(node.value), attr=node.attr, ctx=gast.Load())
        if isinstance(node, gast.Subscript):
            return gast.Subscript(value=self.atom(node.value), slice=self.index(node.slice),
                                  ctx=gast.Load())
        if isinstance(node, (gast.Tuple, gast.List)):
            return type(node)(elts=[self.value(e) for e in node.elts], ctx=gast.Load())
        if isinstance(node, (gast.IfExp, gast.BoolOp)):
            return self.atom(node)
        raise AssertionError(f"check() let {type(node).__name__} through")

    def value(self, node):
        """An atom used as a value: a list may only be indexed, appended to, iterated, len()-ed.

        (Adjoints of lists are lists; `+` on them would concatenate.)
        """
        atom = self.atom(node)
        if isinstance(atom, gast.Name) and atom.id in self.lists:
            self.fail(self.where, f"using the list {self.names.show(atom.id)} as a value",
                      "index it, append to it, iterate over it or take len(); for arithmetic "
                      "build an array instead")
        return atom

    def index(self, node):
        if isinstance(node, gast.Slice):
            return gast.Slice(*(None if part is None else self.atom(part)
                                for part in (node.lower, node.upper, node.step)))
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.index(e) for e in node.elts], ctx=gast.Load())
        return self.atom(node)

    def if_expression(self, node, target):
        """`a if c else b`: only the branch taken is evaluated, as in Python."""
        test = self.atom(node.test)
        body = self.nested_expression(node.body, target)
        orelse = self.nested_expression(node.orelse, target)
        self.emit_if(test, body, orelse)
        return _name(target)

    def nested_expression(self, expr, target):
        self.blocks.append([])
        self.atom(expr, target=target)
        return self.blocks.pop()

    def bool_operation(self, node, target):
        """`a and b` is a if a is falsy, else b (b evaluated only then); `or` likewise."""
        self.atom(node.values[0], target=target)
        for value in node.values[1:]:
            test = _name(target)
            if isinstance(node.op, gast.Or):
                test = self.atom(gast.UnaryOp(op=gast.Not(), operand=_name(target)))
            self.emit_if(test, self.nested_expression(value, target), [])
        return _name(target)

    def chained_comparison(self, node, target):
        """`a < b < c` is `a < b and b < c`, with b evaluated once."""
        left = self.atom(node.left)
        rights = [self.atom(c) for c in node.comparators]
        pairs = list(zip([left] + rights[:-1], node.ops, rights))
        first, rest = pairs[0], pairs[1:]
        self._store(gast.Compare(left=first[0], ops=[first[1]], comparators=[first[2]]), target)
        for lhs, op, rhs in rest:
            self.blocks.append([])
            self._store(gast.Compare(left=lhs, ops=[op], comparators=[rhs]), target)
            self.emit_if(_name(target), self.blocks.pop(), [])
        return _name(target)

    # ---- statements --------------------------------------------------------------
    def statement(self, stmt):
        self.where = stmt
        if isinstance(stmt, gast.Assign):
            value = stmt.value
            if len(stmt.targets) > 1:  # a = b = expr
                value = self.atom(value)
            for target in stmt.targets:
                self.bind(target, value)
        elif isinstance(stmt, gast.AugAssign):
            self.augmented(stmt)
        elif isinstance(stmt, gast.AnnAssign):
            if stmt.value is not None:
                self.bind(stmt.target, stmt.value)
        elif isinstance(stmt, gast.Return):
            self.emit(gast.Return(value=self.atom(stmt.value)))
        elif isinstance(stmt, gast.Expr):
            if getattr(stmt.value, "callee", None) is not None:
                self.call_user(stmt.value)  # called for its effect; the result is unused
            elif isinstance(stmt.value, gast.Call):
                self.emit(gast.Expr(value=self.operation(stmt.value)))
        elif isinstance(stmt, gast.Assert):
            self.emit(gast.Assert(test=self.atom(stmt.test), msg=stmt.msg))
        elif isinstance(stmt, gast.If):
            self.branch(stmt)
        elif isinstance(stmt, gast.For):
            self.for_loop(stmt)
        elif isinstance(stmt, gast.While):
            self.while_loop(stmt)
        elif isinstance(stmt, gast.Break):
            self.emit(gast.Break())

    def branch(self, stmt):
        test = self.atom(stmt.test)
        body, orelse = self.nested(stmt.body), self.nested(stmt.orelse)
        self.where = stmt
        self.emit_if(test, body, orelse)

    def emit_if(self, test, body, orelse):
        """`if test: body else: orelse`, testing a name the branches do not assign.

        The backward sweep tests the same name after undoing the branch's
        assignments, so it must still hold the value the forward sweep tested.
        """
        branch = gast.If(test=test, body=body, orelse=orelse)
        if isinstance(test, gast.Name) and test.id in _stores_in(branch):
            branch.test = self._store(test, None)
        self.emit(branch)

    def for_loop(self, stmt):
        bounds = [self.atom(a) for a in stmt.iter.args]
        body = self.nested(stmt.body)
        self.where = stmt
        loop = gast.For(target=_name(stmt.target.id, gast.Store()),
                        iter=gast.Call(func=_name("range"), args=bounds, keywords=[]),
                        body=body, orelse=[], type_comment=None)
        self.emit(loop)

    def while_loop(self, stmt):
        """The condition is evaluated before the loop and again at the end of the body.

        In a loop that can break, the evaluation for the next round goes before the
        closing `if _brkK: break`, guarded by `if not _brkK:` (Python does not test
        the condition after a break), so every statement of the body but the last
        still runs to its end or is skipped as a whole.
        """
        test = self.atom(stmt.test, target=self.fresh_temp())
        body = self.nested(stmt.body)
        leave = body.pop() if body and _is_break_check(body[-1]) else None
        self.blocks.append(body)
        self.where = stmt
        if leave is None:
            self.atom(stmt.test, target=test.id)  # evaluate the condition again for the next round
        else:
            again = self.nested_expression(stmt.test, test.id)
            going = self.atom(gast.UnaryOp(op=gast.Not(), operand=copy.deepcopy(leave.test)))
            self.emit_if(going, again, [])
            body.append(leave)
        self.blocks.pop()
        self.emit(gast.While(test=test, body=body, orelse=[]))

    def augmented(self, stmt):
        target = stmt.target
        if isinstance(target, gast.Subscript):  # y[i] += v  ->  t = y[i]; y[i] = t + v
            base, index = self.atom(target.value), self.index(target.slice)
            old = self._store(gast.Subscript(value=base, slice=index, ctx=gast.Load()), None)
            # A slice is a view: the write below would change the old value under it.
            old = self._store(_snapshot(old), None)
            new = self._store(gast.BinOp(left=old, op=stmt.op, right=self.atom(stmt.value)), None)
            self.write(base, index, new)
            return
        old = self.version.get(target.id, target.id)
        self.bind(target, gast.BinOp(left=_name(target.id), op=stmt.op, right=stmt.value))
        self.mark(old, target.id, symbol(stmt.op))  # rebinding, where NumPy updates in place

    def write(self, base, index, value):
        store = gast.Subscript(value=_name(base.id), slice=index, ctx=gast.Store())
        self.emit(gast.Assign(targets=[store], value=value, type_comment=None))
        self.mark(base.id, base.id, None)

    def mark(self, old: str, name: str, op):
        """Mark the last statement for aliasing.py: an update of `old` (op None: a write)."""
        self.blocks[-1][-1].srcgrad_update = Update(old, self.where, self.names.show(name),
                                                    self.names.user(name), op)

    def bind(self, target, value):
        """Assign user expression `value` to user target `target`."""
        if isinstance(target, gast.Subscript):
            base, index = self.atom(target.value), self.index(target.slice)
            self.write(base, index, self.atom(value))
            return
        if isinstance(target, gast.Name):
            if (self.names.user(target.id) == "_retval" and isinstance(value, gast.Name)
                    and value.id in self.mutated):  # an early `return a` of an array it wrote
                value = _snapshot(value)
            self.check_sharing(target.id, value)
            if getattr(self.where, "hoisted_loop", None) is not None:  # desugar's `_sK = y`
                self.names.hoisted[target.id] = self.where.hoisted_loop
            # Evaluate before versioning the name: `x = x * 2` reads the old x.
            simple = isinstance(value, (gast.Name, gast.Constant)) or (
                isinstance(value, gast.Attribute) and _chain_root(value) not in self.version)
            resolved = self.atom(value) if simple else self.operation(value)
            if isinstance(value, gast.Subscript) and _chain_root(value.value) in self.mutated:
                resolved = _snapshot(self._store(resolved, None))
            elif not simple and target.id in self.unversioned and target.id in _reads(resolved):
                # `s = s * x` in a loop: the backward sweep needs the old s and the new one
                resolved = self._store(resolved, None)
            if not simple and isinstance(resolved, gast.Name) and target.id in self.mutated:
                # a temporary (`v = a if c else b`, `s = s * x` above) would be the same
                # array as the name, so the name's later writes would reach it: a copy
                resolved = _snapshot(resolved)
            if simple:
                resolved = self.value(resolved)  # `ys = hs` would give the list two names
            ssa = self.define(target.id)
            if isinstance(resolved, gast.Name) and resolved.id == ssa:
                self.emit(gast.Pass())  # `x = x` (a name not versioned): nothing happens
                return
            self.assign(ssa, resolved)
            (self.lists.add if isinstance(value, gast.List) else self.lists.discard)(ssa)
            return
        # Tuple target: evaluate the whole right-hand side before binding any name.
        if getattr(value, "callee", None) is not None:
            value = self.call_user(value)
        if isinstance(value, gast.Tuple) and len(value.elts) == len(target.elts):
            parts = [self.atom(e) for e in value.elts]
        else:
            parts = self.unpack(self.atom(value), len(target.elts))
        self.bind_resolved(target, parts)

    def check_sharing(self, name: str, value):
        """Arrays written into must not share memory with another name (see module doc)."""
        source = value.id if isinstance(value, gast.Name) and value.id in self.version else None
        view = isinstance(value, gast.Subscript) or (
            isinstance(value, gast.Call) and _dotted(value.func) in _VIEWS)
        if not (name in self.mutated and (source is not None or view)
                or source is not None and source in self.mutated):
            return
        show, user = self.names.show, self.names.user(name)
        loop = getattr(self.where, "hoisted_loop", None)  # desugar's `_sK = y` for `for v in y`
        if loop is not None:
            self.fail(loop, f"iterating over {show(source)}, which the function writes into, "
                      "in a loop whose body rebinds it",
                      f"iterate over a copy, {self.names.user(source)}.copy()")
        if name in self.mutated:
            what = self.names.user(source) if source else self.names.text(value)
            self.fail(self.where, f"writing into {show(name)}, which shares memory with "
                      f"{show(source) if source else f'`{what}`'}",
                      f"make it a copy: {user} = {what}.copy()")
        self.fail(self.where, f"a second name {show(name)} for the array {show(source)} that the "
                  f"function writes into", f"use {self.names.user(source)} itself, or "
                  f"{user} = {self.names.user(source)}.copy()")

    def unpack(self, whole, n):
        return [gast.Subscript(value=whole, slice=gast.Constant(value=i, kind=None),
                               ctx=gast.Load()) for i in range(n)]

    def bind_resolved(self, target, parts):
        """Bind already-normalized `parts` (atoms or `atom[i]`) to a tuple target."""
        for sub_target, part in zip(target.elts, parts):
            if isinstance(sub_target, gast.Name):
                self.assign(self.define(sub_target.id), part)
            else:
                whole = part if isinstance(part, gast.Name) else self._store(part, None)
                self.bind_resolved(sub_target, self.unpack(whole, len(sub_target.elts)))

    # ---- sequence arguments (rules/joining.py) -----------------------------------
    def call_argument(self, call, k, arg, use):
        """Argument k of `call` as an atom; a joining call's first argument stays a display."""
        from .rules.joining import NESTED_DISPLAYS, SEQUENCE_CALLS
        spelled = _dotted(call.func)
        if k != 0 or spelled not in SEQUENCE_CALLS:
            return use(arg)
        if isinstance(arg, (gast.List, gast.Tuple)):
            return self.display(arg, spelled, spelled in NESTED_DISPLAYS)
        if isinstance(arg, gast.Name) and self.version.get(arg.id, arg.id) in self.lists:
            self.fail(self.where, f"passing the list variable {self.names.show(arg.id)} to "
                      f"{spelled}()",
                      f"write its elements out in a display, {spelled}([a, b, ...])")
        return use(arg)

    def display(self, node, spelled: str, nested: bool):
        """A list or tuple display as a tuple display of atoms (numba joins tuples, not lists)."""
        elts = []
        for elt in node.elts:
            if not isinstance(elt, (gast.List, gast.Tuple)):
                elts.append(self.value(elt))
            elif nested:
                elts.append(self.display(elt, spelled, nested))
            else:
                self.fail(self.where, f"a nested list or tuple display inside {spelled}()",
                          "build the inner array first, e.g. with np.array([...])")
        return gast.Tuple(elts=elts, ctx=gast.Load())


def _rebound_before_written(body, name: str) -> bool:
    """Whether every path through `body` rebinds `name` to a new array before writing into it
    (a branch counts where each arm does; desugar puts the rest of a body after an
    early `return` into a branch)."""
    return _first_event(body, name) != "written"


def _first_event(body, name: str) -> str | None:
    """"written", "rebound" (to a new array) or None: what `body` does to `name` first."""
    for stmt in body:
        if isinstance(stmt, gast.If):
            arms = (_first_event(stmt.body, name), _first_event(stmt.orelse, name))
            if "written" in arms:
                return "written"
            if arms == ("rebound", "rebound"):
                return "rebound"
            continue  # rebound on some paths at most: a later write may reach the caller
        if name in _mutated([stmt]):
            return "written"
        if (isinstance(stmt, gast.Assign) and any(isinstance(t, gast.Name) and t.id == name
                                                   for t in stmt.targets)):
            value = stmt.value
            fresh = not (isinstance(value, (gast.Name, gast.Subscript)) or (
                isinstance(value, gast.Call) and _dotted(value.func) in _VIEWS))
            return "rebound" if fresh else "written"
    return None


def _all_names(resolved: Resolved) -> set[str]:
    trees = [resolved.tree, *resolved.local_functions.values()]
    return {n.id for tree in trees for n in gast.walk(tree) if isinstance(n, gast.Name)}


def _item(whole, k):
    return gast.Subscript(value=whole, slice=gast.Constant(value=k, kind=None), ctx=gast.Load())


def _reads(node) -> set[str]:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}


def _stores_in(stmt) -> set[str]:
    return {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Store)}


def normalize(resolved: Resolved, mode: str = "reverse") -> Normalized:
    norm = _Normalizer(resolved, mode)
    for stmt in resolved.tree.body:
        norm.statement(stmt)
    recursive = any(f is resolved.parsed.func for f in resolved.recursive)
    guard_updates(norm.blocks[0], norm.inputs, norm.names, resolved.parsed.func.__qualname__,
                  recursive)
    if any(norm.mutated):
        resolved.callees.setdefault("snapshot", snapshot)
    return Normalized(resolved, norm.blocks[0], norm.inputs, norm.mutated)


def _snapshot(node):
    """`snapshot(node)`: the value now, a copy if it is an array (runtime/checks.py)."""
    return gast.Call(func=_name("snapshot"), args=[node], keywords=[])


def _is_break_check(stmt) -> bool:
    """`if _brkK: break`, which desugar puts last in the body of a loop that can break."""
    return isinstance(stmt, gast.If) and any(isinstance(s, gast.Break) for s in stmt.body)
