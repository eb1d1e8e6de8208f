"""Pieces of the linear-algebra rules: stacked-matrix shapes, solves, norms, einsum.

The plain-NumPy forms accept stacks of matrices (`(..., M, M)`) the way
`np.linalg` does; the numba twins cover what numba's `np.linalg` compiles
(single 2-d matrices, 1-d or 2-d right-hand sides), avoiding np.swapaxes and
np.tril, which take numba seconds to compile. numba does not compile
`np.einsum`: a gradient using it runs as Python, and the numba twins of
`einsum_operand_grad` and `einsum_single` only say so.
"""
from __future__ import annotations

import string

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ._types import is_none as _is_none
from ._types import is_number as _is_number
from .dtypes import as_float, float_dtype


# --- swap_last_axes: the transpose of each matrix of a stack ----------------------------

def swap_last_axes(x):
    return np.swapaxes(x, -1, -2)


@overload(swap_last_axes)
def _swap_last_axes(x):
    if isinstance(x, types.Array) and x.ndim == 2:
        return lambda x: x.T  # numba's np.swapaxes takes seconds to compile
    return None

# --- stack_scalar: one number per matrix, shaped to scale a stack of matrices ------------

def stack_scalar(s):
    """`s` (a number, or one per matrix of a stack) shaped to broadcast against the stack."""
    if np.ndim(s) == 0:
        return float(s)
    return np.asarray(s)[..., None, None]


@overload(stack_scalar)
def _stack_scalar(s):
    if _is_number(s):
        return lambda s: float(s)
    return None

# --- solve: x = solve(a, b); cotangents b' = solve(a.T, g), a' = -b' x^T -------------------

def _vector_rhs(g, a):
    # np.linalg.solve treats b as a vector (or a stack of them) when x has one axis fewer than a.
    return np.ndim(g) == np.ndim(a) - 1


def solve_transposed(a, g):
    """The solution z of a.T z = g, with the vector/matrix convention of `g` (shaped like x)."""
    at = np.swapaxes(a, -1, -2)
    if _vector_rhs(g, a):
        return np.linalg.solve(at, np.asarray(g)[..., None])[..., 0]
    return np.linalg.solve(at, g)


@overload(solve_transposed)
def _solve_transposed(a, g):
    return lambda a, g: np.linalg.solve(a.T, g)


def solve_outer(z, x, a):
    """z x^T per matrix: the product of a vector or matrix solve's cotangent and solution."""
    if _vector_rhs(z, a):
        return np.asarray(z)[..., :, None] * np.asarray(x)[..., None, :]
    return z @ np.swapaxes(x, -1, -2)


@overload(solve_outer)
def _solve_outer(z, x, a):
    if isinstance(z, types.Array) and z.ndim == 1:
        return lambda z, x, a: np.outer(z, x)
    return lambda z, x, a: z @ x.T

# --- tril_half_diag: the lower triangle with its diagonal halved (cholesky's Phi) ---------

def tril_half_diag(x):
    out = np.tril(x)
    k = np.arange(min(np.shape(x)[-2:]))
    out[..., k, k] *= 0.5
    return out


@overload(tril_half_diag)
def _tril_half_diag(x):
    def impl(x):  # numba's np.tril takes seconds to compile
        m, n = x.shape
        out = np.zeros((m, n))
        for i in range(m):
            for j in range(min(i, n - 1) + 1):
                out[i, j] = 0.5 * x[i, j] if i == j else x[i, j]
        return out
    return impl

# --- slogdet, split: the sign carries no gradient, log|det| does -------------------------

def slogdet_sign(a):
    sign = np.linalg.slogdet(a)[0]
    return float(sign) if np.ndim(sign) == 0 else sign


def slogdet_logabs(a):
    logabs = np.linalg.slogdet(a)[1]
    return float(logabs) if np.ndim(logabs) == 0 else logabs


@overload(slogdet_sign)
def _slogdet_sign(a):
    return lambda a: np.linalg.slogdet(a)[0]


@overload(slogdet_logabs)
def _slogdet_logabs(a):
    return lambda a: np.linalg.slogdet(a)[1]

# --- linalg_norm_grad: the cotangent of np.linalg.norm(x, ord, axis, keepdims) ------------

def _share(hits, axis):
    """1 / (number of hits) at each hit, along `axis` (the whole array for None): ties split."""
    hits = hits * 1.0
    return hits / np.sum(hits, axis=axis, keepdims=True)


def _vector_direction(x, ans, p, axis):
    """d ||x||_p / dx along `axis`; `ans` has the reduced axis kept (length 1)."""
    ax = np.abs(x)
    if p == np.inf or p == -np.inf:
        best = np.max(ax, axis=axis, keepdims=True) if p > 0 else np.min(ax, axis=axis,
                                                                          keepdims=True)
        return np.sign(x) * _share(ax == best, axis)
    if p == 0:  # the number of nonzero entries: piecewise constant
        return np.zeros(np.shape(x))
    safe = np.where(ans == 0, 1.0, ans)
    return np.where(ans == 0, 0.0, np.sign(x) * ax ** (p - 1) / safe ** (p - 1))


