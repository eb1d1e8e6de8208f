"""What a statement of a generated function reads and writes, and the per-element form of
the elementwise ones (for transforms/loops.py).

`effects(stmt, ...)` is what any simple statement may touch: the names it reads and
binds, and its memory accesses (an `Access`: the roots of an array, analysis/roots.py,
whether it writes and whether that write is an accumulation). It is conservative: every
array a statement mentions is read, except by a statement that only binds a view or an
alias (`v = x[i]`, `v = restore_at(tape, k, v)`); a call srcgrad does not know to be
free of effects writes `UNKNOWN`.

`Element` turns an expression whose value is an array of rank R into the expression of
one element of it, given which names are per-element values already (`scalar_of`): an
array name `x` becomes `x[i]` (an *operand*, whose shape the loop must check), a view
`x[k]` of rank R becomes a name bound before the loop and indexed (`view(...)`), and
srcgrad's helpers become what they compute when every array has the loop's shape:
`unbroadcast(g, t)` is g, `zeros_like(x)` 0.0, `zeros_plus(x, e)` e, `expand_to(g, x,
None, False)` and `seed_like` of a number that number. Arithmetic and NumPy's ufuncs keep
NumPy's meaning on numbers: a quotient with an element is `np.divide` (inf, not numba's
ZeroDivisionError), a power whose exponent is not a constant `np.power`. Anything else
raises `NotElementwise`. Guarantee: when every operand (and every array read for its shape
only, `templates`) has the loop's shape, the element expression evaluated at index i is
element i of the array the expression evaluates to, as NumPy computes it.
"""
from __future__ import annotations

from dataclasses import dataclass

import gast

from ..analysis.kinds import is_array, is_number, kind_of
from ..analysis.roots import UNKNOWN
from ..syntax import call, const, name, walk

UFUNCS = {"exp", "log", "log1p", "expm1", "log2", "log10", "sin", "cos", "tan", "tanh", "sinh",
          "cosh", "arcsin", "arccos", "arctan", "sqrt", "square", "abs", "absolute",
          "negative", "sign", "maximum", "minimum", "reciprocal", "exp2", "cbrt", "fabs",
          "arctan2", "hypot"}
_PURE = {"snapshot", "zeros_like", "zeros_plus", "unbroadcast", "expand_to", "seed_like",
         "fill_like", "tape_like", "tape_array", "trip_count", "range_last", "restore_at",
         "axis_extremum_share", "len", "float", "int", "range", "min", "max", "abs", "bool",
         "same_shape", "index_in", "slice_at"}
_VIEWS = {"restore_at"}  # helpers returning a view or an alias, reading no element


class NotElementwise(Exception):
    pass


@dataclass(frozen=True)
class Access:
    roots: frozenset
    path: tuple | None  # what names the memory (aligned accesses have equal paths), or None
    write: bool = False
    accumulate: bool = False


@dataclass
class Effects:
    reads: set
    binds: set
    mem: list


def dump(node) -> str:
    return gast.dump(node)


def names_in(node) -> set:
    return {n.id for n in walk(node) if isinstance(n, gast.Name)
            and not isinstance(n.ctx, gast.Store)}


