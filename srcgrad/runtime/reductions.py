"""numba overloads of NumPy reductions over one axis and with `keepdims`, so that
`x.max(axis=1, keepdims=True)` (every softmax) and `np.mean(x, axis=0)` compile.

numba compiles `np.sum(x, axis=k)` and whole-array `np.max(x)`, but not `axis=` on
mean, max, min and prod, nor `keepdims=`; these overloads are tried after numba's own
and serve `np.sum`, `np.mean`, `np.max`/`np.amax`, `np.min`/`np.amin` and `np.prod`
of an array with `axis` None or an integer (negative counts from the end) and
`keepdims` a constant. They give NumPy's values: max and min propagate NaN and refuse
an empty axis (ValueError); sums and products of integers are int64, means float64.
np.var and np.std take `axis`, `ddof` and `keepdims` too (`_overload_spread`).
`prod_others_axis` is the partial derivative of a product along an axis (for
`axes.prod_others`).
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from ._types import is_none


def _keep(keepdims):
    """keepdims as a Python bool if numba knows it now (a constant or omitted), else None."""
    if isinstance(keepdims, types.Omitted):
        return bool(keepdims.value)
    if keepdims is False or is_none(keepdims):
        return False
    if isinstance(keepdims, types.BooleanLiteral):
        return keepdims.literal_value
    return None


@register_jitable
def split_at_axis(shape, ax):
    """(outer, n, inner): the lengths before, at and after axis `ax` of `shape`."""
    outer, inner = 1, 1
    for d in range(ax):
        outer *= shape[d]
    for d in range(ax + 1, len(shape)):
        inner *= shape[d]
    return outer, shape[ax], inner


@register_jitable
def _reduced_shape(shape, ax, keep, rank):
    dims = np.empty(rank, np.int64)
    k = 0
    for d in range(len(shape)):
        if d == ax:
            if keep:
                dims[k] = 1
                k += 1
        else:
            dims[k] = shape[d]
            k += 1
    return dims


def _accumulate(kind):
    """The per-lane loop of one reduction: (values, n) -> reduced value."""
    if kind in ("max", "min"):
        bigger = kind == "max"

        @register_jitable
        def extreme(v, n):
            if n == 0:
                raise ValueError("zero-size array to reduction operation which has no identity")
            acc = v[0]
            for j in range(1, n):
                x = v[j]
                if np.isnan(acc):
                    break
                if np.isnan(x) or (x > acc if bigger else x < acc):
                    acc = x
            return acc
        return extreme
    product = kind == "prod"

    @register_jitable
    def total(v, n):
        acc = 1 if product else 0
        for j in range(n):
            acc = acc * v[j] if product else acc + v[j]
        return acc / n if kind == "mean" else acc
    return total


def _result_dtype(kind, dtype):
    if kind in ("max", "min"):
        return dtype
    if isinstance(dtype, types.Float):
        return dtype
    return types.float64 if kind == "mean" else types.int64


def _overload_reduction(func, kind):
    lane = _accumulate(kind)

    @overload(func)
    def _reduction(a, axis=None, keepdims=False):
        keep = _keep(keepdims)
        if not isinstance(a, types.Array) or keep is None:
            return None
        out_dtype = _result_dtype(kind, a.dtype)
        if is_none(axis):
            if not keep:
                return lambda a, axis=None, keepdims=False: lane(
                    np.ascontiguousarray(a).reshape(a.size), a.size)
            ones = (1,) * a.ndim
            return lambda a, axis=None, keepdims=False: np.full(ones, lane(
                np.ascontiguousarray(a).reshape(a.size), a.size), out_dtype)
        if not isinstance(axis, types.Integer):
            return None
        rank = a.ndim if keep else a.ndim - 1

        def impl(a, axis=None, keepdims=False):
            ax = axis + a.ndim if axis < 0 else axis
            if ax < 0 or ax >= a.ndim:
                raise ValueError("axis is out of bounds for the array")
            outer, n, inner = split_at_axis(a.shape, ax)
            src = np.ascontiguousarray(a).reshape((outer, n, inner))
            out = np.empty(outer * inner, out_dtype)
            lanes = np.empty(n, a.dtype)
            for i in range(outer):
                for k in range(inner):
                    for j in range(n):
                        lanes[j] = src[i, j, k]
                    out[i * inner + k] = lane(lanes, n)
            return out.reshape(to_fixed_tuple(_reduced_shape(a.shape, ax, keep, rank), rank))

        if rank == 0:
            return lambda a, axis=None, keepdims=False: lane(np.ascontiguousarray(a), a.size)
        return impl
    return _reduction


for _func, _kind in ((np.sum, "sum"), (np.mean, "mean"), (np.max, "max"), (np.amax, "max"),
                     (np.min, "min"), (np.amin, "min"), (np.prod, "prod")):
    _overload_reduction(_func, _kind)


def _overload_spread(func, root):
    """np.var / np.std with `axis`, `ddof` and a constant `keepdims` (numba's take only the
    array): NumPy's two passes, the mean, then the mean square of what is left."""
    @overload(func)
    def _spread(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        keep = _keep(keepdims)
        if (not isinstance(a, types.Array) or keep is None or not is_none(dtype)
                or not is_none(out) or not (is_none(axis) or isinstance(axis, types.Integer))):
            return None

        def impl(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
            m = np.mean(a, axis=axis, keepdims=True)
            d = a - m
            s = np.sum(d * d, axis=axis, keepdims=keep) / (a.size / m.size - ddof)
            return np.sqrt(s) if root else s
        return impl


_overload_spread(np.var, False)
_overload_spread(np.std, True)


@register_jitable
def prod_others_axis(a, axis):
    """For each element of `a`, the product of the other elements along `axis` (shaped like
    `a`), from exclusive running products from both ends (a zero in `a` is fine)."""
    ax = axis + a.ndim if axis < 0 else axis
    outer, n, inner = split_at_axis(a.shape, ax)
    src = np.ascontiguousarray(a).reshape((outer, n, inner))
    out = np.empty((outer, n, inner))
    for i in range(outer):
        for k in range(inner):
            p = 1.0
            for j in range(n):
                out[i, j, k] = p
                p *= src[i, j, k]
            p = 1.0
            for j in range(n - 1, -1, -1):
                out[i, j, k] *= p
                p *= src[i, j, k]
    return out.reshape(a.shape)
