"""Facts about the extents of arrays that a block of the compiled form establishes, for
transforms/bounds.py (which indices need no check).

A fact is a tuple:
- `("dim", A, p, E)`: `A.shape[p] == E`, where E is `("sub", S, d)` (the element d of the
  tuple named S) or `("name", n)` (the int named n);
- `("span", A, p, E, c, names)`: E == max(0, A.shape[p] - c) for an expression c >= 0
  (an int constant or a `slice_at`; its dump, and the names it reads), or E is at most
  A.shape[p] (c = 0): the extents of flat_views.py's slices;
- `("in", A, p, e)`: e (an int name or constant) indexes dimension p of A (checked).
`learn(stmt, facts, kinds)` gives the facts a statement adds: `S = A.shape`,
`S = (A.shape[k], max(0, A.shape[k] - c), slice_at(x, A.shape[k]), ...)`, `n = S[d]`,
`n = A.shape[k]`, `same_shape(A, S)`, `same_shape((...), S)` of such a tuple,
`same_shape(A, (n, ...))` of int names,
`A = np.empty/zeros/ones(S or n)`, `index_in(A.shape[k], e)`. A fact holds until a name it reads is bound again:
`without(facts, names)` drops those (the caller passes what a statement binds,
`frontend.trees.assigned`). `bounded_range(args)` is the extent E a `range(*args)` stays below, if its
form shows one. Shapes never change, so a fact about A holds while A names the same array.
Also the small pieces of expression and loop reading bounds.py uses: `is_range`,
`range3`, `plus`
(a sum with its constants folded), `sums` (an index read as v + c),
`leaves_only_at_end`.
"""
from __future__ import annotations

import gast

from ..frontend.trees import reads
from ..syntax import const, is_call
from . import kinds as K


def bounded_range(args):
    """The extent E (a fact's value) such that `range(*args)` takes only 0 <= v < E:
    range(E), range(c, E) with a constant c >= 0 or `max(e, c)` (step 1), range(E - 1, c,
    -1) with a constant c >= -1, range(min(e, E)); else None."""
    if len(args) == 1:
        return extent_of(args[0]) or next(
            (extent_of(a) for a in _builtin_args(args[0], "min") if extent_of(a)), None)
    first, step = args[0], int_value(args[2]) if len(args) == 3 else 1
    start, stop = int_value(first), int_value(args[1])
    floors = [int_value(a) for a in _builtin_args(first, "max")]
    if step == 1 and (start is not None and start >= 0
                      or any(c is not None and c >= 0 for c in floors)):
        return extent_of(args[1])
    if step == -1 and stop is not None and stop >= -1 and isinstance(first, gast.BinOp) \
            and isinstance(first.op, gast.Sub) and int_value(first.right) == 1:
        return extent_of(first.left)
    return None


def is_range(it) -> bool:
    """Whether `it` is a call `range(...)` of one to three arguments, no keywords."""
    return isinstance(it, gast.Call) and isinstance(it.func, gast.Name) \
        and it.func.id == "range" and 1 <= len(it.args) <= 3 and not it.keywords


def _builtin_args(node, func: str) -> list:
    """The two arguments of `func(a, b)` (the builtin min or max), else []."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
            and node.func.id == func and len(node.args) == 2 and not node.keywords:
        return list(node.args)
    return []


def int_value(node):
    """The value of an int constant (`-1` parses as a negation), else None."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        inner = int_value(node.operand)
        return None if inner is None else -inner
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    return None


def extent_of(node):
    """("sub", S, d) for `S[d]` (S a name, d a constant), ("name", n) for a name n."""
    if isinstance(node, gast.Name):
        return ("name", node.id)
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
            and isinstance(node.slice, gast.Constant) and type(node.slice.value) is int:
        return ("sub", node.value.id, node.slice.value)
    return None


