"""The compiled form recomputes, where they are read, the elements of an array that a loop
fills with a few arithmetic operations and that later code only reads element by element.

The backward sweep of a step makes arrays like `_adj_k3 = 2.0 * h * _adj_y / 6.0` that
the statements after it read one element at a time: writing them to memory and reading
them back costs more than the three multiplications (ode's backward sweep makes a dozen
such arrays per step; det's makes one per minor). `contract(func, kinds)` removes such an
array `t`: its allocation, its store in the loop, and each read `t[i, j]` becomes the
arithmetic that computed element (i, j).

Soundness rule. In a block, `t = np.empty(n)` is followed (with statements between that
do not mention `t`) by the loop nest `for k1 in range(n[0]): ... for kr in range(n[r-1])`
(r the rank of t; nothing else in the outer bodies) whose innermost body, simple
statements only (no branch, no break), stores into `t` once, `t[k1, ..., kr] = v`, and mentions it nowhere else. `v`'s expression E, after
replacing the body's names bound once before the store by their values, has at most
three operations `+ - *` (or a unary `-`; not `/`, which costs more than the memory it
would save: ode's `_adj_y / 6.0 * h` read three times ran slower) whose operands are
constants, numbers bound outside the loop, and *leaves* `a[k1, ..., kr]`, at least one,
each `a` a float array bound outside the loop whose shape the block checked to be `n`
(`n = a.shape` or `same_shape(a, n)` before the loop, neither rebound since), whose
memory (analysis/roots.py, no UNKNOWN) the loop does not write; E's kind is a float.
Then `t[i1, ..., ir]` is E at k = i for every index i, an IndexError where t's read is one
(each leaf has t's shape: the same element, the same wrap of a negative index), as long as
nothing rebinds `t`, `n` or E's names and nothing writes the leaves' memory: the *region*
is the statements of the block after the loop up to the first that does any of these (at
any depth; a call srcgrad does not know writes UNKNOWN). Every mention of `t` besides its
allocation and its store must be in the region, as a read `t[i1, ..., ir]` of integers,
`t.shape` (becomes `n`) or `same_shape(t, m)` (becomes `same_shape(n, m)`). The values
are bit for bit the same: the same operations on the same operands in the same order.
Statements of the loop left computing only what nobody reads are dropped, and the loop
with them if nothing is left.
"""
from __future__ import annotations

import copy

import gast

from ..analysis import kinds as K
from ..analysis.roots import UNKNOWN, of_expr, roots as roots_of
from ..frontend.trees import stores_in
from ..syntax import blocks, is_call, is_comment, is_name, name, named, walk
from .elementwise import effects

_MAX_OPS = 3


def contract(func: gast.FunctionDef, kinds: dict, generated=frozenset()) -> int:
    """Remove every array the rule allows (module doc); how many. `generated`: the names
    of the module's generated functions (analysis/roots.py)."""
    done, tried = 0, set()
    roots = roots_of(func, kinds, generated)
    while True:
        for block in blocks(func.body):
            hit = next((k for k, s in enumerate(block) if id(s) not in tried
                        and _allocated(s, kinds)), None)
            if hit is not None:
                break
        else:
            return done
        tried.add(id(block[hit]))
        if _contract(func, block, hit, kinds, roots):
            done += 1
            roots = roots_of(func, kinds, generated)


