"""Run-time helpers that generated code and derivative rules call.

Each helper is a plain NumPy function (used when the generated code runs as
Python, `jit=False`) with a numba twin registered by `numba.extending.overload`,
chosen per argument type at compile time, so the generated source stays the
same whether a value is a scalar or an array of any rank.

NOTE [scalars]: inside generated code a "scalar" is a Python/NumPy float or
int; 0-d arrays are turned into floats by the caller before the call
(`api.py`), so helpers only distinguish numbers from arrays of rank >= 1.
"""
from __future__ import annotations

import numpy as np
from numba import literally, types
from numba.extending import overload

from .errors import SrcgradError

__all__ = ["check_cotangent", "forbid_array_alias", "snapshot", "restore", "range_last", "tape_array", "trip_count", "seed_like", "zeros_like", "unbroadcast", "fill_like", "tie_share", "extremum_share",
           "select_where", "log_or_zero", "matmul_lhs_grad", "matmul_rhs_grad", "expand_to",
           "axis_extremum_share", "reshape_like", "untranspose", "cumsum_grad", "clip_mask",
           "flatten_copy"]


def _is_number(t) -> bool:
    return isinstance(t, (types.Number, types.Boolean))


# --- forbid_array_alias: `z = x; z += y` is only safe when z is not an array -----------

def forbid_array_alias(z, message):
    """Raise if `z` is an array: NumPy would update it in place, and with it what it aliases."""
    if isinstance(z, np.ndarray):
        raise SrcgradError(message)


@overload(forbid_array_alias)
def _forbid_array_alias(z, message):
    if isinstance(z, types.Array):
        if not isinstance(message, types.StringLiteral):
            return lambda z, message: literally(message)  # retype with the text as a constant
        text = message.literal_value

        def impl(z, message):
            raise SrcgradError(text)
        return impl
    return lambda z, message: None


# --- check_cotangent: a custom rule's cotangent must have its argument's shape ----------

def check_cotangent(ct, x, message):
    if np.shape(ct) != np.shape(x):
        raise SrcgradError(f"{message}: got shape {np.shape(ct)}, expected {np.shape(x)}")
    return ct


@overload(check_cotangent)
def _check_cotangent(ct, x, message):
    if not isinstance(message, types.StringLiteral):
        return lambda ct, x, message: literally(message)
    text = message.literal_value
    ct_array, x_array = isinstance(ct, types.Array), isinstance(x, types.Array)
    if not ct_array and not x_array:
        return lambda ct, x, message: ct
    if ct_array != x_array or ct.ndim != x.ndim:
        def impl(ct, x, message):
            raise SrcgradError(text + ": its rank differs from the argument's")
        return impl

    def impl(ct, x, message):
        if ct.shape != x.shape:
            raise SrcgradError(text + ": its shape differs from the argument's")
        return ct
    return impl


# --- snapshot: a value that later writes into its array cannot change ----------------

def snapshot(x):
    return x.copy() if isinstance(x, np.ndarray) else x


@overload(snapshot)
def _snapshot(x):
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    return lambda x: x


# --- restore: undo one recorded assignment (the tape holds every value assigned) -----

def restore(tape, x):
    """Drop the newest value on `tape`; return the one before it (or `x` if none)."""
    tape.pop()
    return tape[-1] if tape else x


@overload(restore)
def _restore(tape, x):
    def impl(tape, x):
        tape.pop()
        if len(tape) > 0:
            return tape[-1]
        return x
    return impl


# --- tape_array: a preallocated tape of n values like x (a loop with a known trip count) -

def tape_array(x, n):
    if isinstance(x, np.ndarray):
        return np.empty((n,) + x.shape, dtype=x.dtype)
    return np.empty(n, dtype=object)  # Python numbers keep their type (an int may become float)


@overload(tape_array)
def _tape_array(x, n):
    if isinstance(x, types.Array):
        dtype = x.dtype
        return lambda x, n: np.empty((n,) + x.shape, dtype)
    if isinstance(x, types.Boolean):
        return lambda x, n: np.empty(n, np.bool_)
    if isinstance(x, types.Number):
        # A name first bound to an int (`s = 0`) may later hold floats: numba types
        # each binding separately, so the tape takes the wider type.
        return lambda x, n: np.empty(n, np.float64)
    return None


