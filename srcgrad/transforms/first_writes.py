"""An adjoint cleared to zeros and then accumulated into once per element: the first
accumulation stores, and only the elements it never reaches are cleared.

The adjoint of a scratch array read at shifted slots (ode's `z[i] = x[i] * y[i - 1]`) is
made as zeros, then a reversed loop adds into it, one element per iteration:

    Z = np.empty(N)
    for _k in range(N[0]):
        Z[_k] = 0.0
    ...
    for i in range(n - 1, 0, -1):
        t = i - 1
        Z[t] += e

`first_writes(func, kinds, roots)` makes that `Z[t] = e + 0.0` and clears, just before
the loop, only the elements outside t's range (here the last one): one pass over Z fewer
(ode: the fills were three of its backward sweep's fourteen passes per step).

Soundness rule. In one block:
- `Z = np.empty(N)`, Z a 1-d float array (analysis/kinds.py) whose roots are arrays the
  function makes (analysis/roots.py), then, with nothing between them mentioning Z or N,
  the fill F: `for _k in range(N[0])` whose body (comments aside) is `Z[_k] = 0.0`, or
  `v = 0.0; Z[_k] = v` with v mentioned nowhere else in the function. After F, every
  element of Z is 0.0;
- later in the block, the loop L: `for i in range(...)` with step 1 or -1, no `else`, no
  `break`, `continue` or `return` at any depth, i not rebound in its body; at the top
  level of L's body, `Z[t] += e` or `Z[t] -= e`, where t is `i`, `i + c`, `c + i` or
  `i - c` (c an integer constant), written there or bound to a name by an earlier
  top-level statement of the body and not rebound; the lowest value of t is a constant
  >= 0 read off the range's constants (no negative index, which would wrap around);
- between F and L, and in L but for that statement, no name that may share Z's memory
  (Z itself, its views, any name of unknown memory) is mentioned other than as
  `name.shape`.
Then iteration i writes element t(i) once (i -> t is one to one) and nothing reads Z
before L's store reads it, so that store reads 0.0 and writes `0.0 + e` (`0.0 - e`); the
elements outside [lo, hi] of t's range are never written by L and keep 0.0. The rewrite
drops F, stores `e + 0.0` (the same bits as `0.0 + e`, -0.0 included: addition
commutes) or `0.0 - e`, and clears `Z[:lo]` and `Z[max(hi + 1, 0):]` just before L, after
the statements between (so after the names hi is made of are bound: none of them
touches Z). An empty range has hi < lo, and the two clears cover all of Z. Guarantee:
every value read is the same.
"""
from __future__ import annotations

import gast

from ..analysis import kinds as K
from ..analysis.extents import int_value, is_range
from ..analysis.roots import IN, UNKNOWN
from ..syntax import assign, binop, blocks, call, const, dotted_name, is_comment, name, walk


def first_writes(func: gast.FunctionDef, kinds: dict, roots: dict, fresh) -> int:
    """Rewrite `func` in place (module doc); how many fills went. `fresh(base)`: a name
    not used yet."""
    counts = {}
    for node in walk(func):
        if isinstance(node, gast.Name):
            counts[node.id] = counts.get(node.id, 0) + 1
    done = 0
    for block in list(blocks(func.body)):
        k = 0
        while k < len(block):
            found = _fill(block, k, kinds, roots, counts)
            if found is not None:
                array, aliases = found
                j = _first_loop(block, k, array, aliases)
                if j is not None:
                    loop, store, lo, hi1 = j
                    clears = _clears(array, block[k].target.id, lo, hi1, fresh)
                    at = next(p for p, s in enumerate(block) if s is loop)
                    block[at:at] = clears
                    del block[k]
                    value = gast.BinOp(left=store.value, op=gast.Add(), right=const(0.0)) \
                        if isinstance(store.op, gast.Add) \
                        else gast.BinOp(left=const(0.0), op=gast.Sub(), right=store.value)
                    p = next(p for p, s in enumerate(loop.body) if s is store)
                    loop.body[p] = gast.copy_location(assign(store.target, value), store)
                    done += 1
                    continue
            k += 1
    return done


def _fill(block, k, kinds, roots, counts):
    """(Z, its aliases) if block[k] is the fill F of an array made just before it."""
    loop = block[k]
    if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name)
            and not loop.orelse and is_range(loop.iter) and len(loop.iter.args) == 1):
        return None
    extent = loop.iter.args[0]
    if not (isinstance(extent, gast.Subscript) and isinstance(extent.value, gast.Name)
            and int_value(extent.slice) == 0):
        return None
    body = [s for s in loop.body if not is_comment(s)]
    if not body or not _zero_store(body, loop.target.id, counts):
        return None
    array = body[-1].targets[0].value.id
    kind = kinds.get(array)
    if not (K.is_array(kind) and kind[1] == 1 and kind[2] == "f"):
        return None
    own = roots.get(array)
    if not own or IN in own or UNKNOWN in own:
        return None
    aliases = {n for n, r in roots.items() if r & own or UNKNOWN in r} | {array}
    shape = extent.value.id
    for p in range(k - 1, -1, -1):
        stmt = block[p]
        if _makes(stmt, array, shape):
            return array, aliases
        if _mentions(stmt, aliases | {shape}, shapes_ok=False):
            return None
    return None


