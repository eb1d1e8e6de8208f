"""The compiled form reads and writes through views as elements of the array they view.

Inlining a call binds its array arguments to views (`cam = cams[i]`, `rot = cam[0:3]`,
`_adj_cam = _adj_cams[i]`), and every view numba makes takes and drops a reference to
its array: two atomic operations. In ba's loop over observations these were two thirds
of the gradient's time. `flatten_views(func, kinds)` rewrites a view `v = a[idx]` whose
every use the rule below allows: `v[j]` becomes `a[i, j]` (`a[i, lo + j]` through a
slice `lo:hi`), `v.shape` the view's extents computed from `a.shape`, and the binding a
check that an integer index is in bounds (numba's boundscheck raised there before).

Only views bound inside loops are rewritten (one outside a loop is made once).

Soundness rule. A view's elements are its array's elements at fixed offsets: `a[i][j]`
is `a[i, j]` and `a[lo:hi][j]` is `a[start + j]` for 0 <= j < the slice's length, as
long as `a` and the index's names are not bound again; start is lo for a constant lo >= 0
(past the end the slice is empty and no j exists), else `slice_at(lo, n)` for the extent
n: NumPy's reading of a bound (negative: from the end; then clamped to 0..n). For each
name `v` every binding is `v = b[idx]`, `b` an array (or a view flattened in turn) of
known rank, `idx` integers (names or constants) and slices `lo:hi` without a step whose
bounds are absent, integer constants or integer names (a view of a view is a view of the
first once the first is flattened, in the next round); and every mention of `v` is in
the *region* of one binding: the statements after it in its block, up to the first that
binds `v`, the array or a name of the index or of a bound (at any depth). There `v` is
used only as:
- `v[j, ...]` with one index per dimension, each a constant, or a name for an integer
  dimension; through a slice, a constant 0 <= j < hi - lo (constant bounds) or the
  target of a `for j in range(n[d])` inside the region where the region checked `n`
  against `v`'s shape (`same_shape(v, n)` or `n = v.shape`): j is then within the slice;
- `v.shape`, or `same_shape(v, n)` (the check then compares the computed extents);
- the array of another view's binding `w = v[...]` over its whole dimensions (`w` then
  views `a` directly: `w = a[i, 0:3]`).
A slice's length is `max(0, stop - start)` for an extent n, stop being n (no bound),
`min(hi, n)` (a constant) or `slice_at(hi, n)`, as NumPy clamps it. Names failing any of
this keep their views. Loop-carried reads (a mention before the binding in a loop body)
and reads after the region are not covered, so such names are kept too, unless they only
read the shape and every binding views one array, never bound again, with the same
constant slices (the extents are then the same wherever they are read).

Each name's regions are all checked before any is rewritten, in place.
"""
from __future__ import annotations

import copy

import gast

from ..analysis import kinds as K
from ..frontend.trees import ByNode, stores_in
from ..syntax import blocks, call, const, is_comment, name, walk

_SLICE, _INT = "slice", "int"


def flatten_views(func: gast.FunctionDef, kinds: dict) -> int:
    """Rewrite every view the rule allows (module doc); how many names."""
    tried, done = set(), 0
    while True:  # rounds: a view of a flattened view is taken in the next one
        views = _candidates(func, kinds)
        todo = [v for v in views if v not in tried]
        if not todo:
            return done
        changed, reread, attached, loads = set(), set(), None, _loads(func)
        stored, memo = stores_in(func), _Statements()
        for var in todo:
            if changed and attached is None:
                attached = {id(b) for b in blocks(func.body)}
            if var in reread or any(
                    view[0] in changed or (attached is not None and id(block) not in attached)
                    or not any(s is stmt for s in block) for block, stmt, view in views[var]):
                continue  # its view, its binding or its reads changed: the next round
            tried.add(var)
            if _flatten(func, var, views[var], loads.get(var, []), stored, memo):
                done += 1
                changed.add(var)
                reread |= {view[0] for _, _, view in views[var]}
                attached = None


class _Statements(ByNode):
    """A round's statements' binds and node ids (its rewrites change only loads)."""
    def __call__(self, stmt):
        return super().__call__(stmt, lambda: (stores_in(stmt),
                                               {id(n) for n in walk(stmt)}))