# --- trip_count: len(range(start, stop, step)) ------------------------------------------

def trip_count(start, stop, step):
    return len(range(start, stop, step))


@overload(trip_count)
def _trip_count(start, stop, step):
    def impl(start, stop, step):
        n = (stop - start + step - (1 if step > 0 else -1)) // step
        return n if n > 0 else 0
    return impl


# --- range_last: the last value of range(start, stop, step), or start - step if empty -

def range_last(start, stop, step):
    n = len(range(start, stop, step))
    return start + (n - 1) * step


@overload(range_last)
def _range_last(start, stop, step):
    def impl(start, stop, step):
        n = (stop - start + step - (1 if step > 0 else -1)) // step
        if n < 0:
            n = 0
        return start + (n - 1) * step
    return impl


# --- seed_like: the cotangent of the output (ones; the caller rejects non-scalar outputs) ---

def seed_like(y):
    return 1.0 if np.ndim(y) == 0 else np.ones(np.shape(y))


@overload(seed_like)
def _seed_like(y):
    if isinstance(y, types.Array):
        return lambda y: np.ones(y.shape)
    return lambda y: 1.0


# --- zeros_like: a zero adjoint with x's type and shape --------------------------------

def zeros_like(x):
    if isinstance(x, list):
        return [zeros_like(e) for e in x]
    return 0.0 if np.ndim(x) == 0 else np.zeros(np.shape(x))


@overload(zeros_like)
def _zeros_like(x):
    if _is_number(x):
        return lambda x: 0.0
    if isinstance(x, types.List):
        return lambda x: [zeros_like(e) for e in x]
    return lambda x: np.zeros(x.shape)


# --- fill_like: v broadcast to x's shape (the adjoint of a full reduction) --------------

def fill_like(x, v):
    return float(v) if np.ndim(x) == 0 else np.full(np.shape(x), v, dtype=np.float64)


@overload(fill_like)
def _fill_like(x, v):
    if _is_number(x):
        return lambda x, v: float(v)
    return lambda x, v: np.full(x.shape, float(v))


# --- unbroadcast: sum a cotangent back down to its argument's shape ---------------------

def unbroadcast(g, x):
    """Reverse NumPy broadcasting: sum `g` over the axes along which `x` was stretched."""
    xshape = np.shape(x)
    if not xshape:
        return float(np.sum(g))
    g = np.asarray(g, dtype=np.float64)
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
    def impl(g, shape):
        # Walk g in C order; each element lands in the out element it was broadcast from.
        out = np.zeros(shape)
        flat = out.reshape(out.size)
        gs = g.shape
        lead = g.ndim - len(shape)
        gflat = np.ascontiguousarray(g).reshape(g.size)
        for k in range(g.size):
            rem, idx, stride = k, 0, 1
            for d in range(g.ndim - 1, lead - 1, -1):
                i = rem % gs[d]
                rem //= gs[d]
                n = shape[d - lead]
                if n != 1:
                    idx += i * stride
                stride *= n
            flat[idx] += gflat[k]
        return out
    return impl


# --- select_where: np.where that also takes three scalars ------------------------------

def select_where(c, a, b):
    out = np.where(c, a, b)
    return float(out) if out.ndim == 0 else out


@overload(select_where)
def _select_where(c, a, b):
    if _is_number(c) and _is_number(a) and _is_number(b):
        return lambda c, a, b: float(a) if c else float(b)
    return lambda c, a, b: np.where(c, a, b)


# --- tie_share: the share of d max(x, other) / dx at x (ties split in half) -------------

def tie_share(x, ans, other):
    return select_where(x == ans, select_where(x == other, 0.5, 1.0), 0.0)


@overload(tie_share)
def _tie_share(x, ans, other):
    return lambda x, ans, other: select_where(x == ans, select_where(x == other, 0.5, 1.0), 0.0)


# --- extremum_share: d max(x) / dx, split evenly between tied maxima ---------------------