def _matrix_direction(x, ans, p):
    """d ||x||_p / dx for one matrix (axis=None) and a matrix norm order."""
    if p is None or p == "fro":
        return x / ans if ans != 0 else np.zeros(x.shape)
    if p == "nuc":
        u, _, vt = np.linalg.svd(x, full_matrices=False)
        return u @ vt
    if isinstance(p, str):
        raise ValueError(f"srcgrad: no gradient for np.linalg.norm with ord={p!r}")
    if p in (2, -2):
        u, _, vt = np.linalg.svd(x, full_matrices=False)
        k = 0 if p == 2 else -1
        return np.outer(u[:, k], vt[k])
    if p in (1, -1, np.inf, -np.inf):
        along = 0 if p in (1, -1) else 1  # column sums for 1, row sums for inf
        sums = np.sum(np.abs(x), axis=along, keepdims=True)
        best = np.max(sums) if p > 0 else np.min(sums)
        return np.sign(x) * _share(sums == best, None)
    raise ValueError(f"srcgrad: no gradient for np.linalg.norm of a matrix with ord={p!r}")


def linalg_norm_grad(g, ans, x, ord, axis, keepdims):
    if np.ndim(x) == 0:
        return float(np.sum(g)) * float(np.sign(x))
    x = as_float(x, x)
    if isinstance(axis, tuple):
        if len(axis) != 1:
            raise ValueError("srcgrad: no gradient for np.linalg.norm over a pair of axes "
                             "(matrix norms of stacks); use axis=None on a 2-d array")
        axis = axis[0]
    if axis is None:
        g, ans = float(np.sum(g)), float(np.sum(ans))  # keepdims leaves arrays of size 1
        if x.ndim == 2 and ord is not None:
            return as_float(g * _matrix_direction(x, ans, ord), x)
        if isinstance(ord, str):
            raise ValueError(f"srcgrad: no gradient for np.linalg.norm with ord={ord!r} of a "
                             f"{x.ndim}-d array")
        p = 2 if ord is None else ord
        return as_float(g * _vector_direction(x, ans, p, None), x)
    if not keepdims:
        g, ans = np.expand_dims(g, axis), np.expand_dims(ans, axis)
    p = 2 if ord is None else ord
    return as_float(g * _vector_direction(x, ans, p, axis), x)


@register_jitable
def _nb_vector_direction(x, ans, p):
    ax = np.abs(x)
    if p == np.inf or p == -np.inf:
        best = np.max(ax) if p > 0 else np.min(ax)
        hits = (ax == best) * 1.0
        return np.sign(x) * hits / np.sum(hits)
    if p == 0 or ans == 0.0:
        return np.zeros(x.shape)
    return np.sign(x) * ax ** (p - 1) / ans ** (p - 1)


@register_jitable
def _nb_matrix_direction(x, ans, p):
    m, n = x.shape
    if p == 2 or p == -2:
        u, s, vt = np.linalg.svd(x, False)
        k = 0 if p == 2 else len(s) - 1
        return np.outer(u[:, k], vt[k])
    if p == 1 or p == -1 or p == np.inf or p == -np.inf:
        cols = p == 1 or p == -1  # column sums for 1, row sums for inf
        sums = np.zeros(n if cols else m)
        for i in range(m):
            for j in range(n):
                sums[j if cols else i] += abs(x[i, j])
        best = np.max(sums) if p > 0 else np.min(sums)
        hits = (sums == best) * 1.0
        share = hits / np.sum(hits)
        out = np.empty((m, n))
        for i in range(m):
            for j in range(n):
                out[i, j] = np.sign(x[i, j]) * share[j if cols else i]
        return out
    raise ValueError("srcgrad: no gradient for np.linalg.norm of a matrix with this ord")


@overload(linalg_norm_grad)
def _linalg_norm_grad(g, ans, x, ord, axis, keepdims):
    # numba compiles np.linalg.norm(x[, ord]) only: 1-d or 2-d x, no axis, no keepdims.
    if not (isinstance(x, types.Array) and x.ndim in (1, 2) and _is_number(g)
            and _is_none(axis)):
        return None
    if _is_none(ord):
        def frobenius(g, ans, x, ord, axis, keepdims):
            if ans == 0.0:
                return np.zeros(x.shape)
            return g * x / ans
        return frobenius
    if not _is_number(ord):
        return None
    if x.ndim == 1:
        return lambda g, ans, x, ord, axis, keepdims: g * _nb_vector_direction(x, ans, ord)
    return lambda g, ans, x, ord, axis, keepdims: g * _nb_matrix_direction(x, ans, ord)

