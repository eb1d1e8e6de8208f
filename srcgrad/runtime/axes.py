"""Cotangents of reductions over an axis, reshapes, transposes, cumsum and clip."""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from ._types import is_none as _is_none
from ._types import is_number as _is_number
from .cotangents import extremum_share
from .dtypes import as_float, float_dtype
from .reductions import prod_others_axis, split_at_axis


# --- expand_to: the cotangent of a reduction over `axis`, back in x's shape -------------

def expand_to(g, x, axis, keepdims):
    """`g` (shaped like a reduction of x over `axis`) re-expanded and broadcast to x's shape."""
    if np.ndim(x) == 0:
        return float(np.sum(g))
    if axis is None:
        return np.full(np.shape(x), np.sum(g), dtype=float_dtype(x))
    g = as_float(g, x)
    if not keepdims:
        g = np.expand_dims(g, axis)
    return np.broadcast_to(g, np.shape(x)).copy()


@overload(expand_to)
def _expand_to(g, x, axis, keepdims):
    if _is_number(x):
        if _is_number(g):
            return lambda g, x, axis, keepdims: float(g)
        return lambda g, x, axis, keepdims: float(np.sum(g))
    if _is_number(g):  # a full reduction, or one over the only axis of a 1-d x
        return lambda g, x, axis, keepdims: np.full(x.shape, float(g))
    if _is_none(axis):
        return lambda g, x, axis, keepdims: np.full(x.shape, float(np.sum(g)))
    if not isinstance(axis, types.Integer):
        return None

    def impl(g, x, axis, keepdims):
        # g's C-order layout is the same with or without the reduced length-1 axis: x is
        # (outer, n, inner) around the axis, g (outer, inner).
        ax = axis + x.ndim if axis < 0 else axis
        outer, n, inner = split_at_axis(x.shape, ax)
        gflat = np.ascontiguousarray(g).reshape(g.size)
        out = np.empty(outer * n * inner)
        for i in range(outer):
            for j in range(n):
                start = (i * n + j) * inner
                for k in range(inner):
                    out[start + k] = gflat[i * inner + k]
        return out.reshape(x.shape)
    return impl

# --- axis_extremum_share: d max(x, axis) / dx, split evenly between tied maxima ---------

def axis_extremum_share(x, ans, axis, keepdims):
    if axis is None or np.ndim(x) == 0:
        return extremum_share(x, ans)
    hits = as_float(x == expand_to(ans, x, axis, keepdims), x)
    return hits / expand_to(hits.sum(axis=axis), x, axis, False)


@overload(axis_extremum_share)
def _axis_extremum_share(x, ans, axis, keepdims):
    if _is_number(x) or _is_none(axis):
        return lambda x, ans, axis, keepdims: extremum_share(x, ans)

    def impl(x, ans, axis, keepdims):
        hits = (x == expand_to(ans, x, axis, keepdims)) * 1.0
        return hits / expand_to(np.sum(hits, axis=axis), x, axis, False)
    return impl

# --- reshape_like: a cotangent given x's shape (the adjoint of reshape, ravel, ...) -----

def reshape_like(g, x):
    if np.ndim(x) == 0:
        return float(np.sum(g))
    return np.reshape(as_float(g, x), np.shape(x))


@overload(reshape_like)
def _reshape_like(g, x):
    if _is_number(x):
        if _is_number(g):
            return lambda g, x: float(g)
        return lambda g, x: float(np.sum(g))
    if _is_number(g):
        return lambda g, x: np.full(x.shape, float(g))
    return lambda g, x: np.ascontiguousarray(g).reshape(x.shape)

# --- untranspose: the adjoint of np.transpose(x, axes) -----------------------------------

def untranspose(g, x, axes):
    if np.ndim(x) == 0:
        return float(np.sum(g))
    if axes is None:
        return np.transpose(g)
    nd = np.ndim(x)
    return np.transpose(g, np.argsort([a % nd for a in axes]))


@overload(untranspose)
def _untranspose(g, x, axes):
    if _is_number(x):
        if _is_number(g):
            return lambda g, x, axes: float(g)
        return lambda g, x, axes: float(np.sum(g))
    if _is_none(axes):
        return lambda g, x, axes: np.transpose(g)

    def impl(g, x, axes):
        shape = x.shape
        nd = len(shape)
        strides = np.empty(nd, np.int64)  # C-order element strides of x
        s = 1
        for d in range(nd - 1, -1, -1):
            strides[d] = s
            s *= shape[d]
        gs = g.shape
        out = np.empty(shape)
        flat = out.reshape(out.size)
        gflat = np.ascontiguousarray(g).reshape(g.size)
        for k in range(g.size):
            rem, idx = k, 0
            for d in range(nd - 1, -1, -1):
                i = rem % gs[d]
                rem //= gs[d]
                a = axes[d]
                if a < 0:
                    a += nd
                idx += i * strides[a]
            flat[idx] = gflat[k]
        return out
    return impl

# --- diff_grad: the adjoint of np.diff(a, n, axis) ----------------------------------------

def diff_grad(g, a, n, axis):
    """n times: `g` with a zero at both ends along `axis`, differenced and negated (element
    i of a gets g[i - 1] - g[i])."""
    g = as_float(g, a)
    for _ in range(n):
        pad = [(0, 0)] * g.ndim
        pad[axis] = (1, 1)
        g = -np.diff(np.pad(g, pad), axis=axis)
    return g


