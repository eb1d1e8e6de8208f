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
backward sweep's back; so is a second name for an array either name writes
into (`u = new`, `a, b = b, x`, `a = b = e`, rows of `a, b = M`, `[new]`),
except a swap of names that keep one name, which moves the arrays.

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

from .aliasing import Update, UserNames, guard_updates, symbol
from ..errors import SrcgradSyntaxError
from .resolve import Resolved
from ..runtime import snapshot
from ..syntax import name as _name, walk
from .expressions import Expressions
from .calls import closure_writes
from .inline import Inliner
from .second_names import SecondNames
from .trees import chain_root, nested_stores, reads, snapshot_of, stores_in, written_into


@dataclass
class Normalized:
    resolved: Resolved
    body: list  # statements in the forms above; the last one is `return atom`
    inputs: list[str]  # parameters, then data globals, in generated-signature order
    mutated: set[str] = field(default_factory=set)  # names written into (y[i] = v, .append)

    @property
    def result(self):
        return self.body[-1].value


class _Normalizer(Expressions, Inliner, SecondNames):
    """The pass's state; expressions.py and inline.py hold the methods for expressions and
    for calls into user code."""

    def __init__(self, resolved: Resolved, mode: str):
        self.mode = mode  # "reverse" or "forward": how a recursive call is spelled
        body = resolved.tree.body
        self.inputs = resolved.params + resolved.data_globals
        self.parsed = resolved.parsed
        self.mutated = written_into(body)
        self.unversioned = nested_stores(body) | self.mutated | closure_writes(resolved)
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
        self.emit(gast.Assign(targets=[_name(target, store=True)], value=value, type_comment=None))

    def nested(self, stmts) -> list:
        """Normalize a nested block (a loop or branch body) and return it."""
        self.blocks.append([])
        for stmt in stmts:
            self.statement(stmt)
        return self.blocks.pop()

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
        if isinstance(test, gast.Name) and test.id in stores_in(branch):
            branch.test = self._store(test, None)
        self.emit(branch)

    def for_loop(self, stmt):
        bounds = [self.atom(a) for a in stmt.iter.args]
        body = self.nested(stmt.body)
        self.where = stmt
        loop = gast.For(target=_name(stmt.target.id, store=True),
                        iter=gast.Call(func=_name("range"), args=bounds, keywords=[]),
                        body=body, orelse=[], type_comment=None)
        _keep_mark(stmt, loop)
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
        leave = body.pop() if body and is_break_check(body[-1]) else None
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
        self.emit(_keep_mark(stmt, gast.While(test=test, body=body, orelse=[])))

    def augmented(self, stmt):
        target = stmt.target
        if isinstance(target, gast.Subscript):  # y[i] += v  ->  t = y[i]; y[i] = t + v
            base, index = self.atom(target.value), self.index(target.slice)
            old = self._store(gast.Subscript(value=base, slice=index, ctx=gast.Load()), None)
            # A slice is a view: the write below would change the old value under it.
            old = self._store(snapshot_of(old), None)
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
            atom = self.atom(value)
            self.write(base, index, self.element(atom) if base.id in self.lists else atom)
            return
        if isinstance(target, gast.Name):
            if (self.names.user(target.id) == "_retval" and isinstance(value, gast.Name)
                    and value.id in self.mutated):  # an early `return a` of an array it wrote
                value = snapshot_of(value)
            self.check_sharing(target.id, value)
            if getattr(self.where, "hoisted_loop", None) is not None:  # desugar's `_sK = y`
                self.names.hoisted[target.id] = self.where.hoisted_loop
            # Evaluate before versioning the name: `x = x * 2` reads the old x.
            simple = isinstance(value, (gast.Name, gast.Constant)) or (
                isinstance(value, gast.Attribute) and chain_root(value) not in self.version)
            resolved = self.atom(value) if simple else self.operation(value)
            if isinstance(value, gast.List):  # `[a]`: the list keeps a, written into later
                resolved.elts = [self.element(e) for e in resolved.elts]
            if isinstance(value, gast.Subscript) and chain_root(value.value) in self.mutated:
                resolved = snapshot_of(self._store(resolved, None))
            elif not simple and target.id in self.unversioned and target.id in reads(resolved):
                # `s = s * x` in a loop: the backward sweep needs the old s and the new one
                resolved = self._store(resolved, None)
            if not simple and isinstance(resolved, gast.Name) and target.id in self.mutated:
                # a temporary (`v = a if c else b`, `s = s * x` above) would be the same
                # array as the name, so the name's later writes would reach it: a copy
                resolved = snapshot_of(resolved)
            if simple:
                resolved = self.value(resolved)  # `ys = hs` would give the list two names
                if self.needs_copy(target.id, resolved):
                    resolved = snapshot_of(resolved)
            ssa = self.define(target.id)
            if isinstance(resolved, gast.Name) and resolved.id == ssa:
                self.emit(gast.Pass())  # `x = x` (a name not versioned): nothing happens
                return
            if getattr(value, "callee", None) is None or not self.rename_temporary(
                    resolved, lambda: ssa, lambda v: not {ssa, target.id} & reads(v), ssa):
                self.assign(ssa, resolved)  # (`y = f(x)`: y takes f's last operation)
            (self.lists.add if isinstance(value, gast.List) else self.lists.discard)(ssa)
            return
        self.bind_tuple(target, value)

    def bind_tuple(self, target, value):
        """Tuple target: evaluate the whole right-hand side before binding any name."""
        if getattr(value, "callee", None) is not None:
            value = self.call_user(value)
        if isinstance(value, gast.Tuple) and len(value.elts) == len(target.elts):
            parts = [self.atom(e) for e in value.elts]
            # `u, v = v, u` of names that keep one name in loops moves the arrays: no copy
            rebound = self.bound_by(target.elts) & self.unversioned
            moved = [isinstance(p, gast.Name) and p.id in rebound for p in parts]
            for k, part in enumerate(parts):  # `u, v = v, u`: v's value read before u is bound
                if isinstance(part, gast.Name) and part.id in self.bound_by(target.elts[:k]):
                    parts[k] = self._store(part, None)
            parts = [self.kept(sub, part, not move and self.shared_element(sub, e))
                     for sub, part, move, e in zip(target.elts, parts, moved, value.elts)]
        else:
            whole = self.atom(value)
            if isinstance(whole, gast.Name) and whole.id in self.bound_by(target.elts):
                whole = self._store(whole, None)  # `a, b = a`: b is read from the old a
            rows = getattr(whole, "id", None) in self.mutated  # `a, b = M`: rows are views
            parts = [self.kept(sub, part, rows or getattr(sub, "id", None) in self.mutated)
                     for sub, part in zip(target.elts, self.unpack(whole, len(target.elts)))]
        self.bind_resolved(target, parts)

    def bound_by(self, targets) -> set[str]:
        """The current names of the user names a list of targets rebinds."""
        return {self.version.get(n.id, n.id) for t in targets for n in walk(t)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}

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


def _all_names(resolved: Resolved) -> set[str]:
    trees = [resolved.tree, *resolved.local_functions.values()]
    return {n.id for tree in trees for n in walk(tree) if isinstance(n, gast.Name)}


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


def _keep_mark(user_loop, loop):
    """`loop` with the checkpoint mark of the user's loop (frontend/checkpoint_marks.py)."""
    if hasattr(user_loop, "srcgrad_checkpoint"):
        loop.srcgrad_checkpoint = user_loop.srcgrad_checkpoint
        loop.srcgrad_user_loop = user_loop
    return loop


def is_break_check(stmt) -> bool:
    """`if _brkK: break`, which desugar puts last in the body of a loop that can break."""
    return isinstance(stmt, gast.If) and any(isinstance(s, gast.Break) for s in stmt.body)