# --- einsum: the cotangent of one operand (Python only: numba has no np.einsum) ----------

def _einsum_specs(subscripts, operands):
    """([each operand's labels], output labels), with `...` spelled out as spare letters."""
    s = subscripts.replace(" ", "")
    lhs, arrow, out = s.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(operands):
        raise ValueError(f"srcgrad: einsum subscripts {subscripts!r} name {len(ins)} operands, "
                         f"{len(operands)} given")
    spare = [c for c in string.ascii_letters if c not in s]
    extra = [np.ndim(op) - (len(spec) - 3) if "..." in spec else 0
             for spec, op in zip(ins, operands)]
    n = max(extra, default=0)
    ellipsis = "".join(spare[:n])  # broadcast axes, aligned to the right as NumPy does
    if not arrow:  # implicit output: the labels used once, in alphabetical order
        labels = "".join(spec.replace("...", "") for spec in ins)
        out = "..." + "".join(sorted(c for c in set(labels) if labels.count(c) == 1))
    ins = [spec.replace("...", ellipsis[n - e:] if e else "") for spec, e in zip(ins, extra)]
    return ins, out.replace("...", ellipsis)


def einsum_operand_grad(g, subscripts, k, *operands):
    """The cotangent of operand `k` of np.einsum(subscripts, *operands), given the output's.

    The output's labels trade places with operand k's: g and the other operands are
    contracted onto k's labels. Labels repeated within operand k (diagonals), found in no
    other spec (summed within k alone) or broadcast (length 1 in k) are then put back.
    """
    ins, out = _einsum_specs(subscripts, operands)
    x = operands[k]
    spec, shape = ins[k], np.shape(x)
    rest = [j for j in range(len(operands)) if j != k]
    elsewhere = set(out).union(*(ins[j] for j in rest))
    labels = "".join(dict.fromkeys(spec))  # operand k's distinct labels, in order
    kept = "".join(c for c in labels if c in elsewhere)
    swapped = ",".join([out] + [ins[j] for j in rest]) + "->" + kept
    cot = np.einsum(swapped, g, *(operands[j] for j in rest))
    size = dict(zip(spec, shape))
    full = [size[c] for c in labels]
    cot = np.reshape(cot, [cot.shape[kept.index(c)] if c in kept else 1 for c in labels])
    summed = tuple(d for d, n in enumerate(full) if n == 1 and cot.shape[d] != 1)
    if summed:  # axes of length 1 in x that broadcast against the other operands
        cot = np.sum(cot, axis=summed, keepdims=True)
    cot = np.broadcast_to(cot, full)
    if len(labels) == len(spec):
        result = np.array(cot, dtype=float_dtype(x))
    else:  # a diagonal: only entries whose repeated indices are equal get a cotangent
        result = np.zeros(shape, float_dtype(x))
        grids = np.indices(full, sparse=True)
        result[tuple(grids[labels.index(c)] for c in spec)] = cot
    return float(result) if np.ndim(x) == 0 else result


def _no_einsum(*args):
    raise TypingError("numba does not compile np.einsum")


overload(einsum_operand_grad)(_no_einsum)  # numba's message then names np.einsum itself


def einsum_single(subscripts, a):
    """np.einsum with one operand (generated code's spelling of it: one rule per arity)."""
    out = np.einsum(subscripts, a)
    return float(out) if np.ndim(out) == 0 else out


overload(einsum_single)(_no_einsum)

# --- cofactors: d det(a) / da, also where a is singular ----------------------------------

def cofactors(a, d):
    """The cofactor matrix of each matrix of `a` (`d`: their determinants): d * inv(a)^T
    where d != 0; from the SVD where d == 0 (a singular matrix's, zero below rank n - 1)."""
    a = np.asarray(a)
    d = np.broadcast_to(np.asarray(d, dtype=np.float64), a.shape[:-2])
    out = np.empty(a.shape, float_dtype(a))  # float32 stays float32
    for k in np.ndindex(a.shape[:-2]):
        out[k] = _cofactor(np.asarray(a[k], dtype=np.float64), float(d[k]))
    return out


@register_jitable
def _cofactor(m, det):
    if det != 0.0:
        return det * np.linalg.inv(m).T
    u, s, vt = np.linalg.svd(m)  # m = u diag(s) vt: adj(m)^T = det(u) det(vt) u adj(s) vt
    others = np.ones(s.shape[0])
    for i in range(s.shape[0]):
        for j in range(s.shape[0]):
            if j != i:
                others[i] *= s[j]
    return np.linalg.det(u) * np.linalg.det(vt) * ((u * others) @ vt)


@overload(cofactors)
def _cofactors(a, d):
    if isinstance(a, types.Array) and a.ndim == 2:
        return lambda a, d: _cofactor(np.asarray(a, dtype=np.float64), float(d))
    raise TypingError("cofactors: numba takes one matrix (a stack runs as Python)")