def known(part):
    """What an "in" fact names for an index component: a name, an int constant, or None."""
    if isinstance(part, gast.Name):
        return part.id
    if isinstance(part, gast.Constant) and type(part.value) is int:
        return part.value
    return None


def names_of(fact) -> set:
    """The names a fact (module docstring) reads."""
    if fact[0] == "dim":
        return {fact[1], fact[3][1]}
    if fact[0] == "span":
        return {fact[1], fact[3][1]} | fact[5]
    return {fact[1], fact[3]} if isinstance(fact[3], str) else {fact[1]}


def without(facts: set, names: set) -> set:
    return {f for f in facts if not names_of(f) & names}


def shape_elements(node):
    """[(A, k), ...] of a tuple `(A.shape[k], ...)`, or None."""
    if not isinstance(node, gast.Tuple):
        return None
    out = []
    for e in node.elts:
        if not (isinstance(e, gast.Subscript) and isinstance(e.value, gast.Attribute)
                and e.value.attr == "shape" and isinstance(e.value.value, gast.Name)
                and isinstance(e.slice, gast.Constant) and type(e.slice.value) is int):
            return None
        out.append((e.value.value.id, e.slice.value))
    return out


ZERO = gast.dump(const(0))


def _elements(node, shape: str) -> set:
    """Facts of the tuple named `shape` from the tuple expression `node` it equals:
    `A.shape[k]`, `max(0, A.shape[k] - c)` (c an int constant >= 0 or a `slice_at`) and
    `slice_at(x, A.shape[k])` (at most the extent) elements."""
    facts = set()
    for i, e in enumerate(node.elts if isinstance(node, gast.Tuple) else []):
        where = ("sub", shape, i)
        if shape_elements(gast.Tuple(elts=[e], ctx=gast.Load())):
            facts.add(("dim", e.value.value.id, e.slice.value, where))
        elif _called(e, "slice_at") and shape_elements(gast.Tuple(elts=[e.args[1]],
                                                                  ctx=gast.Load())):
            extent = e.args[1]
            facts.add(("span", extent.value.value.id, extent.slice.value, where, ZERO,
                       frozenset()))
        elif _called(e, "max") and int_value(e.args[0]) == 0 \
                and isinstance(e.args[1], gast.BinOp) and isinstance(e.args[1].op, gast.Sub) \
                and shape_elements(gast.Tuple(elts=[e.args[1].left], ctx=gast.Load())):
            extent, c = e.args[1].left, e.args[1].right
            if (int_value(c) is not None and int_value(c) >= 0) or _called(c, "slice_at"):
                facts.add(("span", extent.value.value.id, extent.slice.value, where,
                           gast.dump(c), frozenset(reads(c) - {"slice_at"})))
    return facts


def _called(node, func: str) -> bool:
    """`func(a, b)`: two arguments, no keywords."""
    return is_call(node, func) and len(node.args) == 2 and not node.keywords


