"""Pass 4, normalize: one operation per statement (A-normal form) in SSA names.

Guarantees to the next pass (`Normalized.body`), where an *atom* is a name,
a constant, or a static dotted reference such as `np.pi`:

    name = atom                      copy
    name = atom <op> atom            BinOp
    name = <op> atom                 UnaryOp (-x, +x, not x, ~x)
    name = atom <cmp> atom           Compare (one comparison)
    name = f(atom, ..., k=atom)      Call; f is a static dotted name (see resolve)
    name = atom.shape|size|ndim      data attribute
    name = atom[index]               index: atom, slice of atoms, or tuple of those
    name = (atom, ...)               tuple
    f(atom, ...)                     call for its effect (print)
    assert atom
    return atom                      exactly once, last

Every name is assigned at most once (SSA): a user variable keeps its name at
its first assignment and becomes `x__2`, `x__3`, ... at later ones, so the
backward sweep can read every intermediate value. Temporaries are `_t1`,
`_t2`, .... Each statement keeps the line number of the user statement it
came from.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import gast

from .resolve import Resolved

_SYMBOL = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**",
           gast.MatMult: "@", gast.Mod: "%", gast.FloorDiv: "//"}


@dataclass
class Normalized:
    resolved: Resolved
    body: list  # statements in the forms above; the last one is `return atom`
    inputs: list[str]  # parameters, then data globals, in generated-signature order

    @property
    def result(self):
        return self.body[-1].value


def _name(id_, ctx=None):
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def _chain_root(node):
    while isinstance(node, gast.Attribute):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


class _Normalizer:
    def __init__(self, resolved: Resolved):
        self.inputs = resolved.params + resolved.data_globals
        self.version = {name: name for name in self.inputs}  # user name -> current SSA name
        self.count = {name: 1 for name in self.inputs}
        self.temps = itertools.count(1)
        self.out: list = []
        self.where = None  # the user statement being normalized
        self.parsed = resolved.parsed
        self.copied_from: dict[str, str] = {}  # y -> x after `y = x` (they share memory)

    # ---- naming ------------------------------------------------------------------
    def fresh_temp(self) -> str:
        return f"_t{next(self.temps)}"

    def define(self, user_name: str) -> str:
        n = self.count.get(user_name, 0) + 1
        self.count[user_name] = n
        self.version[user_name] = user_name if n == 1 else f"{user_name}__{n}"
        return self.version[user_name]

    def emit(self, stmt):
        self.out.append(gast.copy_location(stmt, self.where))

    def assign(self, target: str, value):
        self.emit(gast.Assign(targets=[_name(target, gast.Store())], value=value, type_comment=None))

    # ---- expressions -------------------------------------------------------------
    def atom(self, node, target: str | None = None):
        """Emit statements computing `node`; return an atom holding its value.

        With `target`, the final operation is assigned straight to that SSA name.
        """
        if isinstance(node, gast.UnaryOp) and isinstance(node.operand, gast.Constant) \
                and isinstance(node.op, (gast.USub, gast.UAdd)):
            sign = -1 if isinstance(node.op, gast.USub) else 1
            node = gast.Constant(value=sign * node.operand.value, kind=None)  # x[-1]
        if isinstance(node, gast.Constant):
            return self._store(node, target) if target else node
        if isinstance(node, gast.Name):
            current = _name(self.version.get(node.id, node.id))
            return self._store(current, target) if target else current
        if isinstance(node, gast.Attribute) and _chain_root(node) not in self.version:
            return self._store(node, target) if target else node  # static, e.g. np.pi
        return self._store(self.operation(node), target)

    def _store(self, value, target):
        name = target or self.fresh_temp()
        self.assign(name, value)
        return _name(name)

    def operation(self, node):
        """`node` with every operand replaced by an atom (one operation left)."""
        if isinstance(node, gast.BinOp):
            return gast.BinOp(left=self.atom(node.left), op=node.op, right=self.atom(node.right))
        if isinstance(node, gast.UnaryOp):
            return gast.UnaryOp(op=node.op, operand=self.atom(node.operand))
        if isinstance(node, gast.Compare):
            return gast.Compare(left=self.atom(node.left), ops=node.ops,
                                comparators=[self.atom(node.comparators[0])])
        if isinstance(node, gast.Call):
            return gast.Call(func=node.func, args=[self.atom(a) for a in node.args],
                             keywords=[gast.keyword(arg=k.arg, value=self.atom(k.value))
                                       for k in node.keywords])
        if isinstance(node, gast.Attribute):
            return gast.Attribute(value=self.atom(node.value), attr=node.attr, ctx=gast.Load())
        if isinstance(node, gast.Subscript):
            return gast.Subscript(value=self.atom(node.value), slice=self.index(node.slice),
                                  ctx=gast.Load())
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.atom(e) for e in node.elts], ctx=gast.Load())
        raise AssertionError(f"check() let {type(node).__name__} through")

    def index(self, node):
        if isinstance(node, gast.Slice):
            return gast.Slice(*(None if part is None else self.atom(part)
                                for part in (node.lower, node.upper, node.step)))
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.index(e) for e in node.elts], ctx=gast.Load())
        return self.atom(node)

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
            source = self.copied_from.get(stmt.target.id)
            if source is not None:
                self.forbid_alias(stmt, source)
            load = _name(stmt.target.id)
            self.bind(stmt.target, gast.BinOp(left=load, op=stmt.op, right=stmt.value))
        elif isinstance(stmt, gast.AnnAssign):
            if stmt.value is not None:
                self.bind(stmt.target, stmt.value)
        elif isinstance(stmt, gast.Return):
            self.emit(gast.Return(value=self.atom(stmt.value)))
        elif isinstance(stmt, gast.Expr):
            if isinstance(stmt.value, gast.Call):
                self.emit(gast.Expr(value=self.operation(stmt.value)))
        elif isinstance(stmt, gast.Assert):
            self.emit(gast.Assert(test=self.atom(stmt.test), msg=stmt.msg))

    def forbid_alias(self, stmt, source: str):
        """`z = x; z += y` rebinds z for numbers, but NumPy updates an array z (and x) in place."""
        z = stmt.target.id
        loc = self.parsed.loc(stmt)
        message = (f"{loc}: `{loc.text.strip()}` would update {z!r} in place, and {z!r} is the "
                   f"same array as {source!r}; srcgrad does not differentiate through writes to "
                   f"shared arrays. Write {z} = {z} {_SYMBOL.get(type(stmt.op), '+')} ... "
                   f"(a new array) or {z} = {source}.copy().")
        self.emit(gast.Expr(value=gast.Call(
            func=_name("forbid_array_alias"),
            args=[_name(self.version[z]), gast.Constant(value=message, kind=None)], keywords=[])))

    def bind(self, target, value):
        """Assign user expression `value` to user target `target` (a name or a tuple)."""
        if isinstance(target, gast.Name):
            self.copied_from.pop(target.id, None)
            if isinstance(value, gast.Name) and value.id in self.version:
                self.copied_from[target.id] = value.id
            # Evaluate before versioning the name: `x = x * 2` reads the old x.
            simple = isinstance(value, (gast.Name, gast.Constant)) or (
                isinstance(value, gast.Attribute) and _chain_root(value) not in self.version)
            resolved = self.atom(value) if simple else self.operation(value)
            self.assign(self.define(target.id), resolved)
            return
        # Tuple target: evaluate the whole right-hand side before binding any name.
        if isinstance(value, gast.Tuple) and len(value.elts) == len(target.elts):
            parts = [self.atom(e) for e in value.elts]
        else:
            parts = self.unpack(self.atom(value), len(target.elts))
        self.bind_resolved(target, parts)

    def unpack(self, whole, n):
        return [gast.Subscript(value=whole, slice=gast.Constant(value=i, kind=None),
                               ctx=gast.Load()) for i in range(n)]

    def bind_resolved(self, target, parts):
        """Bind already-normalized `parts` (atoms or `atom[i]`) to a tuple target."""
        if len(parts) != len(target.elts):
            raise AssertionError("tuple arity checked by unpack")
        for sub_target, part in zip(target.elts, parts):
            if isinstance(sub_target, gast.Name):
                self.assign(self.define(sub_target.id), part)
            else:
                whole = part if isinstance(part, gast.Name) else self._store(part, None)
                self.bind_resolved(sub_target, self.unpack(whole, len(sub_target.elts)))


def normalize(resolved: Resolved) -> Normalized:
    norm = _Normalizer(resolved)
    for stmt in resolved.tree.body:
        norm.statement(stmt)
    return Normalized(resolved, norm.out, norm.inputs)
