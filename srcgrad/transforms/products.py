"""Compiled form only: the cotangent of a matrix-vector product added into its adjoint
element by element, without the outer product numba would build first.

The backward sweep adds a parameter's cotangent into its adjoint in place when nothing
else reads the adjoint (transforms/optimize.py, rule 4), so a recurrent step `W @ h`
gives `_adj_W += matmul_lhs_grad(g, W, h)`: numba makes `np.outer(g, h)` in a new array,
then adds it, at every step (an RNN of 16 units: a third of its gradient's time).
`outer_products(body, kinds, roots, fresh)` rewrites such a statement (`+=` or `-=`, in
any block) into loops over the adjoint's elements:

    _n = _adj_W.shape
    same_shape((g.shape[0], h.shape[0]), _n)
    for _k in range(_n[0]):
        for _j in range(_n[1]):
            _adj_W[_k, _j] += g[_k] * h[_j]

The cases, by analysis/kinds.py's kinds of the call's arguments (float64 arrays or
numbers; names, or expressions calling nothing but NumPy's one-argument ufuncs, which are
bound to names first, in the call's order):
- `matmul_lhs_grad(g, a, b)`, a a matrix and b a vector: the outer product of g and b;
- `matmul_rhs_grad(g, a, b)`, a a vector and b a matrix: the outer product of a and g;
- either, a and b vectors (a dot product; g a number): `X[_k] += g * b[_k]` (lhs) or
  `g * a[_k]` (rhs).
Products of matrices and matrix-vector cotangents (`a.T @ g`) stay NumPy's (BLAS, which
sums in its own order).

Guarantee: when `same_shape` holds (otherwise ShapeGuard, and the generated function
runs: NumPy's broadcasting rules), every element of X becomes X[i, j] + g[i] * b[j]
(or the difference), the same product and the same sum as `X += np.outer(g, b)`, bit for
bit. The rewrite applies only where X may share memory with neither factor
(analysis/roots.py), so writing X never changes what a later element reads.
"""
from __future__ import annotations

import gast

from ..analysis.kinds import UFUNCS, is_array, is_number, kind_of
from ..analysis.roots import UNKNOWN, may_alias, of_expr
from ..syntax import walk

_VECTOR, _MATRIX, _NUMBER = ("arr", 1, "f"), ("arr", 2, "f"), ("num", "f")
_UNKNOWN = frozenset({UNKNOWN})


def outer_products(body, kinds, roots, fresh) -> int:
    """Rewrite every such statement in `body` (any depth); how many it rewrote."""
    done, out = 0, []
    for stmt in body:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(stmt, (gast.For, gast.While, gast.If)) and inner:
                done += outer_products(inner, kinds, roots, fresh)
        loops = _loops(stmt, kinds, roots, fresh)
        if loops is None:
            out.append(stmt)
        else:
            out += loops
            done += 1
    body[:] = out
    return done


def _pure(node) -> bool:
    """Whether evaluating `node` writes nothing: any node but a call, or a call of a NumPy
    or math function of one element (`np.cos(t)`: no `out` argument)."""
    if not isinstance(node, gast.Call):
        return True
    func = node.func
    return (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name)
            and func.value.id in ("np", "math") and func.attr in UFUNCS
            and len(node.args) == 1 and not node.keywords)


def _loops(stmt, kinds, roots, fresh):
    """The loops replacing `stmt`, or None if it is not one of the module's cases."""
    if not (isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, (gast.Add, gast.Sub))
            and isinstance(stmt.target, gast.Name) and isinstance(stmt.value, gast.Call)
            and isinstance(stmt.value.func, gast.Name) and not stmt.value.keywords
            and len(stmt.value.args) == 3
            and all(_pure(n) for a in stmt.value.args for n in walk(a))):
        return None
    rule, x, args = stmt.value.func.id, stmt.target.id, stmt.value.args
    g, a, b = (kind_of(arg, kinds) for arg in args)
    found = (a, b, g, kinds.get(x))
    if rule == "matmul_lhs_grad" and found == (_MATRIX, _VECTOR, _VECTOR, _MATRIX):
        factors = (0, 2)  # outer(g, b)
    elif rule == "matmul_rhs_grad" and found == (_VECTOR, _MATRIX, _VECTOR, _MATRIX):
        factors = (1, 0)  # outer(a, g)
    elif rule in ("matmul_lhs_grad", "matmul_rhs_grad") \
            and found == (_VECTOR, _VECTOR, _NUMBER, _VECTOR):
        factors = (0, 2 if rule == "matmul_lhs_grad" else 1)  # g * b or g * a
    else:
        return None
    if any(isinstance(n, gast.Name) and n.id not in roots and not is_number(kinds.get(n.id))
           for arg in args for n in walk(arg)):
        return None  # roots.py follows arrays only
    mine = roots.get(x, _UNKNOWN)
    if any(is_array(kind_of(args[k], kinds))
           and may_alias(mine, of_expr(args[k], roots, kinds, "<a new array>"))
           for k in factors):
        return None
    # Arguments that are expressions are evaluated first, in their order, as in the call.
    names = [arg.id if isinstance(arg, gast.Name) else fresh("_f") for arg in args]
    text = "".join(f"{n} = {gast.unparse(arg)}\n" for n, arg in zip(names, args)
                   if not isinstance(arg, gast.Name))
    op = "+=" if isinstance(stmt.op, gast.Add) else "-="
    left, right = (names[k] for k in factors)
    n, i = fresh("_n"), fresh("_k")
    if kinds.get(x) == _MATRIX:
        j = fresh("_j")
        text += (f"{n} = {x}.shape\n"
                 f"same_shape(({left}.shape[0], {right}.shape[0]), {n})\n"
                 f"for {i} in range({n}[0]):\n"
                 f"    for {j} in range({n}[1]):\n"
                 f"        {x}[{i}, {j}] {op} {left}[{i}] * {right}[{j}]\n")
    else:
        text += (f"{n} = {x}.shape\n"
                 f"same_shape({right}, {n})\n"
                 f"for {i} in range({n}[0]):\n"
                 f"    {x}[{i}] {op} {left} * {right}[{i}]\n")
    return gast.parse(text).body