def extremum_share(x, ans):
    hits = np.asarray(x == ans, dtype=np.float64)
    return hits / hits.sum() if hits.ndim else 1.0


@overload(extremum_share)
def _extremum_share(x, ans):
    if _is_number(x):
        return lambda x, ans: 1.0

    def impl(x, ans):
        hits = (x == ans) * 1.0
        return hits / np.sum(hits)
    return impl


# --- log_or_zero: log(x) where x > 0, else 0 (the exponent's share in x ** y) -----------

def log_or_zero(x):
    return select_where(x > 0, np.log(np.where(np.asarray(x) > 0, x, 1.0)), 0.0)


@overload(log_or_zero)
def _log_or_zero(x):
    if _is_number(x):
        return lambda x: np.log(x) if x > 0 else 0.0
    return lambda x: np.where(x > 0, np.log(np.where(x > 0, x, 1.0)), 0.0)


# --- matmul: cotangents of a @ b for 1-d and 2-d operands -------------------------------

def matmul_lhs_grad(g, a, b):
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 0 or b_nd == 0:
        return unbroadcast(g * b, a)
    if b_nd == 1:
        return np.outer(g, b) if a_nd == 2 else g * b
    return g @ b.T if a_nd == 2 else b @ g


def matmul_rhs_grad(g, a, b):
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 0 or b_nd == 0:
        return unbroadcast(g * a, b)
    if a_nd == 1:
        return np.outer(a, g) if b_nd == 2 else g * a
    return a.T @ g


@overload(matmul_lhs_grad)
def _matmul_lhs_grad(g, a, b):
    if _is_number(a) or _is_number(b):
        return lambda g, a, b: unbroadcast(g * b, a)
    if b.ndim == 1:
        if a.ndim == 2:
            return lambda g, a, b: np.outer(g, b)
        return lambda g, a, b: g * b
    if a.ndim == 2:
        return lambda g, a, b: g @ b.T
    return lambda g, a, b: b @ g


@overload(matmul_rhs_grad)
def _matmul_rhs_grad(g, a, b):
    if _is_number(a) or _is_number(b):
        return lambda g, a, b: unbroadcast(g * a, b)
    if a.ndim == 1:
        if b.ndim == 2:
            return lambda g, a, b: np.outer(a, g)
        return lambda g, a, b: g * a
    if b.ndim == 1:
        return lambda g, a, b: g @ a  # a.T @ g without the transpose
    return lambda g, a, b: a.T @ g


def _is_none(t) -> bool:
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


# --- expand_to: the cotangent of a reduction over `axis`, back in x's shape -------------

def expand_to(g, x, axis, keepdims):
    """`g` (shaped like a reduction of x over `axis`) re-expanded and broadcast to x's shape."""
    if np.ndim(x) == 0:
        return float(np.sum(g))
    if axis is None:
        return np.full(np.shape(x), float(np.sum(g)))
    g = np.asarray(g, dtype=np.float64)
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
        # g's C-order layout is the same with or without the reduced length-1 axis.
        shape = x.shape
        nd = len(shape)
        ax = axis + nd if axis < 0 else axis
        out = np.empty(shape)
        flat = out.reshape(out.size)
        gflat = np.ascontiguousarray(g).reshape(g.size)
        for k in range(out.size):
            rem, idx, stride = k, 0, 1
            for d in range(nd - 1, -1, -1):
                i = rem % shape[d]
                rem //= shape[d]
                if d != ax:
                    idx += i * stride
                    stride *= shape[d]
            flat[k] = gflat[idx]
        return out
    return impl


# --- axis_extremum_share: d max(x, axis) / dx, split evenly between tied maxima ---------

def axis_extremum_share(x, ans, axis, keepdims):
    if axis is None or np.ndim(x) == 0:
        return extremum_share(x, ans)
    hits = np.asarray(x == expand_to(ans, x, axis, keepdims), dtype=np.float64)
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
    return np.reshape(np.asarray(g, dtype=np.float64), np.shape(x))


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


# --- cumsum_grad: the adjoint of np.cumsum(x, axis): reversed cumulative sums -----------

def cumsum_grad(g, x, axis):
    g = np.asarray(g, dtype=np.float64)
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
