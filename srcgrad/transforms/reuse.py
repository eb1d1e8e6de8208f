"""The compiled form reuses a loop's small arrays from one iteration to the next.

The compiled form (loops.py) allocates each array a window computes, `a = np.empty(_n)`
with `_n = x.shape`, so a loop over observations whose body works on 3-vectors (ba's
`xo = X - cam[3:6]`, its adjoint's `_adj_xo`) allocates and frees several arrays per
iteration, about 40 ns each, as much as the arithmetic. `reuse_buffers(func, fresh)`
rewrites such an allocation, a statement of a `for` loop's body itself, into

    _buf_a = np.empty((0,))          before the loop (rank 1: one 0 per dimension)
    if _buf_a.shape != _n:           in the body, where the allocation was
        _buf_a = np.empty(_n)
    a = _buf_a

so an iteration takes the array the previous one used when the shape is the same.

Soundness rule. The rewrite is the same computation when no reference to an
iteration's array outlives that iteration other than through the names that the next
iteration binds again before reading. Checked over the whole loop (its nested
statements included), for `a` and every alias `b` bound by `b = a` (a statement of the
body itself, after the allocation):
- they are bound only there (the allocation, the alias statements);
- every other mention is an element `a[i]` / `a[i, j]` with one index per dimension
  (names or constants: a number, never a view), read, written or updated in place, or
  `a.shape`, or the shape check `same_shape(a, n)`: nothing can keep the array itself
  (no call, no tape, no list, no other name);
- every element use sits in a statement of the body after the one binding the name,
  so no iteration reads the previous iteration's elements through these names (a shape
  may be read anywhere: an array's shape never changes, and the buffer is replaced,
  not reshaped, when the shape differs).
After the loop the names hold the last iteration's array, as before; the contents of a
fresh `np.empty` are unspecified, so taking the previous contents changes nothing that
a program may read. The allocation is `np.empty(n)` with one argument (float64), `n`
bound by `n = <expr>.shape` earlier in the body, and made by the compiled form itself
(loops.py says its rank), so the dummy has the same type.
"""
from __future__ import annotations

import gast

from ..syntax import assign, call, const, name

_SHAPE_ONLY = ("same_shape",)


def reuse_buffers(func: gast.FunctionDef, allocated: dict, fresh) -> int:
    """Rewrite every allocation the rule allows (module doc) among `allocated`
    (id(statement) -> the array's rank: the compiled form's own); how many.
    `fresh(base)` gives an unused name."""
    done = 0
    for loop in [n for n in gast.walk(func) if isinstance(n, gast.For)]:
        for stmt in list(loop.body):
            found = _allocation(loop, stmt, allocated.get(id(stmt)))
            if found is None:
                continue
            array, shape, rank = found
            buffer = fresh(f"_buf_{array.lstrip('_')}")
            dummy = call(_attr("np", "empty"), gast.Tuple(elts=[const(0)] * rank,
                                                           ctx=gast.Load()))
            at = loop.body.index(stmt)
            check = gast.Compare(left=gast.Attribute(value=name(buffer), attr="shape",
                                                     ctx=gast.Load()),
                                 ops=[gast.NotEq()], comparators=[name(shape)])
            remake = gast.If(test=check, body=[assign(buffer, stmt.value)], orelse=[])
            loop.body[at:at + 1] = [gast.copy_location(remake, stmt),
                                    gast.copy_location(assign(array, name(buffer)), stmt)]
            _before(func, loop, gast.copy_location(assign(buffer, dummy), loop))
            done += 1
    return done


def _allocation(loop, stmt, rank):
    """(array, shape name, rank) when `stmt`, a statement of `loop.body`, allocates an
    array of `rank` dimensions the rule lets the loop reuse; else None."""
    if rank is None or not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and _is_empty_call(stmt.value)):
        return None
    array, shape = stmt.targets[0].id, stmt.value.args[0].id
    at = loop.body.index(stmt)
    if not any(isinstance(s, gast.Assign) and len(s.targets) == 1
               and isinstance(s.targets[0], gast.Name) and s.targets[0].id == shape
               and isinstance(s.value, gast.Attribute) and s.value.attr == "shape"
               for s in loop.body[:at]):
        return None
    bound_at = {array: at}
    for k, s in enumerate(loop.body[at + 1:], at + 1):  # aliases: b = a
        if (isinstance(s, gast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Name)
                and s.value.id in bound_at and s.targets[0].id not in bound_at):
            bound_at[s.targets[0].id] = k
    ranks = set()
    for k, s in enumerate(loop.body):
        for node, parent in _mentions(s, set(bound_at)):
            if s is stmt or (k > at and _is_alias(s, bound_at) and node is s.targets[0]):
                continue  # a binding the rule allows
            if _is_alias(s, bound_at) and node is s.value and k > bound_at[node.id]:
                continue
            kind = _use(node, parent)
            if kind is None or (kind and k <= bound_at[node.id]):
                return None  # kept, bound elsewhere, or an element of an earlier array
            if kind:
                ranks.add(kind)
    if ranks - {rank}:
        return None  # an index per dimension only: a number, never a view
    return array, shape, rank


def _is_empty_call(value) -> bool:
    return (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and isinstance(value.func.value, gast.Name) and value.func.value.id == "np"
            and value.func.attr == "empty" and len(value.args) == 1 and not value.keywords
            and isinstance(value.args[0], gast.Name))


def _is_alias(stmt, bound_at) -> bool:
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in bound_at
            and isinstance(stmt.value, gast.Name) and stmt.value.id in bound_at)


def _mentions(stmt, names: set):
    """(Name node, its parent) for every mention of `names` in `stmt`."""
    for parent in gast.walk(stmt):
        for child in gast.iter_child_nodes(parent):
            if isinstance(child, gast.Name) and child.id in names:
                yield child, parent


def _use(node, parent):
    """The number of indices of an element use, 0 for a shape-only use, None otherwise."""
    if isinstance(parent, gast.Subscript) and parent.value is node:
        index = parent.slice
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        if all(isinstance(p, (gast.Name, gast.Constant)) for p in parts):
            return len(parts)
        return None
    if isinstance(parent, gast.Attribute) and parent.value is node and parent.attr == "shape":
        return 0
    if (isinstance(parent, gast.Call) and isinstance(parent.func, gast.Name)
            and parent.func.id in _SHAPE_ONLY and node in parent.args):
        return 0
    return None


def _before(func, loop, stmt) -> None:
    """Insert `stmt` just before `loop`, wherever it is nested in `func`."""
    for node in gast.walk(func):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is loop for s in block):
                block.insert(next(k for k, s in enumerate(block) if s is loop), stmt)
                return
    raise AssertionError("the loop is not in the function")


def _attr(module: str, attr: str):
    return gast.Attribute(value=name(module), attr=attr, ctx=gast.Load())