def _loads(func) -> dict:
    """name -> [(node, parent)] of every read of the name in `func`. Rewrites are made in
    place, so the nodes stay those of the tree; only a flattened name's array gains reads
    (it is then not rewritten again in the round)."""
    found = {}
    for parent in walk(func):
        for node in gast.iter_child_nodes(parent):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                found.setdefault(node.id, []).append((node, parent))
    return found


def _candidates(func, kinds) -> dict:
    """name -> [(block, binding, (array, parts))] for names whose every binding is a view
    of an array of known rank; parts: one per dimension, None (whole), (_INT, node) or
    (_SLICE, lo, hi)."""
    found, bad = {}, set()
    inside = {id(b) for block in blocks(func.body) for loop in block
              if isinstance(loop, (gast.For, gast.While)) for b in blocks(loop.body)}
    for block in blocks(func.body):
        for stmt in block:
            target = _target(stmt)
            for node in _own_nodes(stmt):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    view = _view_of(stmt.value, kinds) if node is target and \
                        id(block) in inside else None  # once outside loops: not worth it
                    if view is None:
                        bad.add(node.id)
                    else:
                        found.setdefault(node.id, []).append((block, stmt, view))
    return {v: b for v, b in found.items() if v not in bad}


def _own_nodes(stmt):
    """The nodes of `stmt` outside the statements nested in it."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        yield node
        stack += [c for c in gast.iter_child_nodes(node) if not isinstance(c, gast.stmt)]


def _target(stmt):
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name):
        return stmt.targets[0]
    return None


def _view_of(value, kinds):
    """(array, parts) when `value` is `b[idx]`, a view of an array of known rank."""
    if not (isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name)
            and K.is_array(kinds.get(value.value.id))):
        return None
    rank = kinds[value.value.id][1]
    index = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
    if len(index) > rank:
        return None
    parts = []
    for part in index:
        if isinstance(part, gast.Slice):
            bounds = [_bound(b, kinds) for b in (part.lower, part.upper)]
            if part.step is not None or any(b is False for b in bounds):
                return None
            parts.append((_SLICE, 0 if bounds[0] is None else bounds[0], bounds[1]))
        elif _integer(part, kinds):
            parts.append((_INT, part))
        else:
            return None
    parts += [None] * (rank - len(parts))
    if all(p is not None and p[0] == _INT for p in parts):
        return None  # an element, not a view
    return value.value.id, parts


def _bound(node, kinds):
    """A slice bound as kept in a part: None (absent), an int (a constant >= 0), the node
    itself (an integer name or a negative constant: `slice_at` clamps it), or False."""
    if node is None:
        return None
    if isinstance(node, gast.Constant) and type(node.value) is int and node.value >= 0:
        return node.value
    return node if _integer(node, kinds) else False


def _integer(node, kinds) -> bool:
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        node = node.operand  # a negative constant: -1
        return isinstance(node, gast.Constant) and type(node.value) is int
    if isinstance(node, gast.Constant):
        return type(node.value) is int
    return isinstance(node, gast.Name) and kinds.get(node.id) == K.I


def _flatten(func, var: str, bindings: list, loads: list, stored: set, memo) -> int:
    """Rewrite `var`'s uses and bindings if every mention is allowed: 1 if it was. `loads`:
    the reads of `var` (node, parent); `stored`: every name `func` binds."""
    plans = []
    for block, stmt, (array, parts) in bindings:
        at = next(k for k, s in enumerate(block) if s is stmt)
        guards = {array, var} | {n.id for p in parts if p for b in p[1:]
                                 if isinstance(b, gast.AST)
                                 for n in walk(b) if isinstance(n, gast.Name)}
        end = next((q for q in range(at + 1, len(block)) if memo(block[q])[0] & guards),
                   len(block))
        plans.append((block, at, end, array, parts))
    covered = set().union(*[memo(s)[1] for block, at, end, *_ in plans
                            for s in block[at + 1:end]])
    outside = [(n, parent) for n, parent in loads if id(n) not in covered]
    mine = {id(n) for n, _ in loads}  # (a statement without them has nothing to rewrite)
    if outside and not (_same_extents(plans, stored) and all(_shape_use(n, p)
                                                              for n, p in outside)):
        return 0  # read outside every region (carried by a loop, or after it)
    for apply in (False, True):  # check every region, then rewrite them in place
        for block, at, end, array, parts in reversed(plans):  # later blocks first
            region = block[at + 1:end]
            rewriter = _Uses(var, array, parts, _checked_shapes(region, var), region, apply)
            for k, s in enumerate(region):
                if memo(s)[1] & mine:
                    rewriter.position = k
                    block[at + 1 + k] = rewriter.visit(s)
            if rewriter.failed:
                return 0
            if apply:
                block[at:at + 1] = _index_checks(block[at], array, parts)
                if all(is_comment(s) for s in block):  # a branch that only bound the view
                    block.append(gast.Pass())
    if outside:
        _, _, _, array, parts = plans[0]
        _Uses(var, array, parts, {}, [], apply=True).visit(func)  # the shapes read outside
    return 1


def _same_extents(plans, stored) -> bool:
    """Whether every binding views one array, never bound again, with the same slices:
    then every binding has the same extents, read anywhere (an array keeps its shape)."""
    arrays = {p[3] for p in plans}
    slices = {tuple(q if q is None or q[0] == _SLICE else _INT for q in p[4]) for p in plans}
    return (len(arrays) == 1 and len(slices) == 1  # constant bounds: the same extents
            and not any(isinstance(b, gast.AST) for q in plans[0][4]
                        if q and q[0] == _SLICE for b in q[1:])
            and not stored & arrays)


def _shape_use(node, parent) -> bool:
    """`v.shape`, or `v` as the first argument of `same_shape`."""
    if isinstance(parent, gast.Attribute):
        return parent.attr == "shape"
    return isinstance(parent, gast.Call) and _is(parent.func, "same_shape") \
        and len(parent.args) == 2 and parent.args[0] is node


def _checked_shapes(region, var) -> dict:
    """Names `n` checked against `var`'s shape by a statement of the region itself
    (`same_shape(var, n)`, `n = var.shape`) -> the statement's position."""
    found = {}
    for k, stmt in enumerate(region):
        node = stmt.value if isinstance(stmt, (gast.Expr, gast.Assign)) else None
        if isinstance(node, gast.Call) and _is(node.func, "same_shape") \
                and len(node.args) == 2 and _is(node.args[0], var) \
                and isinstance(node.args[1], gast.Name):
            found.setdefault(node.args[1].id, k)
        if isinstance(stmt, gast.Assign) and _target(stmt) is not None \
                and isinstance(node, gast.Attribute) and node.attr == "shape" \
                and _is(node.value, var):
            found.setdefault(stmt.targets[0].id, k)
    return found


