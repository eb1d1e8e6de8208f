"""np.interp's tangent and its derivatives, so reverse mode can differentiate np.interp's
forward rule (an HVP, a Hessian, grad(grad(f)) through np.interp; issue 17).

On the interval [xp_j, xp_(j+1)) holding a point x (NumPy's choice: the first interval
whose right end is beyond x), with h = xp_(j+1) - xp_j, w = (x - xp_j) / h and the slope
s = (fp_(j+1) - fp_j) / h, the tangent along (t_x, t_xp, t_fp) is

    T = (1 - w) t_fp_j + w t_fp_(j+1) + s m,    m = t_x - (1 - w) t_xp_j - w t_xp_(j+1);

before xp_0 it is t_fp_0, at or beyond the last knot t_fp_(-1). T is linear in the
tangents (its adjoint is np.interp's own cotangent, matrices.interp_parts) and depends on
(x, xp, fp) through w and s only, with the interval held fixed:

- `interp_curvature(g, t_x, t_xp, t_fp, x, xp, fp)`: the cotangents (of x, xp, fp) of
  T for the cotangent g. dT/dw = (t_fp_(j+1) - t_fp_j) - s (t_xp_(j+1) - t_xp_j) and
  dT/ds = m. So d2 np.interp / dx2 is zero inside an interval, and the mixed x-fp and
  x-xp terms are not. At a knot the derivative is one-sided, from the interval to its
  right, as the first derivative's (and a point at or beyond the last knot is constant).
- `interp_second_tangent(t_x, t_xp, t_fp, s_x, s_xp, s_fp, x, xp, fp)`: T's tangent along
  (s_x, s_xp, s_fp) for (x, xp, fp), i.e. np.interp's second derivative along t and s
  (symmetric in them); with interp_tangent(s..., x, xp, fp) it is T's forward rule.
- `interp_tangent` gets its numba twin here (runtime/matrices.py has the NumPy form).

One loop per point, shared by Python and numba (register_jitable); a tangent given as a
number (a constant's zero) is broadcast. Results have x's float dtype (xp's, fp's).
"""
from __future__ import annotations

import numpy as np
from numba.extending import overload, register_jitable

from ._types import is_number as _is_number
from .dtypes import as_float
from .matrices import interp_tangent


@register_jitable
def _locate(xk, xp):
    """(side, j, w, h): side -1 before the first knot, 1 at or beyond the last, else 0."""
    n = xp.size
    if xk < xp[0]:
        return -1, 0, 0.0, 1.0
    if xk >= xp[n - 1]:
        return 1, n - 2, 0.0, 1.0
    j = min(max(np.searchsorted(xp, xk, side="right") - 1, 0), n - 2)
    h = xp[j + 1] - xp[j]
    return 0, j, (xk - xp[j]) / h, h


@register_jitable
def _tangent_1d(tx, txp, tfp, xs, xp, fp):
    out = np.empty(xs.size)
    for k in range(xs.size):
        side, j, w, h = _locate(xs[k], xp)
        if side < 0:
            out[k] = tfp[0]
        elif side > 0:
            out[k] = tfp[xp.size - 1]
        else:
            s = (fp[j + 1] - fp[j]) / h
            out[k] = ((1.0 - w) * tfp[j] + w * tfp[j + 1]
                      + s * (tx[k] - (1.0 - w) * txp[j] - w * txp[j + 1]))
    return out


@register_jitable
def _curvature_1d(g, tx, txp, tfp, xs, xp, fp):
    gx, gxp, gfp = np.zeros(xs.size), np.zeros(xp.size), np.zeros(xp.size)
    for k in range(xs.size):
        side, j, w, h = _locate(xs[k], xp)
        if side != 0:
            continue
        s = (fp[j + 1] - fp[j]) / h
        gw = g[k] * ((tfp[j + 1] - tfp[j]) - s * (txp[j + 1] - txp[j])) / h  # dT/dw / h
        gs = g[k] * (tx[k] - (1.0 - w) * txp[j] - w * txp[j + 1]) / h  # dT/ds / h
        gx[k] = gw
        gxp[j] += gw * (w - 1.0) + gs * s
        gxp[j + 1] += -gw * w - gs * s
        gfp[j] -= gs
        gfp[j + 1] += gs
    return gx, gxp, gfp