def _allocated(stmt, kinds):
    """(t, n) for `t = np.empty(n)`, t a float array, n a name."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Call):
        func, args = stmt.value.func, stmt.value.args
        if isinstance(func, gast.Attribute) and is_name(func.value, "np") \
                and func.attr == "empty" and len(args) == 1 and isinstance(args[0], gast.Name) \
                and not stmt.value.keywords and K.is_array(kinds.get(stmt.targets[0].id)):
            return stmt.targets[0].id, args[0].id
    return None


def _contract(func, block, at, kinds, roots) -> bool:
    t, n = _allocated(block[at], kinds)
    rank = kinds[t][1]
    loop_at = next((k for k in range(at + 1, len(block)) if named(block[k], t)), None)
    if loop_at is None:
        return False
    nest = _nest(block[loop_at], n, rank)
    if nest is None:
        return False
    targets, body = nest
    store = _store(body, t, targets)
    if store is None:
        return False
    element = _Element(body, store, targets, block[:loop_at], n, kinds)
    value = element.of(store.value)
    if value is None:
        return False
    expr, leaves = value
    leaf_roots = frozenset().union(*(roots.get(a, {UNKNOWN}) for a in leaves))
    loop = block[loop_at]
    if UNKNOWN in leaf_roots or _written(loop, kinds, roots) & leaf_roots:
        return False
    guards = {t, n} | {x.id for x in walk(expr) if isinstance(x, gast.Name)} - set(targets)
    end, new = len(block), set()
    for k in range(loop_at + 1, len(block)):
        if stores_in(block[k]) & guards \
                or _written(block[k], kinds, roots, new) & (leaf_roots | {UNKNOWN}):
            end = k
            break
        new = (new - stores_in(block[k])) | _allocates(block[k], kinds, roots)
    region = block[loop_at + 1:end]
    allowed = {id(block[at].targets[0])} | {id(x) for x in named(store.targets[0], t)}
    inside = {id(x) for s in region for x in named(s, t)}
    if any(id(x) not in allowed | inside for x in named(func, t)):
        return False
    reads = _Reads(t, n, rank, expr, targets, kinds)
    for s in region:
        reads.visit(s)
    if reads.failed:
        return False
    reads.apply = True
    for s in region:
        reads.visit(s)
    body.remove(store)
    _drop_dead(func, body, element)
    if all(is_comment(s) for s in body):
        block.remove(loop)
    del block[at]
    return True


def _nest(loop, n, rank):
    """(targets, innermost body) when `loop` is `for k1 in range(n[0]): ... for kr in
    range(n[r-1])` with nothing else in the outer bodies and only simple statements in the
    innermost one (no branch or break: every element is stored)."""
    targets = []
    for d in range(rank):
        if not (isinstance(loop, gast.For) and not loop.orelse
                and isinstance(loop.target, gast.Name) and is_call(loop.iter, "range")
                and len(loop.iter.args) == 1 and _is_extent(loop.iter.args[0], n, d)):
            return None
        targets.append(loop.target.id)
        if d < rank - 1:
            inner = [s for s in loop.body if not is_comment(s)]
            if len(inner) != 1:
                return None
            loop = inner[0]
    simple = all(isinstance(s, (gast.Assign, gast.AugAssign, gast.Expr)) for s in loop.body)
    return (targets, loop.body) if len(set(targets)) == rank and simple else None


def _is_extent(node, n, d) -> bool:
    """`n[d]`."""
    return isinstance(node, gast.Subscript) and is_name(node.value, n) \
        and isinstance(node.slice, gast.Constant) and node.slice.value == d


def _at_targets(index, targets) -> bool:
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return len(parts) == len(targets) and all(is_name(p, k) for p, k in zip(parts, targets))


def _store(body, t, targets):
    """The body's only statement mentioning `t`, if it is `t[k1, ..., kr] = v`."""
    stores = [s for s in body if named(s, t)]
    if len(stores) != 1:
        return None
    s = stores[0]
    if isinstance(s, gast.Assign) and len(s.targets) == 1 \
            and isinstance(s.targets[0], gast.Subscript) and is_name(s.targets[0].value, t) \
            and _at_targets(s.targets[0].slice, targets) and len(named(s, t)) == 1:
        return s
    return None


class _Element:
    """E, the expression of the stored value (module doc), and its leaves' arrays."""

    def __init__(self, body, store, targets, before, n, kinds):
        self.targets, self.kinds, self.before, self.n = targets, kinds, before, n
        upto = body[:body.index(store)]
        bound = [x for s in body for x in stores_in(s)]
        self.local = {s.targets[0].id: s.value for s in upto
                      if isinstance(s, gast.Assign) and len(s.targets) == 1
                      and isinstance(s.targets[0], gast.Name)
                      and bound.count(s.targets[0].id) == 1}
        self.in_loop = set(bound) | set(targets)
        self.ops, self.leaves = 0, set()

    def of(self, value):
        expr = self._expr(value)
        if expr is None or not self.leaves or self.ops > _MAX_OPS \
                or K.kind_of(value, self.kinds) != K.F:
            return None
        return expr, self.leaves

    def _expr(self, node):
        if isinstance(node, gast.Constant):
            return copy.deepcopy(node) if type(node.value) in (int, float) else None
        if isinstance(node, gast.Name):
            if node.id in self.local:
                return self._expr(self.local[node.id])
            ok = node.id not in self.in_loop and K.is_number(self.kinds.get(node.id))
            return copy.deepcopy(node) if ok else None
        if isinstance(node, gast.Subscript):
            return self._leaf(node)
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            self.ops += 1
            inner = self._expr(node.operand)
            return None if inner is None else gast.UnaryOp(op=gast.USub(), operand=inner)
        if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub, gast.Mult)):
            self.ops += 1
            left, right = self._expr(node.left), self._expr(node.right)
            if left is None or right is None:
                return None
            return gast.BinOp(left=left, op=type(node.op)(), right=right)
        return None

    def _leaf(self, node):
        a = node.value.id if isinstance(node.value, gast.Name) else None
        kind = self.kinds.get(a)
        if a is None or a in self.in_loop or not _at_targets(node.slice, self.targets) \
                or not (K.is_array(kind) and kind[1] == len(self.targets) and kind[2] == "f") \
                or not self._checked(a):
            return None
        self.leaves.add(a)
        return copy.deepcopy(node)

    def _checked(self, a) -> bool:
        """`n = a.shape` or `same_shape(a, n)` in the block before the loop, neither name
        bound again after it."""
        for k in range(len(self.before) - 1, -1, -1):
            s = self.before[k]
            value = s.value if isinstance(s, (gast.Assign, gast.Expr)) else None
            if isinstance(s, gast.Assign) and len(s.targets) == 1 \
                    and is_name(s.targets[0], self.n) and isinstance(value, gast.Attribute) \
                    and value.attr == "shape" and is_name(value.value, a) \
                    or is_call(value, "same_shape") and len(value.args) == 2 \
                    and is_name(value.args[0], a) and is_name(value.args[1], self.n):
                later = self.before[k + 1:]
                return not any(stores_in(x) & {a, self.n} for x in later)
        return False