@overload(diff_grad)
def _diff_grad(g, a, n, axis):
    if not isinstance(a, types.Array):
        return None

    def impl(g, a, n, axis):  # along the last axis, the only one numba's np.diff takes
        if (axis + a.ndim if axis < 0 else axis) != a.ndim - 1:
            raise ValueError("srcgrad: the gradient of np.diff along an axis other than the "
                             "last is not compiled")
        m = a.shape[-1]
        outer = a.size // m if m else 0
        cur = np.ascontiguousarray(g).reshape((outer, m - n)).astype(np.float64)
        for _ in range(n):
            k = cur.shape[1]
            nxt = np.empty((outer, k + 1))
            for i in range(outer):
                prev = 0.0
                for j in range(k):
                    nxt[i, j] = prev - cur[i, j]
                    prev = cur[i, j]
                nxt[i, k] = prev
            cur = nxt
        return cur.reshape(a.shape)
    return impl

# --- cumsum_grad: the adjoint of np.cumsum(x, axis): reversed cumulative sums -----------

def cumsum_grad(g, x, axis):
    g = as_float(g, x)
    if axis is None:
        flat = np.cumsum(np.ravel(g)[::-1])[::-1]
        return float(flat[0]) if np.ndim(x) == 0 else flat.reshape(np.shape(x))
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis).copy()


@overload(cumsum_grad)
def _cumsum_grad(g, x, axis):
    scalar_x = _is_number(x)
    if _is_none(axis):
        def impl(g, x, axis):
            gflat = np.ascontiguousarray(g).reshape(g.size)
            out = np.empty(g.size)
            s = 0.0
            for k in range(g.size - 1, -1, -1):
                s += gflat[k]
                out[k] = s
            if scalar_x:
                return out[0]
            return out.reshape(x.shape)
        return impl
    if scalar_x or not isinstance(axis, types.Integer):
        return None

    def impl_axis(g, x, axis):
        shape = g.shape
        nd = len(shape)
        ax = axis + nd if axis < 0 else axis
        stride = 1
        for d in range(ax + 1, nd):
            stride *= shape[d]
        n = shape[ax]
        gflat = np.ascontiguousarray(g).reshape(g.size)
        out = np.empty(g.size)
        for k in range(g.size - 1, -1, -1):
            if (k // stride) % n == n - 1:
                out[k] = gflat[k]
            else:
                out[k] = gflat[k] + out[k + stride]
        return out.reshape(shape)
    return impl_axis

# --- prod_others: each element's partial derivative of np.prod(a, axis) ----------------

def prod_others(a, axis):
    """The product of the other elements along `axis` (all of them for None), shaped like `a`.

    Built from exclusive running products from both ends, so a zero in `a` gives
    the right partials (dividing the product by `a` gives 0/0 there)."""
    if np.ndim(a) == 0:
        return 1.0
    a = as_float(a, a)
    moved = a.reshape(1, -1) if axis is None else np.moveaxis(a, axis, -1)
    ones = np.ones(moved.shape[:-1] + (1,), a.dtype)
    left = np.cumprod(np.concatenate([ones, moved[..., :-1]], axis=-1), axis=-1)
    right = np.cumprod(np.concatenate([ones, moved[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    if axis is None:
        return (left * right).reshape(a.shape)
    return np.moveaxis(left * right, -1, axis).copy()


@overload(prod_others)
def _prod_others(a, axis):
    if _is_number(a):
        return lambda a, axis: 1.0
    if isinstance(axis, types.Integer):
        return lambda a, axis: prod_others_axis(a, axis)
    if not _is_none(axis):
        return None

    def impl(a, axis):
        flat = np.ascontiguousarray(a).reshape(a.size)
        out = np.empty(a.size)
        p = 1.0
        for k in range(a.size):
            out[k] = p
            p *= flat[k]
        p = 1.0
        for k in range(a.size - 1, -1, -1):
            out[k] *= p
            p *= flat[k]
        return out.reshape(a.shape)
    return impl

# --- clip_mask: 1.0 where lo < a < hi (a bound of None is no bound), else 0.0 --------------

def clip_mask(a, lo, hi):
    ok = np.asarray(True)
    if lo is not None:
        ok = ok & (np.asarray(a) > lo)
    if hi is not None:
        ok = ok & (np.asarray(a) < hi)
    out = np.broadcast_to(ok, np.shape(a)) * 1.0 if ok.ndim < np.ndim(a) else ok * 1.0
    return float(out) if out.ndim == 0 else out


@overload(clip_mask)
def _clip_mask(a, lo, hi):
    no_lo, no_hi = _is_none(lo), _is_none(hi)
    if all(_is_number(t) for t, none in ((a, False), (lo, no_lo), (hi, no_hi)) if not none):
        if no_lo and no_hi:
            return lambda a, lo, hi: 1.0
        if no_lo:
            return lambda a, lo, hi: 1.0 if a < hi else 0.0
        if no_hi:
            return lambda a, lo, hi: 1.0 if a > lo else 0.0
        return lambda a, lo, hi: 1.0 if a > lo and a < hi else 0.0
    if no_lo and no_hi:
        return lambda a, lo, hi: np.ones(a.shape)
    if no_lo:
        return lambda a, lo, hi: (a < hi) * 1.0
    if no_hi:
        return lambda a, lo, hi: (a > lo) * 1.0
    return lambda a, lo, hi: ((a > lo) & (a < hi)) * 1.0

# --- flatten_copy: x.flatten(), a 1-d copy -----------------------------------------------

def flatten_copy(a):
    return np.asarray(a).flatten()


@overload(flatten_copy)
def _flatten_copy(a):
    if isinstance(a, types.Array):
        return lambda a: a.flatten()
    return None
