"""The LOOP statements of a window (windows.py) and their statements for one element.

`loop_form(window, stmt)` is the Item a statement would be as a LOOP statement, or None
(or it raises NotElementwise):
- `v = E`, E an expression of rank R >= 1 (elementwise.py): a new array of the loop,
  `v__e = e`; `v = w`, `v = unbroadcast(w, t)`, `v = zeros_plus(x, w, True)` of an
  array w of the loop: v names w's array (these return w itself when shapes agree);
- `v += E` / `v -= E` / `v *= E`: of an array of the loop, its element updated; of an
  array made outside, that array's element updated in place;
- `x[idx] = E` / `x[idx] += E` (a view of rank R made outside the loop);
- `record_at(tape, k, v)` of an array of the loop: a store into the row `tape[k]`
  (loops.py records an array the loop makes anyway after the loop instead);
- `if c: tape = tape_like(v, n)` of an array of the loop: the tape allocated before the
  loop (`np.empty((n,) + shape)`, what tape_like makes of a float64 array);
- `s = np.sum(E)`, `s = unbroadcast(E, t)` (t a number: the same sum) and `s += ...` /
  `s -= ...` of them, s a float, E of one dimension: a sum over the loop's elements,
  `_acc += e` in the loop, `_acc = 0.0` before it and `s = _acc` (`s += _acc`) after
  it. numba's np.sum adds the elements one by one from 0.0 in index order (any stride),
  as the loop does: the same number, bit for bit. (A matrix it adds in memory order, by
  columns if Fortran-ordered, which the loop's kinds do not tell: left to numba.) No
  later statement of the window may read or bind s (it would read it unfinished):
  windows.py ends the window there.
Each lists the arrays that must have the loop's shape, its memory accesses (roots and
the path of the view) and the loop's own arrays it touches.
"""
from __future__ import annotations

import gast

from ..analysis.kinds import is_array, is_number, kind_of
from ..analysis.roots import UNKNOWN, may_alias
from ..syntax import assign, is_call, name
from dataclasses import dataclass, field
from .elementwise import Access, Effects, NotElementwise, is_view, names_in

PRE, LOOP, POST = 0, 1, 2


@dataclass(eq=False)
class Component:
    """One loop: its rank and its LOOP statements in their order."""
    rank: int
    items: list = field(default_factory=list)


@dataclass(eq=False)
class Obj:
    """An array a loop computes, held element by element in the number `scalar`."""
    scalar: str
    comp: Component
    root: str  # stands for its memory in the accesses of statements outside the loop
    post_reads: bool = False  # a POST statement reads it


@dataclass(eq=False)
class Item:
    node: object
    pos: int
    phase: int
    eff: Effects
    note: object = None  # the `# ...` line comment in effect
    comp: Component | None = None
    body: list = field(default_factory=list)  # LOOP: its statements for one element
    arrays: list = field(default_factory=list)  # LOOP: arrays that must have the loop's shape
    obj_mem: list = field(default_factory=list)  # LOOP: accesses to the loops' own arrays
    bind: tuple | None = None  # LOOP: (name, Obj) it binds, new or aliased
    objs: list = field(default_factory=list)  # LOOP: the loops' arrays it reads or updates
    tape: tuple | None = None  # LOOP: a tape allocated before its loop (test, name, count)
    reduce: tuple | None = None  # LOOP: a sum (accumulator, the number it ends in, op)
    record: tuple | None = None  # LOOP: a record_at (tape, step, the Obj it records)

    @property
    def mem(self):
        return self.eff.mem + self.obj_mem


_UPDATES = (gast.Add, gast.Sub, gast.Mult)


def _rank(kind) -> int:
    if not is_array(kind) or kind[2] != "f":
        raise NotElementwise
    return kind[1]


def _base(node):
    while isinstance(node, gast.Subscript):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def _access(window, node, write=False, accumulate=False) -> Access:
    roots = window.fn.roots.get(_base(node), frozenset({UNKNOWN}))
    return Access(roots, window.path(node), write, accumulate)


def _checked(window, node):
    """The name whose shape the loop checks for the array `node` made outside."""
    return node if isinstance(node, gast.Name) else name(window.view(node))