def _allocates(stmt, kinds, roots) -> set:
    """{x} when `stmt` is `x = e` and e makes a new array (its only root is this site)."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) and K.is_array(kinds.get(stmt.targets[0].id)):
        made = of_expr(stmt.value, roots, kinds, "new")
        return {stmt.targets[0].id} if made == {"new"} else set()
    return set()


def _written(stmt, kinds, roots, new=frozenset()) -> frozenset:
    """The roots of the memory any simple statement in `stmt` (at any depth) may write,
    but for writes into the names in `new`: arrays made since the loop (new memory, no
    leaf's)."""
    found = set()
    for node in walk(stmt):
        if isinstance(node, (gast.For, gast.While, gast.If)):
            for part in (getattr(node, "iter", None), getattr(node, "test", None)):
                if part is not None:
                    found |= _written(gast.Expr(value=part), kinds, roots)
        elif isinstance(node, (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)):
            base = node.targets[0] if isinstance(node, gast.Assign) and len(node.targets) == 1 \
                else getattr(node, "target", None)
            while isinstance(base, gast.Subscript):
                base = base.value
            if isinstance(base, gast.Name) and base.id in new and not any(
                    isinstance(x, gast.Call) for x in walk(node)):
                continue  # a write into an array made since the loop
            for access in effects(node, kinds, roots).mem:
                if access.write:
                    found |= access.roots
        elif isinstance(node, gast.stmt) and not isinstance(
                node, (gast.Pass, gast.Break, gast.Continue)):
            found.add(UNKNOWN)
    return frozenset(found)


class _Reads(gast.NodeTransformer):
    """Checks (then, with `apply`, rewrites) the region's mentions of `t` (module doc)."""

    def __init__(self, t, n, rank, expr, targets, kinds):
        self.t, self.n, self.rank, self.expr, self.targets = t, n, rank, expr, targets
        self.kinds, self.failed, self.apply = kinds, False, False

    def visit_Subscript(self, node):
        if not is_name(node.value, self.t):
            return self.generic_visit(node)
        node.slice = self.visit(node.slice)
        parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        if not isinstance(node.ctx, gast.Load) or len(parts) != self.rank \
                or any(K.kind_of(p, self.kinds) != K.I for p in parts):
            self.failed = True
            return node
        if not self.apply:
            return node
        at = dict(zip(self.targets, parts))
        return _Substitute(at).visit(copy.deepcopy(self.expr))

    def visit_Attribute(self, node):
        if is_name(node.value, self.t) and node.attr == "shape":
            return name(self.n) if self.apply else node
        return self.generic_visit(node)

    def visit_Call(self, node):
        if is_call(node, "same_shape") and len(node.args) == 2 and is_name(node.args[0], self.t):
            node.args[1] = self.visit(node.args[1])
            if self.apply:
                node.args[0] = name(self.n)
            return node
        return self.generic_visit(node)

    def visit_Name(self, node):
        if node.id == self.t:
            self.failed = True
        return node


class _Substitute(gast.NodeTransformer):
    """The loop's targets in E replaced by a read's indices."""

    def __init__(self, at):
        self.at = at

    def visit_Name(self, node):
        return copy.deepcopy(self.at[node.id]) if node.id in self.at else node


def _drop_dead(func, body, element):
    """Drop `x = e` from the loop body when nothing reads x and e cannot raise: arithmetic
    as in E (module doc) on numbers and on elements `a[k1, ..., kr]` of arrays of the
    checked shape, and NumPy's functions of them."""
    while True:
        reads = {x.id for x in walk(func) if isinstance(x, gast.Name)
                 and isinstance(x.ctx, gast.Load)}
        dead = [s for s in body if isinstance(s, gast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], gast.Name) and s.targets[0].id not in reads
                and _safe(s.value, element)]
        if not dead:
            return
        for s in dead:
            body.remove(s)


def _safe(node, element) -> bool:
    if isinstance(node, (gast.Constant, gast.Name)):
        return True
    if isinstance(node, gast.Subscript):
        a = node.value.id if isinstance(node.value, gast.Name) else None
        return a is not None and a not in element.in_loop \
            and _at_targets(node.slice, element.targets) and element._checked(a)
    if isinstance(node, gast.UnaryOp):
        return _safe(node.operand, element)
    if isinstance(node, gast.BinOp):
        divides = isinstance(node.op, gast.Div) and not (
            isinstance(node.right, gast.Constant) and node.right.value != 0)
        return isinstance(node.op, (gast.Add, gast.Sub, gast.Mult, gast.Div)) \
            and not divides and _safe(node.left, element) and _safe(node.right, element)
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
            and is_name(node.func.value, "np") and not node.keywords:
        return all(_safe(a, element) for a in node.args)
    return False