def _zero_store(body, index, counts) -> bool:
    last = body[-1]
    if not (len(body) in (1, 2) and isinstance(last, gast.Assign) and len(last.targets) == 1
            and isinstance(last.targets[0], gast.Subscript)
            and isinstance(last.targets[0].value, gast.Name)
            and isinstance(last.targets[0].slice, gast.Name)
            and last.targets[0].slice.id == index):
        return False
    if len(body) == 1:
        return _is_zero(last.value)
    first = body[0]
    return isinstance(first, gast.Assign) and len(first.targets) == 1 \
        and isinstance(first.targets[0], gast.Name) and _is_zero(first.value) \
        and isinstance(last.value, gast.Name) and last.value.id == first.targets[0].id \
        and counts.get(first.targets[0].id) == 2


def _is_zero(node) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) is float \
        and node.value == 0.0 and str(node.value) == "0.0"


def _makes(stmt, array, shape) -> bool:
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
        and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == array \
        and isinstance(stmt.value, gast.Call) and dotted_name(stmt.value.func) == "np.empty" \
        and len(stmt.value.args) == 1 and not stmt.value.keywords \
        and isinstance(stmt.value.args[0], gast.Name) and stmt.value.args[0].id == shape


def _first_loop(block, k, array, aliases):
    """(L, its store, lo, hi + 1) for the first statement after block[k] that mentions
    an alias, if that is a loop L as the module doc asks."""
    for stmt in block[k + 1:]:
        if not _mentions(stmt, aliases):
            continue
        return _accumulating(stmt, array, aliases)
    return None


def _accumulating(loop, array, aliases):
    if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name)
            and not loop.orelse and is_range(loop.iter)):
        return None
    counter = loop.target.id
    bounds = _range(loop.iter)
    if bounds is None:
        return None
    for node in walk(loop):
        if isinstance(node, (gast.Break, gast.Continue, gast.Return)):
            return None
        if isinstance(node, gast.Name) and node.id == counter \
                and isinstance(node.ctx, gast.Store) and node is not loop.target:
            return None
    offsets = {}  # names bound at top level to the counter plus a constant
    store = None
    for stmt in loop.body:
        if store is None and _mentions(stmt, aliases):
            store = stmt
            continue
        if _mentions(stmt, aliases):
            return None
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                offsets.pop(node.id, None)
        if store is None and isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name):
            c = _offset(stmt.value, counter)
            if c is not None:
                offsets[stmt.targets[0].id] = c
    if not (isinstance(store, gast.AugAssign) and isinstance(store.op, (gast.Add, gast.Sub))
            and isinstance(store.target, gast.Subscript)
            and isinstance(store.target.value, gast.Name) and store.target.value.id == array
            and not _mentions(store.value, aliases)):
        return None
    index = store.target.slice
    c = offsets.get(index.id) if isinstance(index, gast.Name) and index.id != counter \
        else _offset(index, counter)
    if c is None:
        return None
    low, high1 = bounds  # the counter's lowest value (a constant), highest + 1 (an expression)
    if low + c < 0:
        return None
    return loop, store, low + c, _plus(high1, c)


def _range(it):
    """(lowest counter value, a constant; highest + 1, an expression) of a range of step
    1 or -1 whose lowest value its constants show, else None."""
    args = it.args
    if len(args) == 1:
        return 0, args[0]
    step = int_value(args[2]) if len(args) == 3 else 1
    if step == 1 and int_value(args[0]) is not None:
        return int_value(args[0]), args[1]
    if step == -1 and int_value(args[1]) is not None:
        return int_value(args[1]) + 1, _plus(args[0], 1)
    return None


def _offset(node, counter):
    """c if `node` is the counter plus the integer constant c, else None."""
    if isinstance(node, gast.Name) and node.id == counter:
        return 0
    if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub)):
        left, right = node.left, node.right
        if isinstance(left, gast.Name) and left.id == counter and int_value(right) is not None:
            return int_value(right) if isinstance(node.op, gast.Add) else -int_value(right)
        if isinstance(node.op, gast.Add) and isinstance(right, gast.Name) \
                and right.id == counter and int_value(left) is not None:
            return int_value(left)
    return None


def _plus(node, c: int):
    """`node + c`, folded into node's own constant term if it has one."""
    if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub)) \
            and int_value(node.right) is not None:
        c += int_value(node.right) if isinstance(node.op, gast.Add) else -int_value(node.right)
        node = node.left
    if c == 0:
        return node
    return binop(node, gast.Add(), const(c)) if c > 0 else binop(node, gast.Sub(), const(-c))


def _clears(array, index, lo: int, high1, fresh) -> list:
    """`Z[:lo]` and `Z[max(hi + 1, 0):]` cleared, element by element, over ranges that
    transforms/bounds.py proves within Z's extent (analysis/extents.bounded_range)."""
    shape = fresh("_nz")
    extent = gast.Subscript(value=name(shape), slice=const(0), ctx=gast.Load())
    out = [assign(shape, gast.Attribute(value=name(array), attr="shape", ctx=gast.Load()))]
    if lo > 0:
        out.append(_zero_loop(array, index, [call("min", const(lo), extent)]))
    out.append(_zero_loop(array, index, [call("max", high1, const(0)), extent]))
    return out


def _zero_loop(array, index, args):
    store = gast.Subscript(value=name(array), slice=name(index), ctx=gast.Store())
    return gast.For(target=name(index, store=True), iter=call("range", *args),
                    body=[assign(store, const(0.0))], orelse=[], type_comment=None)


def _mentions(stmt, names, shapes_ok=True) -> bool:
    """Whether `stmt` mentions a name of `names` (other than as `name.shape`)."""
    shaped = set()
    if shapes_ok:
        shaped = {id(n.value) for n in walk(stmt)
                  if isinstance(n, gast.Attribute) and n.attr == "shape"
                  and isinstance(n.value, gast.Name)}
    return any(isinstance(n, gast.Name) and n.id in names and id(n) not in shaped
               for n in walk(stmt))