def loop_form(window, stmt):
    if isinstance(stmt, gast.If):
        return _tape(window, stmt)
    if isinstance(stmt, gast.Expr) and is_call(stmt.value, "record_at"):
        return _record(window, stmt)
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, gast.Name) and _summed(stmt.value, window.fn.kinds) is not None:
            return _sum(window, stmt, target.id, None)
        if isinstance(target, gast.Name):
            return _bind(window, stmt, target.id)
        if isinstance(target, gast.Subscript):
            return _store(window, stmt, target, None)
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, _UPDATES):
        if isinstance(stmt.target, gast.Name) and stmt.target.id in window.objects:
            return _update(window, stmt)
        if isinstance(stmt.target, gast.Name) and isinstance(stmt.op, (gast.Add, gast.Sub)) \
                and _summed(stmt.value, window.fn.kinds) is not None:
            return _sum(window, stmt, stmt.target.id, stmt.op)
        return _store(window, stmt, stmt.target, stmt.op)
    return None


def _item(window, stmt, rank, element, body, binds=(), writes=(), objs=(), changed=()):
    """The LOOP Item of `stmt`: reads what `element` read, binds `binds`, writes `writes`
    (views made outside, with whether each write accumulates) and the loop's arrays
    `changed`."""
    reads = set(element.reads) | {n for w in writes for n in names_in(w[0])}
    mem = [_access(window, node) for node in element.operands] + [
        _access(window, node, True, acc) for node, acc in writes]
    for k, x in enumerate(mem):  # `y[1:] = y[:-1]`: NumPy reads every element first
        if x.write and any(may_alias(x.roots, y.roots) and (x.path is None or x.path != y.path)
                           for j, y in enumerate(mem) if j != k):
            raise NotElementwise
    objs = list(objs) + [window.objects[n] for n in element.reads if n in window.objects]
    arrays = [_checked(window, node) for node in
              element.operands + element.templates + [w[0] for w in writes]]
    item = Item(stmt, len(window.items), LOOP, Effects(reads, set(binds), mem), window.note,
                Component(rank), body, arrays)
    item.objs = list({id(o): o for o in objs}.values())
    item.obj_mem = [Access(frozenset({o.root}), None, any(o is c for c in changed))
                    for o in item.objs + [c for c in changed if c not in item.objs]]
    return item


def _aliased(window, value):
    """The loop's array `value` returns itself (an alias when shapes agree), and the
    arrays read for their shape only, or None."""
    if isinstance(value, gast.Name) and value.id in window.objects:
        return value.id, []
    if is_call(value, "unbroadcast") and len(value.args) == 2 and isinstance(
            value.args[0], gast.Name) and value.args[0].id in window.objects:
        return value.args[0].id, [value.args[1]]
    if is_call(value, "zeros_plus") and len(value.args) == 3 and isinstance(
            value.args[1], gast.Name) and value.args[1].id in window.objects \
            and isinstance(value.args[2], gast.Constant) and value.args[2].value is True:
        return value.args[1].id, [value.args[0]]
    return None


def _bind(window, stmt, target):
    kinds, value = window.fn.kinds, stmt.value
    rank = _rank(kind_of(value, kinds))
    element = window.element(rank)
    alias = _aliased(window, value)
    if alias is not None:
        source, shaped = alias
        element.reads.add(source)
        for node in shaped:
            element.template(node)
        obj = window.objects[source]
        if obj.comp.rank != rank:
            raise NotElementwise
        item = _item(window, stmt, rank, element, [], [target], objs=[obj])
        item.bind = (target, obj)
        return item
    if is_view(value, kinds):
        return None  # a view or an alias of arrays made outside: a PRE statement
    expr = element.expr(value)
    scalar = window.fn.fresh(f"{target}__e")
    obj = Obj(scalar, None, window.fn.fresh("_root"))
    item = _item(window, stmt, rank, element, [assign(scalar, expr)], [target],
                 changed=[obj])
    item.bind = (target, obj)
    return item


def _update(window, stmt):
    target = stmt.target.id
    obj = window.objects[target]
    element = window.element(obj.comp.rank)
    expr = element.expr(stmt.value)
    body = [assign(obj.scalar, gast.BinOp(left=name(obj.scalar), op=stmt.op, right=expr))]
    item = _item(window, stmt, obj.comp.rank, element, body, [target], objs=[obj],
                 changed=[obj])
    item.bind = (target, obj)
    return item


