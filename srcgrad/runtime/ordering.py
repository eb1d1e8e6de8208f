"""Helpers of the rules that select or move elements: sort, percentile, take, roll, cumprod.

Each cotangent puts `g` back where the forward computation took its values
from (np.sort: the element of that rank; np.percentile: the one or two
elements NumPy's linear method interpolates between, with their weights;
np.take: the indexed elements, a repeated index adding up). The plain-NumPy
forms take any axis; the numba twins cover what numba compiles of the primal
(1-d arrays or `axis=None`).
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from ._types import is_none as _is_none
from ._types import is_number as _is_number
from .dtypes import as_float, float_dtype


# --- sort: the cotangent of rank k goes to the element of rank k ------------------------

def sort_grad(g, a, axis):
    a = np.asarray(a)
    if axis is None:
        out = np.zeros(a.size)
        out[np.argsort(a, axis=None, kind="stable")] = np.ravel(g)
        return as_float(out.reshape(a.shape), a)
    order = np.argsort(a, axis=axis, kind="stable")
    out = np.zeros(a.shape, float_dtype(a))
    np.put_along_axis(out, order, np.asarray(g, dtype=np.float64), axis)
    return out


def sort_tangent(t, a, axis):
    """The tangent of np.sort(a, axis) along `t`: t's elements in a's sorted order."""
    t = np.broadcast_to(np.asarray(t, dtype=np.float64), np.shape(a))
    if axis is None:
        return np.ravel(t)[np.argsort(a, axis=None, kind="stable")]
    return np.take_along_axis(t, np.argsort(a, axis=axis, kind="stable"), axis)


@overload(sort_grad)
def _sort_grad(g, a, axis):
    def impl(g, a, axis):
        flat = a.ravel()
        out = np.zeros(flat.size)
        out[np.argsort(flat, kind="mergesort")] = g.ravel()
        return out.reshape(a.shape)
    return impl


@overload(sort_tangent)
def _sort_tangent(t, a, axis):
    def impl(t, a, axis):
        flat = (np.zeros(a.shape) + t).ravel()
        return flat[np.argsort(a.ravel(), kind="mergesort")]
    return impl


# --- percentile and median: NumPy's linear interpolation between two ranks ------------

def percentile_parts(g, a, q, axis):
    """(cotangent of a, cotangent of q) of np.percentile(a, q, axis) with a scalar q."""
    if np.ndim(q) != 0:
        raise ValueError("srcgrad differentiates np.percentile with one q at a time")
    a = np.asarray(a)
    moved = a.reshape(-1) if axis is None else np.moveaxis(a, axis, -1)
    n = moved.shape[-1]
    pos = float(q) / 100.0 * (n - 1)
    lo = int(np.floor(pos))
    hi = min(lo + 1, n - 1)
    frac = pos - lo
    order = np.argsort(moved, axis=-1, kind="stable")
    g = np.asarray(g, dtype=np.float64)[..., None]
    weights = np.zeros(moved.shape)
    np.put_along_axis(weights, order[..., lo:lo + 1], g * (1.0 - frac), -1)
    upper = np.take_along_axis(weights, order[..., hi:hi + 1], -1)
    np.put_along_axis(weights, order[..., hi:hi + 1], upper + g * frac, -1)
    ranked = np.take_along_axis(moved, order, -1)
    dq = np.sum(g[..., 0] * (ranked[..., hi] - ranked[..., lo]) * (n - 1) / 100.0)
    ga = weights.reshape(a.shape) if axis is None else np.moveaxis(weights, -1, axis)
    return as_float(ga, a), float(dq)


@overload(percentile_parts)
def _percentile_parts(g, a, q, axis):
    if not _is_none(axis):
        return None

    def impl(g, a, q, axis):
        flat = a.ravel()
        n = flat.size
        pos = q / 100.0 * (n - 1)
        lo = int(np.floor(pos))
        hi = min(lo + 1, n - 1)
        frac = pos - lo
        order = np.argsort(flat, kind="mergesort")
        out = np.zeros(n)
        out[order[lo]] += g * (1.0 - frac)
        out[order[hi]] += g * frac
        dq = g * (flat[order[hi]] - flat[order[lo]]) * (n - 1) / 100.0
        return out.reshape(a.shape), dq
    return impl


def median_grad(g, a, axis):
    return percentile_parts(g, a, 50.0, axis)[0]


@overload(median_grad)
def _median_grad(g, a, axis):
    return lambda g, a, axis: percentile_parts(g, a, 50.0, axis)[0]


# --- take and take_along_axis: a gather, whose adjoint adds into the indexed places -----

def _scatter(shape, index, g, like):
    """Zeros of `shape` (of `like`'s float dtype) with g added at `index` (repeated indices
    add up)."""
    out = np.zeros(shape, float_dtype(like))
    np.add.at(out, index, g)
    return out


def take_grad(g, a, indices, axis):
    a = np.asarray(a)
    if axis is None:
        return _scatter(a.size, np.asarray(indices), g, a).reshape(a.shape)
    index = [slice(None)] * a.ndim
    index[axis] = np.asarray(indices)
    return _scatter(a.shape, tuple(index), g, a)


@overload(take_grad)
def _take_grad(g, a, indices, axis):
    if not _is_none(axis):
        return None

    def impl(g, a, indices, axis):
        out = np.zeros(a.size)
        idx = np.asarray(indices).ravel()
        gs = (np.zeros(idx.shape) + g).ravel()
        for k in range(idx.size):
            i = idx[k]
            out[i if i >= 0 else i + a.size] += gs[k]
        return out.reshape(a.shape)
    return impl


def take_along_axis_grad(g, arr, indices, axis):
    arr = np.asarray(arr)
    if axis is None:
        return take_grad(g, arr, indices, None)
    axis = axis % arr.ndim
    grids = np.ogrid[tuple(slice(n) for n in indices.shape)]
    index = tuple(indices if d == axis else np.broadcast_to(grids[d], indices.shape)
                  for d in range(arr.ndim))
    return _scatter(arr.shape, index, g, arr)


@overload(take_along_axis_grad)
def _take_along_axis_grad(g, arr, indices, axis):
    if not (isinstance(arr, types.Array) and arr.ndim == 1):
        return None

    return lambda g, arr, indices, axis: take_grad(g, arr, indices, None)  # 1-d: a take


# --- roll: rolled back ------------------------------------------------------------------

def roll_back(g, shift, axis):
    return np.roll(np.asarray(g), np.negative(shift), axis)


@overload(roll_back)
def _roll_back(g, shift, axis):
    if _is_none(axis) and _is_number(shift):
        return lambda g, shift, axis: np.roll(g, -shift)
    return None


# --- cumprod: division-free, so zeros in a are fine ------------------------------------

@register_jitable
def _cumprod_grad_1d(g, a):
    n = a.size
    out = np.empty(n)
    s = 0.0
    for k in range(n - 1, -1, -1):  # s_k = g_k + a_{k+1} s_{k+1}
        s = g[k] + (a[k + 1] * s if k + 1 < n else 0.0)
        out[k] = s
    before = 1.0
    for k in range(n):  # times the product of the elements before k
        out[k] *= before
        before *= a[k]
    return out


@register_jitable
def _cumprod_tangent_1d(t, a):
    out = np.empty(a.size)
    total, before = 0.0, 1.0
    for k in range(a.size):  # T_k = T_{k-1} a_k + (a_0 ... a_{k-1}) t_k
        total = total * a[k] + before * t[k]
        before *= a[k]
        out[k] = total
    return out


def _along(fn, x, y, a, axis):
    """fn applied to 1-d slices of x and a along `axis` (None: the flattened arrays)."""
    a = np.asarray(a, dtype=np.float64)
    x = np.broadcast_to(np.asarray(x, dtype=np.float64), np.shape(y))
    if axis is None:
        return fn(np.ravel(x), np.ravel(a))
    xm, am = np.moveaxis(x, axis, -1), np.moveaxis(a, axis, -1)
    out = np.empty(xm.shape)
    for index in np.ndindex(*xm.shape[:-1]):
        out[index] = fn(np.ascontiguousarray(xm[index]), np.ascontiguousarray(am[index]))
    return np.moveaxis(out, -1, axis)


def cumprod_grad(g, a, axis):
    out = _along(_cumprod_grad_1d, g, g, a, axis)
    return as_float(out.reshape(np.shape(a)) if axis is None else out, a)


def cumprod_tangent(t, a, axis):
    return _along(_cumprod_tangent_1d, t, a, a, axis)


@overload(cumprod_grad)
def _cumprod_grad(g, a, axis):
    if not _is_none(axis):
        return None
    return lambda g, a, axis: _cumprod_grad_1d(g.ravel(), a.ravel()).reshape(a.shape)


@overload(cumprod_tangent)
def _cumprod_tangent(t, a, axis):
    if not _is_none(axis):
        return None
    return lambda t, a, axis: _cumprod_tangent_1d((np.zeros(a.shape) + t).ravel(), a.ravel())
