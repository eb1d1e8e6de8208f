"""Arrays a loop makes at every iteration, with a shape the loop does not change: one
buffer, made before the loop.

ode's step makes its four stages' scratch arrays and, backwards, about ten adjoints, each
`V = np.empty(n)` at every step; at n = 1,000 the allocations and their release are a
sixth of the gradient. reuse_buffers.py gives arrays of nested loops and small vectors a
buffer checked at every iteration (`if _buf.shape != S: _buf = np.empty(S)`), which for
the large arrays of a single loop measured slower than allocating (LLVM no longer keeps
the array's data pointer out of the element loops). `hoist_buffers(func, kinds, fresh)`
makes such a buffer before the loop instead:

    _h_n = x.shape[0]              # the statements S is computed by, renamed
    _runs = trip_count(0, s, 1) > 0
    _buf_V = np.empty((max(_h_n, 0),) if _runs else (0,))
    for step in range(s):
        ...
        V = _buf_V                 # was: V = np.empty(n)
        same_shape(V, (n,))

Rule. `V = np.empty(S)` or `np.zeros(S)` is a statement of the body of a `for` loop L
over a range of arguments without calls (evaluated once more before L), V is a float64
array that is not a parameter and
whose every mention passes reuse_buffers.py's test (no second reference to an
iteration's array can outlive the iteration; copies `W = V` dead when the statement
runs), and S is *computable before L*: a name, constant, tuple or `+ - *` of those,
`A.shape` or `T[c]` (c a constant, T a name of tuple kind), whose names are parameters or
are bound once in the function, by a statement of its body before the one holding L (and
not rebound in that statement outside L), or bound once in L, by a statement of its body
before V's, to an expression computable before L; or `R.shape` of a row `R = T[i]`, bound
once in L before V's, of an array T computable before L (copied as `T.shape[1:]`: T may
have no rows there). Those statements are copied before L under fresh names (pure: they
read shapes and numbers and cannot change anything).

Soundness: each iteration gets the same memory, which nothing reads from an earlier
iteration any more (reuse_buffers.py's argument: np.empty's contents are unspecified,
np.zeros's are zeroed again by `fill`); `same_shape` raises ShapeGuard, and the generated
function runs instead (backend/fused.py), if the buffer's shape is not the S of this
iteration. A loop that never runs makes an empty buffer, and the extents are clamped at
0: such a loop's extents may be negative or huge, and its own np.empty never ran (found by
a review: `np.zeros(n * n)` in a loop of no iterations raised MemoryError before it).
Guarantee: every value computed is the same.
"""
from __future__ import annotations

import copy
from collections import Counter

import gast

from ..analysis import kinds as K
from ..analysis.extents import range3
from ..analysis.liveness import live_after
from ..frontend.trees import ByNode
from ..syntax import assign, call, const, dotted, method, name, walk
from .reuse_buffers import _allocator, _copies, _mentions


def hoist_buffers(func: gast.FunctionDef, kinds: dict, fresh) -> int:
    """Give loops' per-iteration arrays one buffer made before the loop; how many."""
    parents, mentions, params = _mentions(func)
    stores = Counter(n.id for n in walk(func)
                     if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
    top = _top_bindings(func, stores)
    state = {"live": None, "made": 0, "counts": ByNode(),  # the top statement holding each loop
             "top": {id(n): stmt for stmt in func.body for n in walk(stmt)
                     if isinstance(n, gast.For)}}

    def block(stmts):
        k = 0
        while k < len(stmts):
            stmt = stmts[k]
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(stmt, (gast.For, gast.While, gast.If)) and inner:
                    block(inner)
            if isinstance(stmt, gast.For):
                before = _loop(stmt, func, kinds, fresh, parents, mentions, params, stores,
                               top, state)
                stmts[k:k] = before
                k += len(before)
            k += 1
    block(func.body)
    return state["made"]


def _top_bindings(func, stores) -> dict:
    """name -> index of the statement of the function's body binding it, for names bound
    exactly once in the whole function, by an assignment of its body."""
    where = {}
    for k, stmt in enumerate(func.body):
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) \
                and stores[stmt.targets[0].id] == 1:
            where[stmt.targets[0].id] = k
    return where