def _store(window, stmt, target, op):
    """`x[idx] = E`, `x[idx] += E`, `x += E` into an array made outside the loop."""
    kinds = window.fn.kinds
    base = _base(target)
    if base is None or base in window.objects or not is_view(target, kinds):
        return None
    rank = _rank(kind_of(target, kinds))
    element = window.element(rank)
    expr = element.expr(stmt.value)
    at = element.at(target)
    element.operands.pop()  # the target is written, not read: its access is a write
    at.ctx = gast.Store()
    if op is None:
        body = [gast.Assign(targets=[at], value=expr, type_comment=None)]
    else:
        body = [gast.AugAssign(target=at, op=op, value=expr)]
    return _item(window, stmt, rank, element, body,
                 writes=[(target, isinstance(op, (gast.Add, gast.Sub)))])


def _record(window, stmt):
    """`record_at(tape, k, v)` of an array of the loop: `tape[k][i] = v[i]`."""
    args = stmt.value.args
    if len(args) != 3 or not all(isinstance(a, gast.Name) for a in (args[0], args[2])):
        return None
    tape, step, value = args
    obj = window.objects.get(value.id)
    if obj is None or tape.id in window.objects:
        return None
    row = gast.Subscript(value=name(tape.id), slice=step, ctx=gast.Load())
    if _rank(kind_of(row, window.fn.kinds)) != obj.comp.rank:
        raise NotElementwise
    element = window.element(obj.comp.rank)
    expr = element.expr(value)
    at = element.at(row)
    element.operands.pop()
    at.ctx = gast.Store()
    body = [gast.Assign(targets=[at], value=expr, type_comment=None)]
    item = _item(window, stmt, obj.comp.rank, element, body, writes=[(row, False)])
    item.record = (tape.id, step, obj)
    return item


def _tape(window, stmt):
    """`if c: tape = tape_like(v, n)` of an array v of the loop (allocated before it)."""
    if stmt.orelse or len(stmt.body) != 1 or not isinstance(stmt.body[0], gast.Assign):
        return None
    alloc = stmt.body[0]
    target, value = alloc.targets[0], alloc.value
    if not (isinstance(target, gast.Name) and is_call(value, "tape_like")
            and len(value.args) == 2 and isinstance(value.args[0], gast.Name)):
        return None
    obj = window.objects.get(value.args[0].id)
    if obj is None or target.id in window.objects:
        return None
    element = window.element(obj.comp.rank)
    element.reads |= names_in(stmt.test) | names_in(value.args[1]) | {value.args[0].id}
    item = _item(window, stmt, obj.comp.rank, element, [], [target.id], objs=[obj])
    item.tape = (stmt.test, target.id, value.args[1])
    return item


def _summed(value, kinds):
    """E of `np.sum(E)` or of `unbroadcast(E, t)` with t a number (both the sum of E's
    elements), E a float64 array; else None."""
    if isinstance(value, gast.Call) and not value.keywords and len(value.args) == 1 \
            and isinstance(value.func, gast.Attribute) and value.func.attr == "sum" \
            and isinstance(value.func.value, gast.Name) and value.func.value.id == "np":
        summed = value.args[0]
    elif is_call(value, "unbroadcast") and len(value.args) == 2 \
            and is_number(kind_of(value.args[1], kinds)):
        summed = value.args[0]
    else:
        return None
    kind = kind_of(summed, kinds)
    return summed if is_array(kind) and kind[2] == "f" else None


def _sum(window, stmt, target, op):
    """`s = np.sum(E)`, `s += unbroadcast(E, t)`, ...: the elements added into `_acc`."""
    kinds = window.fn.kinds
    if kinds.get(target) != ("num", "f") or target in window.objects:
        return None
    summed = _summed(stmt.value, kinds)
    rank = _rank(kind_of(summed, kinds))
    if rank != 1:  # numba sums a matrix in memory order: a Fortran-ordered one by columns
        return None
    element = window.element(rank)
    expr = element.expr(summed)
    acc = window.fn.fresh("_acc")
    body = [gast.AugAssign(target=name(acc, store=True), op=gast.Add(), value=expr)]
    item = _item(window, stmt, rank, element, body, [target])
    if op is not None:
        item.eff.reads.add(target)
    item.reduce = (acc, target, op)
    return item
