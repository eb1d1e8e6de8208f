"""Scratch arrays of nested loops made once, not at every iteration, in a compiled form
(issue 13).

Loop code makes small arrays at every iteration (`xc = x[i] - mu[k]`, which the compiled
form computes into `xc = np.empty(_n)`; a user's `acc = np.zeros(d)`), and so does the
backward sweep for their adjoints. At a few elements each, the allocation and its release
cost more than the arithmetic (gmm at d=2: a quarter of the gradient).

`reuse_buffers(func, kinds, fresh)` rewrites `V = np.empty(S)` (or `np.zeros(S)`) inside
two nested loops into
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
- a binding of V (`V = ...`, `V += ...`).

Soundness rule: those uses never make a second reference to V's array (no view, no alias,
no element of a container, nothing returned or passed where it could be kept), so the
array one iteration allocated is reachable only through V and `_buf_V`. When the statement
runs again, V is rebound and nothing can read that array's old contents any more, so
giving V the same memory (np.empty's contents are unspecified; np.zeros's are zeroed
again) changes no value the function computes. After the loop V holds what the last
iteration put there, as before.

Only inside two loops: an array made once per iteration of a single loop is most often a
large one (ode's RK stages), where a buffer measured slower than np.empty (LLVM knows a
fresh allocation is memory nothing else points to, and vectorizes the element loops
better; bench/README.md).
"""
from __future__ import annotations

import gast

from ..analysis import kinds as K
from ..syntax import assign, call, const, dotted, method, name

_ATTRIBUTES = {"shape", "size", "ndim", "dtype"}
_REDUCTIONS = {"sum", "max", "min", "mean", "prod", "amax", "amin"}
_PLAIN = (gast.Name, gast.Constant, gast.Tuple, gast.BinOp, gast.UnaryOp, gast.operator,
          gast.unaryop, gast.expr_context)
_METHODS = {"sum", "max", "min", "mean", "prod", "copy", "fill", "any", "all"}
# Runtime helpers and the argument positions at which they read an array without keeping it.
_HELPERS = {"same_shape": None, "tape_like": None, "zeros_like": (0,), "unbroadcast": (1,),
            "expand_to": (1,), "axis_extremum_share": (0,), "len": (0,)}


def reuse_buffers(func: gast.FunctionDef, kinds: dict, fresh) -> int:
    """Give the arrays made at each iteration of a loop one buffer per statement; how many.
    `fresh(base)` gives a name the function does not use."""
    found = list(_allocations(func.body, 0))
    if not found:
        return 0
    parents = {id(c): p for p in gast.walk(func) for c in gast.iter_child_nodes(p)}
    params = {a.id for a in func.args.args}
    safe, top, made = {}, [], 0
    for block, stmt in found:
        var = stmt.targets[0].id
        kind = kinds.get(var, K.TOP)
        if var in params or kind[0] != "arr" or kind[2] != "f" or not _shape_ok(stmt, kinds):
            continue
        if var not in safe:
            safe[var] = all(_harmless(n, parents, kind[1], kinds) for n in gast.walk(func)
                            if isinstance(n, gast.Name) and n.id == var)
        if not safe[var]:
            continue
        buf = fresh(f"_buf_{var}")
        top.append(assign(buf, call(dotted("np.empty"), gast.Tuple(elts=[const(0)] * kind[1],
                                                             ctx=gast.Load()))))
        at = next(k for k, s in enumerate(block) if s is stmt)
        block[at:at + 1] = [gast.copy_location(s, stmt) for s in _reused(stmt, var, buf, kinds)]
        made += 1
    func.body[:0] = top
    return made


def _allocations(body, depth: int):
    """(block, statement) for each `V = np.empty(S)` / `np.zeros(S)` inside two loops."""
    for stmt in body:
        if depth >= 2 and isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                and isinstance(stmt.targets[0], gast.Name) and _allocator(stmt.value):
            yield body, stmt
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
    if not all(isinstance(n, _PLAIN) for n in gast.walk(shape)):
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


def _harmless(node, parents, ndim: int, kinds) -> bool:
    """Whether this mention of V makes no second reference to its array (module doc)."""
    if isinstance(node.ctx, (gast.Store, gast.Del)):
        return isinstance(node.ctx, gast.Store)  # a binding (or `V += x`: the same array)
    parent = parents.get(id(node))
    if isinstance(parent, gast.Subscript) and parent.value is node:
        index = parent.slice.elts if isinstance(parent.slice, gast.Tuple) else [parent.slice]
        return len(index) == ndim and not any(isinstance(i, gast.Slice) for i in index)
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