def _loop(loop, func, kinds, fresh, parents, mentions, params, stores, top, state) -> list:
    """The statements to put before `loop`, having rewritten its allocations."""
    bound_in = Counter(n.id for n in walk(loop)
                       if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
    if not all(isinstance(n, _PURE_NODES) for a in loop.iter.args for n in walk(a)):
        return []  # its range is evaluated again before it (below): no calls
    # The statement of the function's body holding the loop; names bound at the top of
    # the function before it, and not rebound in it outside the loop, are bound (with the
    # same values) when the loop starts.
    at = next(k for k, s in enumerate(func.body) if s is state["top"][id(loop)])
    outer = state["counts"](func.body[at], lambda: Counter(
        n.id for n in walk(func.body[at])
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)))
    unstable = {n for n, c in outer.items() if c > bound_in[n]}  # bound outside too
    top = {n for n, where in top.items() if where < at} - unstable
    earlier = {s.targets[0].id for s in func.body[:at] if isinstance(s, gast.Assign)
               and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)} - unstable
    before, renamed, runs = [], {}, None
    k = 0
    while k < len(loop.body):
        stmt = loop.body[k]
        kind_ = _allocator(stmt.value) if isinstance(stmt, gast.Assign) \
            and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) else None
        var = stmt.targets[0].id if kind_ else None
        kind = kinds.get(var, K.TOP) if var else K.TOP
        if not (kind_ and var not in params and kind[0] == "arr" and kind[2] == "f"
                and bound_in[var] == 1):
            k += 1
            continue
        copies = _copies(var, mentions, parents, kinds, params)
        if copies is None:
            k += 1
            continue
        if copies:
            state["live"] = state["live"] or live_after(func, shape_only=True)
            if any(w in state["live"][id(stmt)] for w in copies):
                k += 1
                continue
        shape = stmt.value.args[0]
        scope = _Scope(loop, k, kinds, params - unstable, bound_in, top, earlier)
        chain = _chain(shape, scope, k, set())
        if chain is None or _clamped(shape, shape, kinds) is None:
            k += 1
            continue
        if runs is None:  # a loop that never runs makes empty buffers (huge extents)
            runs = fresh("_runs")
        buf = _emit(stmt, chain, kind[1], runs, before, renamed, kinds, fresh, loop)
        earlier.add(buf)  # bound before the loop: a later allocation's shape may read it
        wanted = gast.Tuple(elts=[shape], ctx=gast.Load()) \
            if K.kind_of(shape, kinds) == K.I else shape
        new = [assign(var, name(buf)), gast.Expr(value=call("same_shape", name(var), wanted))]
        if kind_ == "zeros":
            new.append(gast.Expr(value=method(buf, "fill", const(0.0))))
        loop.body[k:k + 1] = new
        state["made"] += 1
        k += len(new)
    return before


def _emit(stmt, chain, rank, runs, before, renamed, kinds, fresh, loop) -> str:
    """Append to `before` what makes the buffer of `stmt`'s array (the statements of its
    shape's chain not emitted yet, renamed; `runs`, first time; the buffer): its name."""
    for s in chain:  # the statements S is computed by, once each, renamed
        target = s.targets[0].id
        if target not in renamed:
            renamed[target] = fresh(f"_h{target}" if target.startswith("_") else
                                    f"_h_{target}")
            before.append(assign(renamed[target], _renamed(s.value, renamed)))
    if not any(isinstance(b, gast.Assign) and b.targets[0].id == runs for b in before):
        before.append(assign(runs, gast.Compare(
            left=call("trip_count", *[copy.deepcopy(a) for a in range3(loop.iter.args)]),
            ops=[gast.Gt()], comparators=[const(0)])))
    shape = stmt.value.args[0]
    buf = fresh(f"_buf_{stmt.targets[0].id}")
    extents = gast.IfExp(test=name(runs), body=_clamped(shape, _renamed(shape, renamed), kinds),
                         orelse=gast.Tuple(elts=[const(0)] * rank, ctx=gast.Load()))
    before.append(assign(buf, call(dotted("np.empty"), extents)))
    return buf


_PURE_OPS = (gast.Add, gast.Sub, gast.Mult)
_PURE_NODES = (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp, gast.Attribute,
               gast.Subscript, gast.Tuple, gast.operator, gast.unaryop, gast.expr_context)


class _Scope:
    """What `_chain` reads: the loop, its body's statements before V's, the names bound in
    it, the parameters, and the names bound at the top of the function before it."""

    def __init__(self, loop, k, kinds, params, bound_in, top, earlier):
        self.loop, self.k, self.kinds, self.params = loop, k, kinds, params
        self.bound_in, self.top, self.earlier = bound_in, top, earlier

    def binding(self, name_: str, k: int):
        """The index of the statement of the loop's body before k binding name_, if it is
        the only binding of name_ in the loop."""
        if self.bound_in[name_] != 1:
            return None
        return next((p for p, s in enumerate(self.loop.body[:k])
                     if isinstance(s, gast.Assign) and len(s.targets) == 1
                     and isinstance(s.targets[0], gast.Name) and s.targets[0].id == name_),
                    None)


