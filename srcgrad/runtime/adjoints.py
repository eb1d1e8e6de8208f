"""Making and shaping adjoints: seeds, zeros, broadcasting in reverse."""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload
from numba.np.unsafe.ndarray import to_fixed_tuple

from ._types import is_number as _is_number
from .dtypes import as_float, float_dtype


# --- seed_like: the cotangent of the output (ones; the caller rejects non-scalar outputs) ---

def seed_like(y):
    return 1.0 if np.ndim(y) == 0 else np.ones(np.shape(y), float_dtype(y))


@overload(seed_like)
def _seed_like(y):
    if isinstance(y, types.Array):
        return lambda y: np.ones(y.shape)
    return lambda y: 1.0

# --- zeros_like: a zero adjoint with x's type and shape --------------------------------

def zeros_like(x):
    if isinstance(x, list):
        return [zeros_like(e) for e in x]
    return 0.0 if np.ndim(x) == 0 else np.zeros(np.shape(x), float_dtype(x))


@overload(zeros_like)
def _zeros_like(x):
    if _is_number(x) or isinstance(x, (types.UnicodeType, types.StringLiteral, types.NoneType)):
        return lambda x: 0.0  # a string or None has ndim 0: 0.0, as in Python
    if isinstance(x, types.List):
        return lambda x: [zeros_like(e) for e in x]
    return lambda x: np.zeros(x.shape)

# --- zeros_plus: zeros_like(x) + e in one pass, a buffer of its own -----------------------

def zeros_plus(x, e, fresh=False):
    """`zeros_like(x) + e`, copying e when it has x's shape (one pass instead of two).

    optimize.py folds `_adj_v = zeros_like(v); _adj_v = _adj_v + e` into it where
    `_adj_v` is later updated in place, which needs a buffer of its own. With `fresh`
    (owned.py: e is a new array no name holds) e itself is that buffer when it has x's
    shape and dtype.
    """
    if np.ndim(x) == 0:
        return 0.0 + e
    if np.shape(e) == np.shape(x):
        if fresh and isinstance(e, np.ndarray) and e.dtype == float_dtype(x):
            return e
        return np.array(e, dtype=float_dtype(x))
    return as_float(np.zeros(np.shape(x), float_dtype(x)) + e, x)


@overload(zeros_plus)
def _zeros_plus(x, e, fresh=False):
    if _is_number(x):
        return lambda x, e, fresh=False: 0.0 + e
    if isinstance(e, types.Array) and e.ndim == x.ndim:
        own = e.dtype == types.float64 and e.layout == "C"  # e's type is the result's

        def impl(x, e, fresh=False):
            if e.shape == x.shape:
                if own and fresh:
                    return e
                return e.astype(np.float64)  # a copy, as np.zeros(...) + e would be
            return np.zeros(x.shape) + e
        return impl
    return lambda x, e, fresh=False: np.zeros(x.shape) + e

# --- fill_like: v broadcast to x's shape (the adjoint of a full reduction) --------------

def fill_like(x, v):
    return float(v) if np.ndim(x) == 0 else np.full(np.shape(x), v, dtype=float_dtype(x))


@overload(fill_like)
def _fill_like(x, v):
    if _is_number(x):
        return lambda x, v: float(v)
    return lambda x, v: np.full(x.shape, float(v))

# --- broadcast_like: a tangent stretched to its result's shape (forward mode) -----------

def broadcast_like(t, z):
    """`t` with the shape of `z`: `t` itself when it has it, else broadcast into a new array.
    The tangent of `X - b` by `b` alone is `-t_b`, of b's shape; the result has X's."""
    if np.ndim(z) == 0 or np.shape(t) == np.shape(z):
        return t
    return np.array(np.broadcast_to(t, np.shape(z)))


@overload(broadcast_like)
def _broadcast_like(t, z):
    if _is_number(z):
        return lambda t, z: t
    if _is_number(t):
        return lambda t, z: np.full(z.shape, t)
    if t.ndim == z.ndim:
        def impl(t, z):
            if t.shape == z.shape:
                return t
            return np.broadcast_to(t, z.shape).copy()
        return impl
    return lambda t, z: np.broadcast_to(t, z.shape).copy()


# --- unbroadcast: sum a cotangent back down to its argument's shape ---------------------

def unbroadcast(g, x):
    """Reverse NumPy broadcasting: sum `g` over the axes along which `x` was stretched."""
    xshape = np.shape(x)
    if not xshape:
        return float(np.sum(g))
    g = as_float(g, x)
    if g.ndim < len(xshape):
        return np.broadcast_to(g, xshape).copy()
    if g.shape == xshape:
        return g
    lead = g.ndim - len(xshape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    stretched = tuple(i for i, n in enumerate(xshape) if n == 1 and g.shape[i] != 1)
    return g.sum(axis=stretched, keepdims=True) if stretched else g


@overload(unbroadcast)
def _unbroadcast(g, x):
    if _is_number(x):
        if _is_number(g):
            return lambda g, x: g
        return lambda g, x: np.sum(g)
    if _is_number(g):
        return lambda g, x: np.full(x.shape, g)
    same_rank = g.ndim == x.ndim

    def impl(g, x):
        if same_rank:
            if g.shape == x.shape:
                return g
        return _sum_to(g, x.shape)
    return impl


def _sum_to(g, shape):
    pass  # only called from numba code; see the overload below


@overload(_sum_to)
def _sum_to_impl(g, shape):
    rank = len(shape)

    def impl(g, shape):
        # As in Python: sum the leading axes and the axes where x has length 1; keep g's
        # length elsewhere (so a shape that does not match g leaves those axes alone).
        lead = g.ndim - rank
        dims = np.empty(rank, np.int64)
        for d in range(rank):
            dims[d] = 1 if shape[d] == 1 else g.shape[d + lead]
        shape = to_fixed_tuple(dims, rank)
        # Walk g in C order with a running index; each element lands in the out element
        # it was broadcast from (`step[d]`: out's stride along g's axis d, 0 if summed).
        out = np.zeros(shape)
        flat = out.reshape(out.size)
        gs = g.shape
        lead = g.ndim - len(shape)
        gflat = np.ascontiguousarray(g).reshape(g.size)
        step = np.zeros(g.ndim, np.int64)
        stride = 1
        for d in range(g.ndim - 1, lead - 1, -1):
            n = shape[d - lead]
            if n != 1:
                step[d] = stride
            stride *= n
        index = np.zeros(g.ndim, np.int64)
        at = 0
        for k in range(g.size):
            flat[at] += gflat[k]
            d = g.ndim - 1
            while d >= 0:
                index[d] += 1
                at += step[d]
                if index[d] < gs[d]:
                    break
                at -= step[d] * gs[d]
                index[d] = 0
                d -= 1
        return out
    return impl


# --- stored: the cotangent of values written into an array, zero for integer arrays ------

def stored(g, a):
    """`g`, the cotangent of values written into `a`, or zeros where `a` holds integers or
    booleans: the write rounds the values, a step function whose derivative is zero."""
    kind = getattr(getattr(a, "dtype", None), "kind", "f")
    return g if kind not in "iub" else zeros_like(g)


@overload(stored)
def _stored(g, a):
    if isinstance(a, types.Array) and isinstance(a.dtype, (types.Integer, types.Boolean)):
        return lambda g, a: zeros_like(g)
    return lambda g, a: g
