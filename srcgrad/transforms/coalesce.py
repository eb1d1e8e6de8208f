"""A copy whose source nobody reads again once the copy is first written takes the
source's array instead.

The adjoint of `y = y + h * f(y)` passes the step's adjoint on to the state and then adds
the stages' adjoints into it; a compiled form copies it first, element by element,
because the step's adjoint is still read by the stages:

    A = B                         # the previous step's adjoint, from the loop's top
    ...
    N = A.shape
    B = np.empty(N)
    for _k in range(N[0]):
        B[_k] = A[_k]
    ...                           # reads A, never writes it
    ... B[_k] = B[_k] + ...       # the first write of B: A is dead from here on

`coalesce(func, kinds)` binds `B = A` instead of the allocation and drops the copy loop
(ode: one pass over the adjoint per step).

Soundness rule. In one block: `N = A.shape`, with nothing binding N or A after it, then
`B = np.empty(N)` and right after it the copy loop `for _k in range(N[0])` whose body is
(comments aside) `B[_k] = A[_k]`, or `t = A[_k]; B[_k] = t` with t mentioned nowhere
else in the function; A and B float arrays of rank 1 (analysis/kinds.py) whose roots
(analysis/roots.py) are neither a parameter's (the form never writes those) nor unknown.
Let Z be the names that may share A's or B's memory (A and B included; names of
numbers and shapes hold none). W is the first statement after the loop, in the block,
that mentions a name of Z other than A (other than as `name.shape`); there is such a
statement, no statement between the loop and W writes memory of Z's roots or of unknown
roots (at any depth), and no name of Z but B is live before W (analysis/liveness.py;
reading a shape is not a read: B has A's). Then up to W, B and A hold the same values
(nothing writes either), and from W on nothing reads A's memory through any name but B:
B may be that memory. Guarantee: every value read is the same; B shares A's array.
"""
from __future__ import annotations

import gast

from ..analysis import kinds as K
from ..analysis.liveness import live_after
from ..analysis.roots import IN, UNKNOWN, roots as roots_of
from ..syntax import assign, blocks, dotted_name, is_comment, name, walk
from .tape_rows import _writes


def coalesce(func: gast.FunctionDef, kinds: dict) -> int:
    """Rewrite `func` in place (module doc); how many copies went."""
    done = 0
    for _ in range(50):
        if not _one(func, kinds):
            break
        done += 1
    return done


def _one(func, kinds) -> bool:
    """Rewrite the first copy the rule allows; whether there was one."""
    roots = roots_of(func, kinds)
    live = live_after(func, shape_only=True)
    writes = None
    counts = {}
    for node in walk(func):
        if isinstance(node, gast.Name):
            counts[node.id] = counts.get(node.id, 0) + 1
    for block in blocks(func.body):
        for k in range(1, len(block) - 1):
            found = _copy(block, k, kinds, roots, counts)
            if found is None:
                continue
            source, target = found
            if writes is None:
                writes = _writes(func, kinds, roots)
            if _sound(block, k, source, target, kinds, roots, live, writes):
                block[k] = gast.copy_location(assign(target, name(source)), block[k])
                del block[k + 1]
                return True
    return False


def _copy(block, k, kinds, roots, counts):
    """(A, B) if block[k] is `B = np.empty(N)` and block[k + 1] its copy loop from A,
    with `N = A.shape` before them."""
    made, loop = block[k], block[k + 1]
    if not (isinstance(made, gast.Assign) and len(made.targets) == 1
            and isinstance(made.targets[0], gast.Name) and isinstance(made.value, gast.Call)
            and dotted_name(made.value.func) == "np.empty" and len(made.value.args) == 1
            and not made.value.keywords and isinstance(made.value.args[0], gast.Name)):
        return None
    target, shape = made.targets[0].id, made.value.args[0].id
    if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name)
            and not loop.orelse and isinstance(loop.iter, gast.Call)
            and isinstance(loop.iter.func, gast.Name) and loop.iter.func.id == "range"
            and len(loop.iter.args) == 1 and _is_extent(loop.iter.args[0], shape)):
        return None
    source = _copied(loop, target, counts)
    if source is None or source == target:
        return None
    for name_ in (source, target):
        kind, own = kinds.get(name_), roots.get(name_)
        if not (K.is_array(kind) and kind[1] == 1 and kind[2] == "f") \
                or not own or IN in own or UNKNOWN in own:
            return None
    for p in range(k - 1, -1, -1):  # `N = A.shape`, then nothing binds N or A
        stmt = block[p]
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == shape:
            value = stmt.value
            if isinstance(value, gast.Attribute) and value.attr == "shape" \
                    and isinstance(value.value, gast.Name) and value.value.id == source:
                return source, target
            return None
        if any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)
               and n.id in (shape, source) for n in walk(stmt)):
            return None
    return None


def _is_extent(node, shape) -> bool:
    return isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
        and node.value.id == shape and isinstance(node.slice, gast.Constant) \
        and node.slice.value == 0 and type(node.slice.value) is int


def _copied(loop, target, counts):
    """A if the loop's body is `target[_k] = A[_k]` (through a temporary or not)."""
    index = loop.target.id
    body = [s for s in loop.body if not is_comment(s)]
    if not body or len(body) > 2:
        return None
    last = body[-1]
    if not (isinstance(last, gast.Assign) and len(last.targets) == 1
            and _element(last.targets[0], index) == target):
        return None
    value = last.value
    if len(body) == 2:
        first = body[0]
        if not (isinstance(first, gast.Assign) and len(first.targets) == 1
                and isinstance(first.targets[0], gast.Name)
                and isinstance(value, gast.Name) and value.id == first.targets[0].id
                and counts.get(value.id) == 2):
            return None
        value = first.value
    return _element(value, index)


def _element(node, index):
    """A if `node` is `A[index]`, else None."""
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
            and isinstance(node.slice, gast.Name) and node.slice.id == index:
        return node.value.id
    return None


def _sound(block, k, source, target, kinds, roots, live, writes) -> bool:
    own = roots[source] | roots[target]
    group = {n for n, rs in roots.items()
             if (rs & own or UNKNOWN in rs) and K.holds_memory(kinds.get(n))} | {source, target}
    others = group - {source}
    w = None
    for p in range(k + 2, len(block)):
        if _mentions(block[p], others):
            w = p
            break
    if w is None:
        return False
    between = {id(n) for s in block[k + 2:w] for n in walk(s)}
    for node, access in writes:
        if id(node) in between and (UNKNOWN in access or access & own):
            return False
    return not (group - {target}) & live[id(block[w - 1])]


def _mentions(stmt, names) -> bool:
    """Whether `stmt` mentions a name of `names` other than as `name.shape`."""
    shaped = {id(n.value) for n in walk(stmt)
              if isinstance(n, gast.Attribute) and n.attr == "shape"
              and isinstance(n.value, gast.Name)}
    return any(isinstance(n, gast.Name) and n.id in names and id(n) not in shaped
               for n in walk(stmt))