def _is(node, var) -> bool:
    return isinstance(node, gast.Name) and node.id == var


class _Uses(gast.NodeTransformer):
    """Checks (then, with `apply`, rewrites in place) the uses of a view in its region;
    `failed` if any use is not allowed."""

    def __init__(self, var, array, parts, checked, region, apply=False):
        self.var, self.array, self.parts = var, array, parts
        self.checked, self.region, self.failed = checked, region, False
        self.apply = apply  # False: only check (the tree is left as it is)
        self.free = [d for d, p in enumerate(parts) if p is None or p[0] == _SLICE]
        self.loops, self.position = [], 0  # the `for` loops around the node visited

    def visit_For(self, node):
        self.loops.append(node)
        try:
            return self.generic_visit(node)
        finally:
            self.loops.pop()

    def visit_Subscript(self, node):
        if not _is(node.value, self.var):
            return self.generic_visit(node)
        node.slice = self.visit(node.slice)
        index = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        if len(index) > len(self.free):
            self.failed = True
            return node
        full = []
        for d, part in enumerate(self.parts):
            if part is not None and part[0] == _INT:
                full.append(copy.deepcopy(part[1]))
                continue
            k = self.free.index(d)
            if k >= len(index):
                full.append(gast.Slice(lower=None, upper=None, step=None) if part is None
                            else gast.Slice(lower=_node(part[1]), upper=_node(part[2]),
                                            step=None))
                continue
            j = index[k]
            if part is None:
                ok = isinstance(j, (gast.Name, gast.Constant, gast.Slice))
                full.append(j)
            else:
                ok = self._within(j, part, k)
                start = _start(self.array, d, part[1])
                full.append(j if start is None else
                            gast.BinOp(left=start, op=gast.Add(), right=j))
            if not ok:
                self.failed = True
        if self.apply:
            node.value = name(self.array)
            node.slice = full[0] if len(full) == 1 else gast.Tuple(elts=full, ctx=gast.Load())
        return node

    def visit_Attribute(self, node):
        if _is(node.value, self.var) and node.attr == "shape":
            return self._extents() if self.apply else node
        return self.generic_visit(node)

    def visit_Call(self, node):
        if _is(node.func, "same_shape") and node.args and _is(node.args[0], self.var):
            rest = [self.visit(a) for a in node.args[1:]]
            if self.apply:
                node.args = [self._extents()] + rest
            return node
        return self.generic_visit(node)

    def visit_Name(self, node):
        if node.id == self.var:
            self.failed = True  # any other use keeps the view
        return node

    def _within(self, j, part, dim) -> bool:
        """Whether index `j` of a slice `lo:hi` stays inside it (module doc): a constant
        inside, or the target of the innermost loop binding it, `for j in range(n[dim])`
        with `n` checked against the view before the loop's statement, and j bound
        nowhere else in that loop."""
        _, lo, hi = part
        if isinstance(j, gast.Constant):
            return type(j.value) is int and type(lo) is int and type(hi) is int \
                and 0 <= j.value < hi - lo
        loop = next((f for f in reversed(self.loops) if _is(f.target, getattr(j, "id", None))),
                    None)
        if loop is None or not (isinstance(loop.iter, gast.Call) and _is(loop.iter.func, "range")
                                and len(loop.iter.args) == 1):
            return False
        bound = loop.iter.args[0]
        if not (isinstance(bound, gast.Subscript) and isinstance(bound.value, gast.Name)
                and isinstance(bound.slice, gast.Constant) and bound.slice.value == dim):
            return False
        checked = self.checked.get(bound.value.id, self.position)
        return checked < self.position and not any(  # n, j not bound again
            bound.value.id in stores_in(s) for s in self.region[checked + 1:self.position]) \
            and not any(j.id in stores_in(s) for s in loop.body)

    def _extents(self):
        dims = []
        for d in self.free:
            part = self.parts[d]
            extent = _extent(self.array, d)
            if part is not None:
                _, lo, hi = part
                if hi is not None:  # NumPy's clamped stop
                    extent = call("min", const(hi), extent) if type(hi) is int \
                        else call("slice_at", copy.deepcopy(hi), extent)
                start = _start(self.array, d, lo)
                if start is not None:
                    extent = call("max", const(0), gast.BinOp(left=extent, op=gast.Sub(),
                                                              right=start))
            dims.append(extent)
        return gast.Tuple(elts=dims, ctx=gast.Load())


def _index_checks(binding, array, parts) -> list:
    """What replaces the binding: `index_in(a.shape[d], i)` per integer index (numba's
    boundscheck raised at the view before)."""
    checks = []
    for d, part in enumerate(parts):
        if part is not None and part[0] == _INT:
            checks.append(gast.copy_location(gast.Expr(value=call(
                "index_in", _extent(array, d), copy.deepcopy(part[1]))), binding))
    return checks


def _node(bound):
    """A part's slice bound as the expression it was."""
    return const(bound) if type(bound) is int else copy.deepcopy(bound)


def _start(array: str, d: int, lo):
    """Where a slice with lower bound `lo` starts in dimension d of `array` (None: at 0).
    A constant lo >= 0 is its start wherever the slice has elements (past the end it has
    none: no index is then read); a name or negative constant is clamped as NumPy does."""
    if type(lo) is int:
        return None if lo == 0 else const(lo)
    return call("slice_at", copy.deepcopy(lo), _extent(array, d))


def _extent(array: str, d: int):
    """`array.shape[d]`."""
    return gast.Subscript(value=gast.Attribute(value=name(array), attr="shape", ctx=gast.Load()),
                          slice=const(d), ctx=gast.Load())
