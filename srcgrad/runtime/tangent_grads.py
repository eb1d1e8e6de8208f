"""Cotangents of the helpers forward-mode rules call, so reverse mode can differentiate
forward code again (an HVP is reverse mode over f's generated forward code).

- `prod_others_grad(g, a, axis)`: the cotangent of a of `prod_others(a, axis)` (each
  element's product of the others along `axis`): sum over i != j of g_i times the
  product of the elements other than i and j. It is also prod_others' tangent along g
  (that Jacobian, np.prod's Hessian, is symmetric). Computed without division, from
  running products from both ends and their adjoints, so zeros in `a` are fine.
- `cumprod_tangent_grad(g, t, a, axis)`: the cotangent of a of `cumprod_tangent(t, a,
  axis)` (the tangent of np.cumprod(a) along t), by the adjoint of its recurrence
  T_k = T_(k-1) a_k + (a_0 ... a_(k-1)) t_k; division-free as well.
  `cumprod_second_tangent(t, s, a, axis)` is that recurrence's tangent along s (for a).
- `norm_direction_grads(G, g, ans, x, ord, axis, keepdims)`: the cotangents (of g, of
  ans, of x) of `linalg_norm_grad(g, ans, x, ord, axis, keepdims)`, the direction
  g d||x|| / dx, for vector p-norms (ord None, a number, inf) and the Frobenius norm; the
  other matrix norms (1, inf: piecewise linear, zero) give zeros, 2, -2 and 'nuc'
  (through an SVD) raise ValueError. At a zero norm the direction is zero (as the
  first derivative's), and so is its derivative. `norm_direction_tangent` is its tangent
  (Python only: a third derivative).
- `percentile_weights(g, a, q, axis)`: np.percentile's cotangent of a (g on the two
  ranks NumPy's linear method interpolates between); `percentile_spread(s, a, q, axis)`:
  per result, s at the upper rank minus s at the lower, times d(fraction)/dq (with s = a,
  d np.percentile / dq); `percentile_spread_grad` its adjoint in s.

Plain-NumPy forms take any axis; the numba twins cover what numba compiles of the
primal (1-d arrays or `axis=None`, as for the helpers they differentiate).
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from ._types import is_none as _is_none
from ._types import is_number as _is_number
from .dtypes import as_float
from .reductions import split_at_axis


@register_jitable
def _prod_others_grad_axis(g, a, ax):
    outer, n, inner = split_at_axis(a.shape, ax)
    src = np.ascontiguousarray(a).reshape((outer, n, inner))
    gs = np.ascontiguousarray(g).reshape((outer, n, inner))
    out = np.zeros((outer, n, inner))
    left, right = np.empty(n), np.empty(n)
    for i in range(outer):
        for k in range(inner):
            p, q = 1.0, 1.0
            for j in range(n):  # left[j] = a_0 ... a_(j-1); right[j] = a_(j+1) ... a_(n-1)
                left[j], right[n - 1 - j] = p, q
                p, q = p * src[i, j, k], q * src[i, n - 1 - j, k]
            bar = 0.0  # the adjoint of left[j + 1], sweeping down
            for j in range(n - 1, -1, -1):
                out[i, j, k] += bar * left[j]
                bar = gs[i, j, k] * right[j] + src[i, j, k] * bar
            bar = 0.0  # the adjoint of right[j - 1], sweeping up
            for j in range(n):
                out[i, j, k] += bar * right[j]
                bar = gs[i, j, k] * left[j] + src[i, j, k] * bar
    return out.reshape(a.shape)


def prod_others_grad(g, a, axis):
    if np.ndim(a) == 0:
        return 0.0
    like, a = a, np.asarray(a, dtype=np.float64)
    g = np.broadcast_to(np.asarray(g, dtype=np.float64), a.shape)
    if axis is None:
        return as_float(_prod_others_grad_axis(np.ravel(g), np.ravel(a), 0).reshape(a.shape), like)
    return as_float(_prod_others_grad_axis(g, a, axis + a.ndim if axis < 0 else axis), like)


@overload(prod_others_grad)
def _nb_prod_others_grad(g, a, axis):
    if _is_number(a):
        return lambda g, a, axis: 0.0
    if isinstance(axis, types.Integer):
        return lambda g, a, axis: _prod_others_grad_axis(
            np.zeros(a.shape) + g, a, axis + a.ndim if axis < 0 else axis)
    if not _is_none(axis):
        return None
    return lambda g, a, axis: _prod_others_grad_axis(
        (np.zeros(a.shape) + g).ravel(), a.ravel(), 0).reshape(a.shape)


@register_jitable
def _cumprod_tangent_grad_1d(g, t, a):
    n = a.size
    before, tangent = np.empty(n), np.empty(n)  # P_k = a_0 ... a_k and T_k, recomputed
    p, total = 1.0, 0.0
    for k in range(n):
        total = total * a[k] + p * t[k]
        p *= a[k]
        before[k], tangent[k] = p, total
    out = np.zeros(n)
    bar_t, bar_p = 0.0, 0.0  # adjoints of T_k and P_k, sweeping down
    for k in range(n - 1, 0, -1):
        bar_t += g[k]
        out[k] = bar_t * tangent[k - 1] + bar_p * before[k - 1]
        bar_p = bar_t * t[k] + bar_p * a[k]
        bar_t *= a[k]
    if n > 0:
        out[0] = bar_p
    return out


@register_jitable
def _cumprod_second_tangent_1d(t, s, a):
    n = a.size
    out = np.empty(n)
    p, total, d_p, d_total = 1.0, 0.0, 0.0, 0.0  # P_(k-1), T_(k-1) and their tangents along s
    for k in range(n):
        d_total = d_total * a[k] + total * s[k] + d_p * t[k]
        d_p = d_p * a[k] + p * s[k]
        total = total * a[k] + p * t[k]
        p *= a[k]
        out[k] = d_total
    return out


def _along(kernel, x, y, a, axis):
    """kernel(x, y, a) on 1-d slices along `axis` (None: the flattened arrays), shaped like a,
    of a's float dtype; x and y are broadcast to a's shape, or (np.cumprod's flat result
    for axis None) reshaped to it."""
    like, a = a, np.asarray(a, dtype=np.float64)
    x, y = (np.asarray(v, dtype=np.float64) for v in (x, y))
    x, y = (v.reshape(a.shape) if v.size == a.size else np.broadcast_to(v, a.shape) for v in (x, y))
    if axis is None:
        return as_float(kernel(np.ravel(x), np.ravel(y), np.ravel(a)).reshape(a.shape), like)
    xm, ym, am = (np.moveaxis(v, axis, -1) for v in (x, y, a))
    out = np.empty(am.shape)
    for index in np.ndindex(*am.shape[:-1]):
        out[index] = kernel(*(np.ascontiguousarray(v[index]) for v in (xm, ym, am)))
    return as_float(np.moveaxis(out, -1, axis), like)


def cumprod_tangent_grad(g, t, a, axis):
    return _along(_cumprod_tangent_grad_1d, g, t, a, axis)


def cumprod_second_tangent(t, s, a, axis):
    """The tangent of cumprod_tangent(t, a, axis) along s for a (np.cumprod's second
    derivative along t and s; symmetric in them)."""
    out = _along(_cumprod_second_tangent_1d, t, s, a, axis)
    return np.ravel(out) if axis is None else out  # shaped like np.cumprod's result


@overload(cumprod_second_tangent)
def _nb_cumprod_second_tangent(t, s, a, axis):
    if not _is_none(axis):
        return None
    return lambda t, s, a, axis: _cumprod_second_tangent_1d(
        (np.zeros(a.shape) + t).ravel(), (np.zeros(a.shape) + s).ravel(), a.ravel())


@overload(cumprod_tangent_grad)
def _nb_cumprod_tangent_grad(g, t, a, axis):
    if not _is_none(axis):
        return None
    return lambda g, t, a, axis: _cumprod_tangent_grad_1d(
        g.ravel(), (np.zeros(a.shape) + t).ravel(), a.ravel()).reshape(a.shape)


def _order(x, ord, axis):
    """The vector p of a norm whose direction is differentiable, or None (zero)."""
    if np.ndim(x) == 2 and axis is None and ord is not None and ord != "fro":
        if ord in (2, -2, "nuc"):
            raise ValueError(f"srcgrad: no second derivative for np.linalg.norm of a matrix "
                             f"with ord={ord!r} (through its SVD)")
        return None  # 1, -1, inf, -inf: piecewise linear
    p = 2 if ord in (None, "fro") else ord
    return None if p in (0, 1, np.inf, -np.inf) else p


def _unit_and_order(g, ans, x, ord, axis, keepdims):
    """(the direction with g = 1, the differentiable order p or None, the axis as a number)."""
    from .linalg import linalg_norm_grad
    unit = linalg_norm_grad(np.ones(np.shape(g)) if np.ndim(g) else 1.0, ans, x, ord, axis,
                            keepdims)
    axis = axis[0] if isinstance(axis, tuple) else axis
    return unit, (_order(x, ord, axis) if np.ndim(x) else None), axis


def _expanded(v, axis, keepdims):
    v = np.asarray(v, dtype=np.float64)
    return np.expand_dims(v, axis) if axis is not None and not keepdims else v


def norm_direction_grads(G, g, ans, x, ord, axis, keepdims):
    """(cotangent of g, of ans, of x) of linalg_norm_grad(g, ans, x, ord, axis, keepdims)."""
    unit, p, axis = _unit_and_order(g, ans, x, ord, axis, keepdims)
    total = np.sum(G * unit, axis=axis, keepdims=keepdims)
    d_g = total if np.ndim(g) else float(np.sum(total))
    if p is None:
        return d_g, (np.zeros(np.shape(ans)) if np.ndim(ans) else 0.0), as_float(0.0 * x, x)
    ge, ae = _expanded(g, axis, keepdims), _expanded(ans, axis, keepdims)
    safe = np.where(ae == 0, 1.0, ae)
    d_x = np.where(ae == 0, 0.0, G * ge * (p - 1) * np.abs(x) ** (p - 2) / safe ** (p - 1))
    d_ans = np.where(ans == 0, 0.0, -(p - 1) * np.asarray(g * total) / np.where(ans == 0, 1.0, ans))
    return d_g, (d_ans if np.ndim(ans) else float(d_ans)), as_float(d_x, x)


def norm_direction_tangent(t_g, t_ans, t_x, g, ans, x, ord, axis, keepdims):
    """The tangent of linalg_norm_grad(g, ans, x, ord, axis, keepdims) along t_g, t_ans, t_x
    (Python only: third derivatives of a norm)."""
    from .linalg import linalg_norm_grad
    along_g = linalg_norm_grad(t_g, ans, x, ord, axis, keepdims)
    unit, p, axis = _unit_and_order(g, ans, x, ord, axis, keepdims)
    if p is None:
        return along_g
    ge, ae, te = (_expanded(v, axis, keepdims) for v in (g, ans, t_ans))
    safe = np.where(ae == 0, 1.0, ae)
    rest = ge * (p - 1) * (np.abs(x) ** (p - 2) * t_x / safe ** (p - 1) - unit * te / safe)
    return as_float(along_g + np.where(ae == 0, 0.0, rest), x)


@register_jitable
def _nb_norm_grads(G, g, ans, x, p):
    ax = np.abs(x)
    if p == np.inf or p == -np.inf:
        hits = (ax == (np.max(ax) if p > 0 else np.min(ax))) * 1.0
        unit = np.sign(x) * hits / np.sum(hits)
    elif p == 0 or ans == 0.0:
        unit = np.zeros(x.shape)
    else:
        unit = np.sign(x) * ax ** (p - 1) / ans ** (p - 1)
    total = np.sum(G * unit)
    if ans == 0.0 or p == 0 or p == 1 or p == np.inf or p == -np.inf:
        return total, 0.0, np.zeros(x.shape)
    d_x = G * (g * (p - 1) / ans ** (p - 1)) * ax ** (p - 2)
    return total, -(p - 1) * g * total / ans, d_x


@overload(norm_direction_grads)
def _nb_norm_direction_grads(G, g, ans, x, ord, axis, keepdims):
    if not (isinstance(x, types.Array) and _is_number(g) and _is_none(axis)):
        return None
    if _is_none(ord):
        return lambda G, g, ans, x, ord, axis, keepdims: _nb_norm_grads(G, g, ans, x, 2.0)
    if _is_number(ord) and x.ndim == 1:
        return lambda G, g, ans, x, ord, axis, keepdims: _nb_norm_grads(G, g, ans, x, ord)
    return None


# --- np.percentile's tangent: weights on two ranks, and their spread -------------------

def _ranks(a, q, axis):
    """(a with `axis` last, a's order along it, the ranks lo and hi NumPy's linear method
    interpolates between, d(fraction)/dq)."""
    if np.ndim(q) != 0:
        raise ValueError("srcgrad differentiates np.percentile with one q at a time")
    a = np.asarray(a)
    moved = a.reshape(-1) if axis is None else np.moveaxis(a, axis, -1)
    n = moved.shape[-1]
    lo = int(np.floor(float(q) / 100.0 * (n - 1)))
    return np.argsort(moved, axis=-1, kind="stable"), lo, min(lo + 1, n - 1), (n - 1) / 100.0


def percentile_weights(g, a, q, axis):
    """np.percentile(a, q, axis)'s cotangent of a for g: g on the two ranks, weighted."""
    from .ordering import percentile_parts
    return percentile_parts(g, a, q, axis)[0]