def _chain(node, scope, k, seen, shaped=False):
    """The statements of the loop's body before its k-th that `node` needs, in order, if
    `node` is computable before the loop (module doc); else None. `shaped`: only the
    shape of the array `node` names is read, and the shape it had before the loop serves
    (a name bound at the top of the function before the loop: the array a loop carries
    keeps its shape, and same_shape checks that it did)."""
    if isinstance(node, gast.Constant):
        return [] if type(node.value) is int else None
    if isinstance(node, gast.Name):
        if not scope.bound_in[node.id] and (node.id in scope.params
                                             or node.id in scope.top):
            return []
        p = scope.binding(node.id, k)
        inner = None
        if p is not None and node.id not in seen:
            value = scope.loop.body[p].value
            inner = _chain(value, scope, p, seen | {node.id},
                           shaped and isinstance(value, gast.Name))
        if inner is not None:
            return inner + [scope.loop.body[p]]
        if p is not None and node.id not in seen:
            row = _row_shape(node.id, scope.loop.body[p].value, scope, p, seen)
            if row is not None:
                return row
        if shaped and (node.id in scope.params or node.id in scope.earlier):
            return []
        return None
    if isinstance(node, gast.Tuple):
        return _all([_chain(e, scope, k, seen) for e in node.elts])
    if isinstance(node, gast.BinOp) and isinstance(node.op, _PURE_OPS):
        return _all([_chain(e, scope, k, seen) for e in (node.left, node.right)])
    if isinstance(node, gast.Attribute) and node.attr == "shape" \
            and isinstance(node.value, gast.Name) \
            and K.is_array(scope.kinds.get(node.value.id)):
        return _chain(node.value, scope, k, seen, shaped=True)
    if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Constant) \
            and type(node.slice.value) is int:
        base = node.value
        if isinstance(base, gast.Attribute) or isinstance(base, gast.Name) \
                and (scope.kinds.get(base.id) or K.TOP)[0] == "tup":
            return _chain(base, scope, k, seen)
    return None


def _clamped(shape, hoisted, kinds):
    """`hoisted` (shape, renamed) as a tuple with each extent e as max(e, 0) (a loop that
    never runs may have a negative one, which np.empty refuses); None if shape's kind is
    not an int or a tuple of them."""
    if isinstance(shape, gast.Tuple):
        parts = [_clamped(a, b, kinds) for a, b in zip(shape.elts, hoisted.elts)]
        if any(p is None for p in parts):
            return None
        return gast.Tuple(elts=[e for p in parts for e in p.elts], ctx=gast.Load())
    kind = K.kind_of(shape, kinds)
    if kind == K.I or isinstance(shape, gast.Constant):
        return gast.Tuple(elts=[call("max", hoisted, const(0))], ctx=gast.Load())
    if kind is not None and kind[0] == "tup":  # each element (A.shape's are never < 0)
        return gast.Tuple(elts=[call("max", gast.Subscript(value=copy.deepcopy(hoisted),
                                                           slice=const(p), ctx=gast.Load()),
                                     const(0)) for p in range(len(kind[1]))],
                          ctx=gast.Load())
    return None


def _row_shape(target: str, value, scope, p, seen):
    """`target = R.shape` in the loop, where R is bound once in it, before, to a row
    `T[i]` of an array T computable before the loop: the chain of T and a statement made
    for the copy only, `target = T.shape[1:]` (T may have no rows before the loop, so
    `T[0]` cannot be read there)."""
    if not (isinstance(value, gast.Attribute) and value.attr == "shape"
            and isinstance(value.value, gast.Name)):
        return None
    q = scope.binding(value.value.id, p)
    row = scope.loop.body[q].value if q is not None else None
    if not (isinstance(row, gast.Subscript) and isinstance(row.value, gast.Name)
            and K.kind_of(row.slice, scope.kinds) == K.I):
        return None
    tape = scope.kinds.get(row.value.id) or K.TOP
    if not (K.is_array(tape) and tape[1] >= 2):
        return None
    inner = _chain(row.value, scope, q, seen | {target, value.value.id}, shaped=True)
    if inner is None:
        return None
    rows = gast.Subscript(value=gast.Attribute(value=name(row.value.id), attr="shape",
                                               ctx=gast.Load()),
                          slice=gast.Slice(lower=const(1), upper=None, step=None),
                          ctx=gast.Load())
    return inner + [assign(target, rows)]


def _all(parts):
    if any(p is None for p in parts):
        return None
    out = []
    for p in parts:
        out += [s for s in p if all(s is not t for t in out)]
    return out


def _renamed(node, renamed: dict):
    """A copy of `node` with the names in `renamed` replaced."""
    class Rename(gast.NodeTransformer):
        def visit_Name(self, n):
            return name(renamed[n.id]) if n.id in renamed else name(n.id)
    return Rename().visit(copy.deepcopy(node))
