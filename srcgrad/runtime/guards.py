"""Checks of the compiled form of a gradient (transforms/loops.py): it was made for
arguments of certain kinds and for loops whose arrays all have one shape; where that does
not hold it raises `ShapeGuard`, and backend/compile.py runs the statement-by-statement
form instead (from the start of the call: nothing the call was given has changed).
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from .recording import trip_count


class ShapeGuard(Exception):
    """The compiled form does not apply to this call (see the module docstring)."""


_DTYPES = {1: types.float64, 2: types.int64, 3: types.boolean}


def guard_kind(x, ndim, dtype):
    """Raise ShapeGuard unless x is a number (ndim 0) or an array of `ndim` dimensions, of
    dtype code `dtype` (1: float64, 2: int64, 3: bool)."""
    if ndim == 0:
        ok = isinstance(x, (bool, np.bool_)) if dtype == 3 else \
            isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) \
            if dtype == 2 else isinstance(x, (float, np.float64))
    else:
        ok = isinstance(x, np.ndarray) and x.ndim == ndim and x.dtype == {
            1: np.float64, 2: np.int64, 3: np.bool_}[dtype]
    if not ok:
        raise ShapeGuard()


def _raise_guard(*args):
    raise ShapeGuard()


@overload(guard_kind, prefer_literal=True)
def _guard_kind(x, ndim, dtype):
    ndim, dtype = ndim.literal_value, dtype.literal_value
    want = _DTYPES[dtype]
    if ndim == 0:
        if dtype == 1:
            ok = isinstance(x, types.Float) and x.bitwidth == 64
        elif dtype == 2:
            ok = isinstance(x, types.Integer)
        else:
            ok = isinstance(x, types.Boolean)
    else:
        ok = isinstance(x, types.Array) and x.ndim == ndim and x.dtype == want
    if ok:
        return lambda x, ndim, dtype: None

    def impl(x, ndim, dtype):
        raise ShapeGuard()
    return impl


def same_shape(x, shape):
    """Raise ShapeGuard unless `x.shape == shape` (`x` may be a shape itself: a tuple)."""
    if (x if isinstance(x, tuple) else np.shape(x)) != tuple(shape):
        raise ShapeGuard()


@overload(same_shape)
def _same_shape(x, shape):
    if isinstance(x, types.BaseTuple):
        def of_extents(x, shape):
            if x != shape:
                raise ShapeGuard()
        return of_extents

    def impl(x, shape):
        if x.shape != shape:
            raise ShapeGuard()
    return impl


def index_in(extent, i):
    """Raise IndexError unless `i` indexes a dimension of `extent` (what numba's boundscheck
    did at a view the compiled form no longer makes: transforms/flat_views.py)."""
    if not -extent <= i < extent:
        raise IndexError("index is out of bounds")


@overload(index_in)
def _index_in(extent, i):
    def impl(extent, i):
        if i < -extent or i >= extent:
            raise IndexError("index is out of bounds")
    return impl


def span_in(extent, start, stop, step, coef, offset):
    """Raise IndexError unless `coef * v + offset` indexes a dimension of `extent` for
    every v of range(start, stop, step) (nothing if the range is empty): a loop's check,
    made once before it, for steps other than 1 and -1 (transforms/bounds.py)."""
    values = [coef * v + offset for v in range(start, stop, step)]
    if values and not -extent <= min(values) <= max(values) < extent:
        raise IndexError("index is out of bounds")


@overload(span_in)
def _span_in(extent, start, stop, step, coef, offset):
    def impl(extent, start, stop, step, coef, offset):
        n = trip_count(start, stop, step)
        if n > 0:
            first = coef * start + offset
            last = coef * (start + (n - 1) * step) + offset
            if min(first, last) < -extent or max(first, last) >= extent:
                raise IndexError("index is out of bounds")
    return impl


def slice_at(bound, extent):
    """Where a slice bound `bound` (step 1) falls in a dimension of `extent`, as NumPy
    reads it: a negative bound counts from the end, and the result is clamped to
    0..extent (transforms/flat_views.py: a view's element as its array's)."""
    if bound < 0:
        bound += extent
    return min(max(bound, 0), extent)


@overload(slice_at)
def _slice_at(bound, extent):
    def impl(bound, extent):
        if bound < 0:
            bound += extent
        return min(max(bound, 0), extent)
    return impl