@overload(percentile_weights)
def _nb_percentile_weights(g, a, q, axis):
    from .ordering import percentile_parts
    return lambda g, a, q, axis: percentile_parts(g, a, q, axis)[0]


def percentile_spread(s, a, q, axis):
    """Per result, (s at a's rank hi - s at a's rank lo) * d(fraction)/dq: s = a gives
    d np.percentile / dq; linear in s."""
    a = np.asarray(a)
    s = np.broadcast_to(np.asarray(s, dtype=np.float64), a.shape)
    order, lo, hi, k = _ranks(a, q, axis)
    ranked = np.take_along_axis(s.reshape(-1) if axis is None else np.moveaxis(s, axis, -1),
                                order, -1)
    out = (ranked[..., hi] - ranked[..., lo]) * k
    return float(out) if np.ndim(out) == 0 else out


def percentile_spread_grad(g, a, q, axis):
    """The adjoint of s -> percentile_spread(s, a, q, axis): +g k at rank hi, -g k at lo."""
    order, lo, hi, k = _ranks(a, q, axis)
    g = np.asarray(g, dtype=np.float64)[..., None] * k
    out = np.zeros(order.shape)
    np.put_along_axis(out, order[..., hi:hi + 1], g, -1)
    lower = np.take_along_axis(out, order[..., lo:lo + 1], -1)
    np.put_along_axis(out, order[..., lo:lo + 1], lower - g, -1)
    return as_float(out.reshape(np.shape(a)) if axis is None else np.moveaxis(out, -1, axis), a)


@register_jitable
def _nb_ranks(a, q):
    n = a.size
    lo = int(np.floor(q / 100.0 * (n - 1)))
    return np.argsort(a.ravel(), kind="mergesort"), lo, min(lo + 1, n - 1), (n - 1) / 100.0


@overload(percentile_spread)
def _nb_percentile_spread(s, a, q, axis):
    if not _is_none(axis):
        return None

    def impl(s, a, q, axis):
        order, lo, hi, k = _nb_ranks(a, q)
        flat = (np.zeros(a.shape) + s).ravel()
        return (flat[order[hi]] - flat[order[lo]]) * k
    return impl


@overload(percentile_spread_grad)
def _nb_percentile_spread_grad(g, a, q, axis):
    if not _is_none(axis):
        return None

    def impl(g, a, q, axis):
        order, lo, hi, k = _nb_ranks(a, q)
        out = np.zeros(a.size)
        out[order[hi]] += g * k
        out[order[lo]] -= g * k
        return out.reshape(a.shape)
    return impl
