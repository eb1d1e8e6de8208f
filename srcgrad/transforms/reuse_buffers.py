"""Scratch arrays of loops made once, not at every iteration, in a compiled form
(issue 13).

Loop code makes small arrays at every iteration (`xc = x[i] - mu[k]`, which the compiled
form computes into `xc = np.empty(_n)`; a user's `acc = np.zeros(d)`), and so does the
backward sweep for their adjoints. At a few elements each, the allocation and its release
cost more than the arithmetic (gmm at d=2: a quarter of the gradient; ba, four three-element
arrays per observation: a third of it).

`reuse_buffers(func, kinds, fresh, indices)` rewrites `V = np.empty(S)` (or `np.zeros(S)`)
inside a loop (which loops: below) into
    if _buf_V.shape != S:        # (S,) for an int S
        _buf_V = np.empty(S)
    _buf_V.fill(0.0)             # np.zeros only
    V = _buf_V
with `_buf_V = np.empty((0,) * ndim)` at the top of the function, when V is a float64
array of `ndim` dimensions (analysis/kinds.py), S is a tuple or an int, and every mention
of V anywhere in the function is one of:
- an element `V[i, j]` with one index per dimension and no slice (read, written or `+=`);
- `V.shape`, `.size`, `.ndim`, `.dtype`, a method making a new value (`V.sum()`,
  `V.copy()`) or `V.fill(x)`;
- an operand of arithmetic or a comparison (NumPy makes a new array);
- an argument of a NumPy ufunc or reduction, or where a runtime helper reads only its shape
  or values (`same_shape`, `tape_like`, `record_at` into an array tape, which copies,
  `unbroadcast(g, V)`, `expand_to(g, V, ...)`, `zeros_like`, `axis_extremum_share`);
- a binding of V (`V = ...`, `V += ...`);
- `W = V`, the compiled form's binding of a recomputed array to its name (`xo = _xo_a`),
  where every mention of W is one of the above but a copy, and W is not read (for its
  values: liveness with `shape_only`) after V's statement before W is bound again.

Soundness rule: those uses never make a second reference to V's array (no view, no
element of a container, nothing returned or passed where it could be kept), but through
copies W that are dead whenever V's statement runs; so once it runs again, nothing can
read the array's old contents any more, and giving V the same memory (np.empty's contents
are unspecified; np.zeros's are zeroed again) changes no value the function computes.
After the loop V (and W) hold what the last iteration put there, as before.

Inside two loops, or inside one loop when V is a small vector: the user's code reads or
writes its elements only at constant positions (`pt[0]`, `rot[2]`: ba's rotation and point,
three elements each), and every other element access is in one of the form's own
elementwise loops (`indices`, the names fuse_loops gave them). An array made once per
iteration of a single loop is otherwise most often a large one (ode's RK stages, a
stencil's state), where a buffer measured slower than np.empty: LLVM knows a fresh
allocation is memory nothing else points to, and vectorizes the element loops without
runtime overlap checks (ode 1.7x -> 3.6-4.1x its primal with every single-loop array a
buffer; bench/README.md). Those get a buffer made before their loop instead, where their
shape can be computed there (transforms/hoist_buffers.py, which runs after this pass).
Which arrays get a buffer changes only speed, never a value.
"""
from __future__ import annotations

from collections import defaultdict

import gast

from ..analysis import kinds as K
from ..analysis.liveness import live_after
from ..syntax import assign, call, const, dotted, method, name, walk

_ATTRIBUTES = {"shape", "size", "ndim", "dtype"}
_REDUCTIONS = {"sum", "max", "min", "mean", "prod", "amax", "amin"}
_PLAIN = (gast.Name, gast.Constant, gast.Tuple, gast.BinOp, gast.UnaryOp, gast.operator,
          gast.unaryop, gast.expr_context)
_METHODS = {"sum", "max", "min", "mean", "prod", "copy", "fill", "any", "all"}
# Runtime helpers and the argument positions at which they read an array without keeping it.
_HELPERS = {"same_shape": None, "tape_like": None, "zeros_like": (0,), "unbroadcast": (1,),
            "expand_to": (1,), "axis_extremum_share": (0,), "len": (0,)}


def _mentions(func):
    """What `_copies` reads: each node's parent (by id), each name's nodes, the
    parameters."""
    parents, mentions = {}, defaultdict(list)
    for p in walk(func):
        for c in gast.iter_child_nodes(p):
            parents[id(c)] = p
        if isinstance(p, gast.Name):
            mentions[p.id].append(p)
    return parents, mentions, {a.id for a in func.args.args}


def reuse_buffers(func: gast.FunctionDef, kinds: dict, fresh, indices=frozenset()) -> int:
    """Give the arrays made at each iteration of a loop one buffer per statement; how many.
    `fresh(base)` gives a name the function does not use; `indices`, the names of the
    form's elementwise loop indices."""
    found = list(_allocations(func.body, 0))
    if not found:
        return 0
    parents, mentions, params = _mentions(func)
    copies, small, live, top, made = {}, {}, None, [], 0
    for block, stmt, depth in found:
        var = stmt.targets[0].id
        kind = kinds.get(var, K.TOP)
        if var in params or kind[0] != "arr" or kind[2] != "f" or not _shape_ok(stmt, kinds):
            continue
        if var not in copies:
            copies[var] = _copies(var, mentions, parents, kinds, params)
            small[var] = copies[var] is not None and _small_vector(
                [n for v in [var, *copies[var]] for n in mentions[v]], parents, indices)
        if copies[var] is None or (depth < 2 and not small[var]):
            continue
        if copies[var]:
            live = live_after(func, shape_only=True) if live is None else live
            if any(w in live[id(stmt)] for w in copies[var]):
                continue
        buf = fresh(f"_buf_{var}")
        top.append(assign(buf, call(dotted("np.empty"), gast.Tuple(elts=[const(0)] * kind[1],
                                                             ctx=gast.Load()))))
        at = next(k for k, s in enumerate(block) if s is stmt)
        block[at:at + 1] = [gast.copy_location(s, stmt) for s in _reused(stmt, var, buf, kinds)]
        made += 1
    func.body[:0] = top
    return made