@register_jitable
def _second_1d(tx, txp, tfp, sx, sxp, sfp, xs, xp, fp):
    out = np.zeros(xs.size)
    for k in range(xs.size):
        side, j, w, h = _locate(xs[k], xp)
        if side != 0:
            continue
        s = (fp[j + 1] - fp[j]) / h
        dw = (sx[k] - (1.0 - w) * sxp[j] - w * sxp[j + 1]) / h
        ds = ((sfp[j + 1] - sfp[j]) - s * (sxp[j + 1] - sxp[j])) / h
        out[k] = (dw * ((tfp[j + 1] - tfp[j]) - s * (txp[j + 1] - txp[j]))
                  + ds * (tx[k] - (1.0 - w) * txp[j] - w * txp[j + 1]))
    return out


def _flat(v, size):
    return np.broadcast_to(np.asarray(v, dtype=np.float64), (size,)) if np.ndim(v) == 0 else \
        np.ascontiguousarray(v, dtype=np.float64).reshape(-1)


def _shaped(values, x):
    return float(values[0]) if np.ndim(x) == 0 else as_float(values.reshape(np.shape(x)), x)


def interp_curvature(g, t_x, t_xp, t_fp, x, xp, fp):
    """(cotangent of x, of xp, of fp) of interp_tangent(t_x, t_xp, t_fp, x, xp, fp) for g."""
    xs = _flat(x, 1)
    n = np.size(xp)
    gx, gxp, gfp = _curvature_1d(_flat(g, xs.size), _flat(t_x, xs.size), _flat(t_xp, n),
                                 _flat(t_fp, n), xs, _flat(xp, n), _flat(fp, n))
    return _shaped(gx, x), as_float(gxp, xp), as_float(gfp, fp)


def interp_second_tangent(t_x, t_xp, t_fp, s_x, s_xp, s_fp, x, xp, fp):
    """np.interp's second derivative along (t_x, t_xp, t_fp) and (s_x, s_xp, s_fp)."""
    xs = _flat(x, 1)
    n = np.size(xp)
    out = _second_1d(_flat(t_x, xs.size), _flat(t_xp, n), _flat(t_fp, n), _flat(s_x, xs.size),
                     _flat(s_xp, n), _flat(s_fp, n), xs, _flat(xp, n), _flat(fp, n))
    return _shaped(out, x)


# --- numba twins -----------------------------------------------------------------------------

@register_jitable
def _nb_flat(v, like):
    return (np.zeros(like.shape) + v).ravel()


def _nb_points(scalar):
    """(the points as a 1-d array, a value shaped like them flattened, back to x's shape)."""
    if scalar:
        return (register_jitable(lambda x: np.zeros(1) + x),
                register_jitable(lambda v, x: np.zeros(1) + v),
                register_jitable(lambda values, x: values[0]))
    return (register_jitable(lambda x: np.ascontiguousarray(x).ravel().astype(np.float64)),
            _nb_flat, register_jitable(lambda values, x: values.reshape(x.shape)))


@overload(interp_tangent)
def _nb_interp_tangent(t_x, t_xp, t_fp, x, xp, fp):
    points, flat, shaped = _nb_points(_is_number(x))

    def impl(t_x, t_xp, t_fp, x, xp, fp):
        out = _tangent_1d(flat(t_x, x), _nb_flat(t_xp, xp), _nb_flat(t_fp, xp), points(x),
                          xp.ravel(), fp.ravel())
        return shaped(out, x)
    return impl


@overload(interp_curvature)
def _nb_interp_curvature(g, t_x, t_xp, t_fp, x, xp, fp):
    points, flat, shaped = _nb_points(_is_number(x))

    def impl(g, t_x, t_xp, t_fp, x, xp, fp):
        gx, gxp, gfp = _curvature_1d(flat(g, x), flat(t_x, x), _nb_flat(t_xp, xp),
                                     _nb_flat(t_fp, xp), points(x), xp.ravel(), fp.ravel())
        return shaped(gx, x), gxp, gfp
    return impl