def learn(stmt, facts: set, kinds: dict) -> set:
    """The facts a statement adds (names it binds already dropped from `facts`)."""
    def ndim(array):
        kind = kinds.get(array)
        return kind[1] if K.is_array(kind) else 0

    def shaped(array, shape):  # array's shape is the tuple named shape
        return {("dim", array, p, ("sub", shape, p)) for p in range(ndim(array))}
    value = stmt.value if isinstance(stmt, (gast.Assign, gast.Expr)) else None
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) \
            and len(value.args) == 2 and not value.keywords:
        first, second = value.args
        if value.func.id == "same_shape" and isinstance(second, gast.Name):
            if isinstance(first, gast.Name) and first.id != second.id:
                return shaped(first.id, second.id)
            return _elements(first, second.id)
        if value.func.id == "same_shape" and isinstance(second, gast.Tuple) \
                and isinstance(first, gast.Name):  # same_shape(A, (n,)): A.shape[0] == n
            return {("dim", first.id, p, ("name", e.id)) for p, e in enumerate(second.elts)
                    if isinstance(e, gast.Name) and e.id != first.id and kinds.get(e.id) == K.I}
        if value.func.id == "index_in" and known(second) is not None:
            elements = shape_elements(gast.Tuple(elts=[first], ctx=gast.Load()))
            return {("in", a, k, known(second)) for a, k in elements or []}
        return set()
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return set()
    target = stmt.targets[0].id
    if isinstance(value, gast.Attribute) and value.attr == "shape" \
            and isinstance(value.value, gast.Name) and value.value.id != target:
        return shaped(value.value.id, target)
    if isinstance(value, gast.Tuple):
        return {f for f in _elements(value, target) if f[1] != target}
    if isinstance(value, gast.Subscript) and kinds.get(target) == K.I:
        direct = shape_elements(gast.Tuple(elts=[value], ctx=gast.Load()))
        if direct:  # n = A.shape[k]
            return {("dim", direct[0][0], direct[0][1], ("name", target))}
        extent = extent_of(value)  # n = S[d]
        return {("dim", f[1], f[2], ("name", target)) for f in facts
                if f[0] == "dim" and f[3] == extent}
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
            and value.func.attr in K.ALLOCATE and isinstance(value.func.value, gast.Name) \
            and value.func.value.id == "np" and len(value.args) == 1 \
            and isinstance(value.args[0], gast.Name) and value.args[0].id != target \
            and all(k.arg == "dtype" for k in value.keywords):
        size = value.args[0].id
        if kinds.get(size) == K.I:
            return {("dim", target, 0, ("name", size))} if ndim(target) == 1 else set()
        return shaped(target, size)
    return set()


def range3(args: list) -> list:
    """range's arguments as (start, stop, step)."""
    args = args if len(args) > 1 else [const(0)] + args
    return args + [const(1)] if len(args) == 2 else args


def plus(expr, offset):
    """expr + offset, constants folded (`i + 0` is `i`, `n - 1 + 1` is `n`)."""
    a, b = int_value(expr), int_value(offset)
    if a is not None and b is not None:
        return const(a + b) if a + b >= 0 else gast.UnaryOp(op=gast.USub(),
                                                             operand=const(-(a + b)))
    if b == 0:
        return expr
    if a == 0:
        return offset
    if isinstance(expr, gast.BinOp) and isinstance(expr.op, (gast.Add, gast.Sub)) \
            and int_value(expr.right) is not None and b is not None:
        total = int_value(expr.right) * (1 if isinstance(expr.op, gast.Add) else -1) + b
        return plus(expr.left, const(total) if total >= 0 else gast.UnaryOp(
            op=gast.USub(), operand=const(-total)))
    if b is not None and b < 0:
        return gast.BinOp(left=expr, op=gast.Sub(), right=const(-b))
    return gast.BinOp(left=expr, op=gast.Add(), right=offset)


def leaves_only_at_end(body) -> bool:
    """No break or continue of this loop's own, no return or try anywhere in it."""
    def walk(stmts, own):
        for s in stmts:
            if isinstance(s, (gast.Return, gast.Try)):
                return False
            if own and isinstance(s, (gast.Break, gast.Continue)):
                return False
            nested = isinstance(s, (gast.For, gast.While))
            for field in ("body", "orelse"):
                if isinstance(getattr(s, field, None), list) \
                        and not walk(getattr(s, field), own and not nested):
                    return False
        return True
    return walk(body, True)


def sums(part) -> list:
    """(v, c) for each way to read `part` as a name v plus c: `v` (c = 0), `v + c`,
    `c + v`."""
    if isinstance(part, gast.Name):
        return [(part, const(0))]
    if isinstance(part, gast.BinOp) and isinstance(part.op, gast.Add):
        return [(a, b) for a, b in ((part.left, part.right), (part.right, part.left))
                if isinstance(a, gast.Name)]
    return []