def _copies(var, mentions, parents, kinds, params):
    """The names W of `W = V` statements when every other mention of V, and every mention
    of each W, is harmless (module doc); None when some mention is not."""
    ndim, names = kinds[var][1], set()
    for node in mentions[var]:
        if _harmless(node, parents, ndim, kinds):
            continue
        parent = parents.get(id(node))
        if not (isinstance(parent, gast.Assign) and parent.value is node
                and len(parent.targets) == 1 and isinstance(parent.targets[0], gast.Name)):
            return None
        names.add(parent.targets[0].id)
    for w in names:
        if w in params or kinds.get(w) != kinds[var] or not all(
                _harmless(n, parents, ndim, kinds) for n in mentions[w]):
            return None
    return names


def _allocations(body, depth: int):
    """(block, statement, loop depth) for each `V = np.empty(S)` / `np.zeros(S)` in a loop."""
    for stmt in body:
        if depth >= 1 and isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and _allocator(stmt.value):
            yield body, stmt, depth
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            inner_depth = depth + (not isinstance(stmt, gast.If))
            for inner in (stmt.body, stmt.orelse):
                yield from _allocations(inner, inner_depth)


def _allocator(value) -> str | None:
    """"empty" or "zeros" for `np.empty(S)` / `np.zeros(S)` (one argument), else None."""
    if (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
            and isinstance(value.func.value, gast.Name) and value.func.value.id == "np"
            and value.func.attr in ("empty", "zeros") and len(value.args) == 1
            and not value.keywords):
        return value.func.attr
    return None


def _shape_ok(stmt, kinds) -> bool:
    """S is a tuple or an int, read twice (the check, the allocation): names, constants and
    arithmetic on them only, which give the same value both times."""
    shape = stmt.value.args[0]
    if not all(isinstance(n, _PLAIN) for n in walk(shape)):
        return False
    if isinstance(shape, gast.Tuple):
        return True
    kind = K.kind_of(shape, kinds)
    return kind == K.I or (kind is not None and kind[0] == "tup")


def _reused(stmt, var: str, buf: str, kinds) -> list:
    """The statements standing for `V = np.empty(S)`: the check, the allocation, the fill
    (np.zeros) and `V = _buf`."""
    shape = stmt.value.args[0]
    wanted = shape
    if not isinstance(shape, gast.Tuple) and K.kind_of(shape, kinds) == K.I:
        wanted = gast.Tuple(elts=[shape], ctx=gast.Load())
    out = [gast.If(
        test=gast.Compare(left=gast.Attribute(value=name(buf), attr="shape", ctx=gast.Load()),
                          ops=[gast.NotEq()], comparators=[wanted]),
        body=[assign(buf, call(dotted("np.empty"), shape))], orelse=[])]
    if _allocator(stmt.value) == "zeros":
        out.append(gast.Expr(value=method(buf, "fill", const(0.0))))
    return out + [assign(var, name(buf))]


def _small_vector(mentions, parents, indices) -> bool:
    """Whether V's elements are read or written at constant positions somewhere, and
    otherwise only inside the form's elementwise loops (module doc)."""
    constant = False
    for node in mentions:
        parent = parents.get(id(node))
        if not (isinstance(parent, gast.Subscript) and parent.value is node):
            continue
        names = {n.id for n in walk(parent.slice) if isinstance(n, gast.Name)}
        if not names:
            constant = True
        elif not names <= indices:
            return False
    return constant


def _harmless(node, parents, ndim: int, kinds) -> bool:
    """Whether this mention of V makes no second reference to its array (module doc)."""
    if isinstance(node.ctx, (gast.Store, gast.Del)):
        return isinstance(node.ctx, gast.Store)  # a binding (or `V += x`: the same array)
    parent = parents.get(id(node))
    if isinstance(parent, gast.Subscript) and parent.value is node:
        index = parent.slice.elts if isinstance(parent.slice, gast.Tuple) else [parent.slice]
        return len(index) == ndim and not any(  # `V[...]`, `V[None]`: views
            isinstance(i, gast.Slice) or isinstance(i, gast.Constant)
            and (i.value is None or i.value is Ellipsis) for i in index)
    if isinstance(parent, gast.Attribute) and parent.value is node:
        if parent.attr in _ATTRIBUTES:
            return True
        grand = parents.get(id(parent))
        return (parent.attr in _METHODS and isinstance(grand, gast.Call)
                and grand.func is parent and not grand.keywords)
    if isinstance(parent, (gast.BinOp, gast.UnaryOp, gast.Compare)):
        return True
    if isinstance(parent, gast.Call) and node in parent.args and not parent.keywords:
        return _reading_call(parent, parent.args.index(node), kinds)
    return False


def _reading_call(node, position: int, kinds) -> bool:
    func = node.func
    if isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
            and func.value.id == "np":
        return func.attr in K.UFUNCS or func.attr in _REDUCTIONS
    if not isinstance(func, gast.Name):
        return False
    if func.id == "record_at":  # copies into an array tape (a list tape would keep V)
        tape = K.kind_of(node.args[0], kinds) if node.args else None
        return position == 2 and tape is not None and tape[0] == "arr"
    if func.id not in _HELPERS:
        return False
    positions = _HELPERS[func.id]
    return positions is None or position in positions
