"""Helpers of the rules for np.diag, np.kron and np.interp.

np.diag and np.kron are linear in each argument, so their cotangents gather
`g` back (the diagonal of g; g's blocks weighted by the other factor).
np.interp is piecewise linear: `interp_parts` gives the cotangents of x, xp
and fp with NumPy's choice of interval (x at or beyond the last knot takes
fp[-1], before the first fp[0], and then depends on nothing but that value).
Each has a numba twin for what numba compiles of the primal.
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from ._types import is_number as _is_number
from .dtypes import as_float, float_dtype


# --- np.diag ----------------------------------------------------------------------------

def diag_grad(g, v, k):
    """The cotangent of np.diag(v, k): the k-th diagonal of g (1-d v), or g on it (2-d v)."""
    if np.ndim(v) == 1:
        return np.diag(as_float(g, v), k).copy()
    out = np.zeros(np.shape(v), float_dtype(v))
    rows = np.arange(len(g)) + max(-k, 0)
    out[rows, rows + k] = g
    return out


@overload(diag_grad)
def _diag_grad(g, v, k):
    if isinstance(v, types.Array) and v.ndim == 1:
        return lambda g, v, k: np.diag(g, k).copy()

    def impl(g, v, k):
        out = np.zeros(v.shape)
        r0 = max(-k, 0)
        for i in range(g.size):
            out[r0 + i, r0 + i + k] = g[i]
        return out
    return impl


# --- np.kron: out[i*p + k, j*q + l] = a[i, j] b[k, l] (1-d: out[i*p + k] = a[i] b[k]) ---

def _blocks(g, a, b):
    """g as (m, p, n, q) blocks: g4[i, k, j, l] = out[i*p + k, j*q + l]."""
    a2, b2 = np.atleast_2d(a), np.atleast_2d(b)
    (m, n), (p, q) = a2.shape, b2.shape
    return np.reshape(g, (m, p, n, q)), a2, b2


def kron_lhs_grad(g, a, b):
    g4, _, b2 = _blocks(g, a, b)
    return np.einsum("ikjl,kl->ij", g4, b2).reshape(np.shape(a))


def kron_rhs_grad(g, a, b):
    g4, a2, _ = _blocks(g, a, b)
    return np.einsum("ikjl,ij->kl", g4, a2).reshape(np.shape(b))


def _kron_impl(lhs):
    def impl(g, a, b):
        a2 = a.reshape((1, a.size)) if a.ndim == 1 else a
        b2 = b.reshape((1, b.size)) if b.ndim == 1 else b
        m, n = a2.shape
        p, q = b2.shape
        g4 = np.ascontiguousarray(g).reshape((m, p, n, q))
        out = np.zeros((m, n)) if lhs else np.zeros((p, q))
        for i in range(m):
            for k in range(p):
                for j in range(n):
                    for el in range(q):
                        if lhs:
                            out[i, j] += g4[i, k, j, el] * b2[k, el]
                        else:
                            out[k, el] += g4[i, k, j, el] * a2[i, j]
        return out.reshape(a.shape) if lhs else out.reshape(b.shape)
    return impl


@overload(kron_lhs_grad)
def _kron_lhs_grad(g, a, b):
    if isinstance(a, types.Array) and isinstance(b, types.Array) and a.ndim == b.ndim:
        return _kron_impl(True)
    return None


@overload(kron_rhs_grad)
def _kron_rhs_grad(g, a, b):
    if isinstance(a, types.Array) and isinstance(b, types.Array) and a.ndim == b.ndim:
        return _kron_impl(False)
    return None


# --- np.interp(x, xp, fp) ----------------------------------------------------------------

def _interval(x, xp):
    """(left knot index j, weight w of knot j + 1, inside) per point of x."""
    x = np.asarray(x, dtype=np.float64)
    n = len(xp)
    j = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, n - 2)
    inside = (x >= xp[0]) & (x < xp[-1])
    w = (x - xp[j]) / (xp[j + 1] - xp[j])
    return j, w, inside


def interp_parts(g, x, xp, fp):
    """(cotangent of x, of xp, of fp) of np.interp(x, xp, fp), left/right at their defaults."""
    j, w, inside = _interval(x, xp)
    g = np.broadcast_to(np.asarray(g, dtype=np.float64), np.shape(x))
    fp, xp = np.asarray(fp), np.asarray(xp)
    slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
    gin = np.where(inside, g, 0.0)
    gx = gin * slope
    gfp = np.zeros(fp.shape)
    np.add.at(gfp, j, gin * (1.0 - w))
    np.add.at(gfp, j + 1, gin * w)
    np.add.at(gfp, 0, np.sum(np.where(np.asarray(x) < xp[0], g, 0.0)))
    np.add.at(gfp, -1, np.sum(np.where(np.asarray(x) >= xp[-1], g, 0.0)))
    gxp = np.zeros(xp.shape)
    np.add.at(gxp, j, -gin * slope * (1.0 - w))
    np.add.at(gxp, j + 1, -gin * slope * w)
    return (float(gx) if np.ndim(x) == 0 else as_float(gx, x)), as_float(gxp, xp), as_float(
        gfp, fp)


def interp_tangent(t_x, t_xp, t_fp, x, xp, fp):
    """The tangent of np.interp(x, xp, fp) along (t_x, t_xp, t_fp)."""
    j, w, inside = _interval(x, xp)
    fp, xp = np.asarray(fp, dtype=np.float64), np.asarray(xp, dtype=np.float64)
    t_xp = np.broadcast_to(np.asarray(t_xp, dtype=np.float64), xp.shape)
    t_fp = np.broadcast_to(np.asarray(t_fp, dtype=np.float64), fp.shape)
    slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
    moving = ((1.0 - w) * t_fp[j] + w * t_fp[j + 1]
              + slope * (np.asarray(t_x) - (1.0 - w) * t_xp[j] - w * t_xp[j + 1]))
    ends = np.where(np.asarray(x) < xp[0], t_fp[0], t_fp[-1])
    out = np.where(inside, moving, ends)
    return float(out) if np.ndim(x) == 0 else out


@overload(interp_parts)
def _interp_parts(g, x, xp, fp):
    scalar = _is_number(x)

    def impl(g, x, xp, fp):
        xs = np.zeros(1) + x if scalar else np.ascontiguousarray(x).ravel()
        gs = (np.zeros(np.shape(x)) + g).ravel() if not scalar else np.zeros(1) + g
        n = xp.size
        gx = np.zeros(xs.size)
        gxp = np.zeros(n)
        gfp = np.zeros(n)
        for k in range(xs.size):
            if xs[k] < xp[0]:
                gfp[0] += gs[k]
            elif xs[k] >= xp[n - 1]:
                gfp[n - 1] += gs[k]
            else:
                j = min(max(np.searchsorted(xp, xs[k], side="right") - 1, 0), n - 2)
                w = (xs[k] - xp[j]) / (xp[j + 1] - xp[j])
                slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
                gx[k] = gs[k] * slope
                gfp[j] += gs[k] * (1.0 - w)
                gfp[j + 1] += gs[k] * w
                gxp[j] -= gs[k] * slope * (1.0 - w)
                gxp[j + 1] -= gs[k] * slope * w
        return _shaped(gx, x), gxp, gfp
    return impl


def _shaped(values, x):
    return float(values[0]) if np.ndim(x) == 0 else values.reshape(np.shape(x))


@overload(_shaped)
def _shaped_twin(values, x):
    if _is_number(x):
        return lambda values, x: values[0]
    return lambda values, x: values.reshape(x.shape)