def basic_index(index, kinds) -> bool:
    """Ints and slices only (a view, not a copy)."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return all(isinstance(p, gast.Slice) or kind_of(p, kinds) == ("num", "i") for p in parts)


def is_view(value, kinds) -> bool:
    """`value` makes a view or an alias of arrays without reading their elements."""
    if isinstance(value, gast.Name):
        return True
    if isinstance(value, gast.Subscript):
        return is_array(kind_of(value, kinds)) and basic_index(value.slice, kinds) \
            and is_view(value.value, kinds)
    if isinstance(value, gast.Attribute):
        return value.attr == "shape" or value.attr == "T" and is_view(value.value, kinds)
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Name) \
        and value.func.id in _VIEWS


def _calls(node):
    for sub in walk(node):
        if isinstance(sub, gast.Call):
            yield sub


def _call_effects(sub, roots, mem):
    func = sub.func
    if isinstance(func, gast.Name) and func.id in _PURE:
        return
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
            and func.value.id in ("np", "math"):
        return
    if isinstance(func, gast.Attribute) and func.attr in ("append", "pop", "extend") \
            and isinstance(func.value, gast.Name):
        mem.append(Access(roots.get(func.value.id, frozenset({UNKNOWN})), None, True))
        return
    if isinstance(func, gast.Name) and func.id in ("record_at", "restore") and sub.args \
            and isinstance(sub.args[0], gast.Name):
        mem.append(Access(roots.get(sub.args[0].id, frozenset({UNKNOWN})), None, True))
        return
    mem.append(Access(frozenset({UNKNOWN}), None, True))


def effects(stmt, kinds, roots) -> Effects:
    """What a simple statement reads, binds and touches in memory (see the module doc)."""
    binds, mem = set(), []
    if isinstance(stmt, gast.Assign):
        targets, value = stmt.targets, stmt.value
    elif isinstance(stmt, gast.AugAssign):
        targets, value = [stmt.target], stmt.value
    else:
        targets, value = [], stmt.value
    reads = names_in(stmt)
    viewing = isinstance(stmt, gast.Assign) and is_view(value, kinds)
    for target in targets:
        for node in walk(target):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                binds.add(node.id)
        if isinstance(target, gast.Subscript) or isinstance(stmt, gast.AugAssign) \
                and is_array(kinds.get(target.id)):
            base = target.value if isinstance(target, gast.Subscript) else target
            while isinstance(base, gast.Subscript):
                base = base.value
            key = base.id if isinstance(base, gast.Name) else None
            mem.append(Access(roots.get(key, frozenset({UNKNOWN})), None, True))
    if not viewing:
        for n in reads:
            if n in kinds and kinds[n][0] not in ("num", "tup"):  # (np, math: not in kinds)
                mem.append(Access(roots.get(n, frozenset({UNKNOWN})), None))
    for sub in _calls(stmt):
        _call_effects(sub, roots, mem)
    return Effects(reads, binds, mem)


class Element:
    """The per-element form of expressions in a loop of rank `rank` (see the module doc).

    `scalar_of(name)` is the per-element name of an array computed in the loop, or None;
    `view(node)` is the name bound before the loop to the view `node`; `index` the
    element's index expression. After `expr(...)`, `operands` and `templates` hold the
    arrays made outside the loop that it reads (element by element, or for their shape:
    names, or views `x[k]`, as written) and `reads` the names it reads.
    """

    def __init__(self, kinds, rank, scalar_of, view, index):
        self.kinds, self.rank, self.scalar_of, self.view = kinds, rank, scalar_of, view
        self.index = index
        self.operands, self.templates, self.reads = [], [], set()

    def _array(self, node) -> bool:
        kind = kind_of(node, self.kinds)
        if is_array(kind):
            if kind[1] != self.rank or kind[2] not in "fi":
                raise NotElementwise
            return True
        if not is_number(kind):
            raise NotElementwise
        return False

    def at(self, node):
        """The element of array `node` (a name or a view of rank R made outside the loop)."""
        if isinstance(node, gast.Name):
            scalar = self.scalar_of(node.id)
            self.reads.add(node.id)
            if scalar is not None:
                return name(scalar)
            self.operands.append(node)
            return gast.Subscript(value=name(node.id), slice=self.index(), ctx=gast.Load())
        if isinstance(node, gast.Subscript) and is_view(node, self.kinds) \
                and not any(self.scalar_of(n) for n in names_in(node)):
            self.reads |= names_in(node)
            self.operands.append(node)
            return gast.Subscript(value=name(self.view(node)), slice=self.index(),
                                  ctx=gast.Load())
        raise NotElementwise

    def template(self, node):
        """`node` read for its shape only (it must have the loop's shape)."""
        if not self._array(node):
            raise NotElementwise
        if isinstance(node, gast.Name) and self.scalar_of(node.id) is not None:
            self.reads.add(node.id)
            return
        self.at(node)
        self.templates.append(self.operands.pop())

    def expr(self, node):
        if not self._array(node):
            if any(is_array(self.kinds.get(n)) for n in names_in(node)):
                raise NotElementwise  # a number computed from arrays: a reduction
            self.reads |= names_in(node)
            return node
        if isinstance(node, (gast.Name, gast.Subscript)):
            return self.at(node)
        if isinstance(node, gast.BinOp):
            return self._binop(node)
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
            return gast.UnaryOp(op=node.op, operand=self.expr(node.operand))
        if isinstance(node, gast.Call):
            return self._call(node)
        raise NotElementwise

    def _binop(self, node):
        left, right = self.expr(node.left), self.expr(node.right)
        if isinstance(node.op, (gast.Add, gast.Sub, gast.Mult)):
            return gast.BinOp(left=left, op=node.op, right=right)
        if isinstance(node.op, gast.Div):
            if isinstance(right, gast.Constant) and right.value not in (0, 0.0) \
                    and isinstance(right.value, (int, float)):
                return gast.BinOp(left=left, op=node.op, right=right)
            return call(gast.Attribute(value=name("np"), attr="divide", ctx=gast.Load()),
                        left, right)
        if isinstance(node.op, gast.Pow):
            if isinstance(right, gast.Constant) and type(right.value) is int \
                    and 0 <= right.value <= 4:
                return gast.BinOp(left=left, op=node.op, right=right)
            return call(gast.Attribute(value=name("np"), attr="power", ctx=gast.Load()),
                        left, right)
        raise NotElementwise

    def _call(self, node):
        func, args = node.func, node.args
        if node.keywords:
            raise NotElementwise
        if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
                and func.value.id == "np" and func.attr in UFUNCS:
            return call(gast.Attribute(value=name("np"), attr=func.attr, ctx=gast.Load()),
                        *[self.expr(a) for a in args])
        helper = func.id if isinstance(func, gast.Name) else None
        if helper == "unbroadcast" and len(args) == 2:
            self.template(args[1])
            return self.expr(args[0])
        if helper == "snapshot" and len(args) == 1:
            return self.expr(args[0])
        if helper == "zeros_like" and len(args) == 1:
            self.template(args[0])
            return const(0.0)
        if helper == "seed_like" and len(args) == 1:
            self.template(args[0])
            return const(1.0)
        if helper == "zeros_plus" and len(args) in (2, 3):
            self.template(args[0])
            value = self.expr(args[1])
            if self._array(args[1]):
                return value
            return gast.BinOp(left=const(0.0), op=gast.Add(), right=value)
        if helper == "expand_to" and len(args) == 4 and not self._array(args[0]) \
                and isinstance(args[2], gast.Constant) and args[2].value is None:
            self.template(args[1])
            return self.expr(args[0])
        raise NotElementwise
