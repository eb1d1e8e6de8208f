"""Derivatives of the decompositions' tangents (runtime/decompositions.py), so reverse mode
can differentiate their forward rules: an HVP, a Hessian, grad(grad(f)) through
np.linalg.eigh, np.linalg.svd's singular values and np.linalg.lstsq (issue 17).

Each tangent helper T(t, a) = J(a) t is linear in t, so its cotangent of t is the first
derivative's own cotangent (eigh_values_grad, ...). Its cotangent of `a` is written
through the factors' cotangents, whose helpers already exist:

- `eigh_values_tangent_grad(g, t, a)`: with a = V diag(w) V^T and T the symmetric matrix
  t stands for (NumPy reads the lower triangle), w'_k = v_k^T T v_k, so the cotangent of V
  is 2 T V diag(g) and a's is eigh_vectors_grad of that.
- `eigh_vectors_tangent_grad(g, t, a)`: V' = V (F o M), M = V^T T V, F[i, j] = 1 / (w_j -
  w_i) off the diagonal; the cotangents of V (through V and M) and of w (through F, dF =
  -F o F o (dw_j - dw_i)) go back through eigh_vectors_grad and eigh_values_grad.
- `svd_s_tangent_grad(g, t, a)`: s'_k = u_k^T t v_k (reduced SVD): the cotangents of U,
  (t V) diag(g), and of Vt, diag(g) U^T t, through svd_u_grad and svd_vt_grad.
- `lstsq_solution_curvature(g, t_a, t_b, ans, a, b)` (cotangents of the solution as
  given, of a and of b) and `lstsq_residuals_curvature(g, t_a, t_b, a, b)`: by hand, each
  the gradient of its pairing (see decomposition_curvature.py), so numba compiles an
  HVP through np.linalg.lstsq.
- `eigh_values_second_tangent(t, s, a)`, `eigh_vectors_second_tangent(t, s, a)`,
  `svd_s_second_tangent(t, s, a)`: the tangent of T(t, a) along s for a (the second
  derivative along t and s; the helpers' forward rules, for third order). The SVD's
  uses the factors' tangents entry by entry (Python only); the others compile.

Distinct eigenvalues (singular values) are assumed, as by the first derivative, whose
`_gaps` raises otherwise.
"""
from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from .decompositions import (_copy_lower, _gaps, _normal, eigh_values_grad, eigh_vectors_grad,
                             eigh_vectors_tangent, svd_u_grad, svd_u_tangent, svd_vt_grad,
                             svd_vt_tangent)


@register_jitable
def eigh_values_tangent_grad(g, t, a):
    v = np.linalg.eigh(a)[1]
    return eigh_vectors_grad(2.0 * (_copy_lower(np.zeros(a.shape, a.dtype) + t) @ v) * g, v, a)


@register_jitable
def eigh_vectors_tangent_grad(g, t, a):
    w, v = np.linalg.eigh(a)
    f = _gaps(w)
    tv = _copy_lower(np.zeros(a.shape, a.dtype) + t) @ v
    m = v.T @ tv
    vg = v.T @ g
    h = f * vg
    g_v = g @ (f * m).T + tv @ (h + h.T)
    k = vg * m * f * f
    g_w = np.sum(k, axis=1) - np.sum(k, axis=0)
    return eigh_values_grad(g_w, a) + eigh_vectors_grad(g_v, v, a)


@register_jitable
def eigh_values_second_tangent(t, s, a):
    v = np.linalg.eigh(a)[1]
    return 2.0 * np.sum(eigh_vectors_tangent(s, a) * (_copy_lower(np.zeros(a.shape, a.dtype) + t) @ v),
                        axis=0)


@register_jitable
def eigh_vectors_second_tangent(t, s, a):
    w, v = np.linalg.eigh(a)
    f = _gaps(w)
    m = v.T @ _copy_lower(np.zeros(a.shape, a.dtype) + t) @ v
    ms = v.T @ _copy_lower(np.zeros(a.shape, a.dtype) + s) @ v
    q = f * ms  # V's tangent along s is V q, w's the diagonal of ms
    dw = np.diag(ms).copy()
    df = -f * f * (dw.reshape((1, -1)) - dw.reshape((-1, 1)))
    return v @ (q @ (f * m) + df * m + f * (q.T @ m + m @ q))


@register_jitable
def svd_s_tangent_grad(g, t, a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    t = np.zeros(a.shape, a.dtype) + t  # a tangent may be a number broadcast over a
    return (svd_u_grad((t @ vt.T) * g, a, False)
            + svd_vt_grad(g.reshape((-1, 1)) * (u.T @ t), a, False))


def svd_s_second_tangent(t, s, a):
    u, _, vt = np.linalg.svd(a, full_matrices=False)
    du = svd_u_tangent(s, u, a, False)
    dvt = svd_vt_tangent(s, vt, a, False)
    t = np.zeros(a.shape, a.dtype) + t
    return np.sum(du * (t @ vt.T), axis=0) + np.sum(u * (t @ dvt.T), axis=0)


# --- lstsq (full column rank): b and the solution as columns, a 1-d b one column --------

@register_jitable
def lstsq_solution_curvature(g, t_a, t_b, ans, a, b):
    """(cotangent of ans, of a, of b) of lstsq_solution_tangent(t_a, t_b, ans, a, b): the
    gradient of P = <R Z^T - A Z X^T, t_a> + <A Z, t_b>, Z = N^-1 g, N = A^T A, R = b - A X,
    X = ans as given. Through Z (dZ = -N^-1 dN Z) with W = N^-1 dP/dZ."""
    m, n = a.shape
    t_a = np.zeros(a.shape, a.dtype) + t_a
    tb = (np.zeros(b.shape, b.dtype) + t_b).reshape((m, -1))
    x, bb = np.ascontiguousarray(ans).reshape((n, -1)), np.ascontiguousarray(b).reshape((m, -1))
    normal = _normal(a, b)
    z = np.linalg.solve(normal, np.ascontiguousarray(g).reshape((n, -1)))
    r = bb - a @ x
    az, ta_z, ta_x = a @ z, t_a @ z, t_a @ x
    w = np.linalg.solve(normal, t_a.T @ r - a.T @ ta_x + a.T @ tb)
    g_x = -(a.T @ ta_z) - t_a.T @ az
    g_a = -(ta_z @ x.T) - az @ w.T - (a @ w) @ z.T - ta_x @ z.T + tb @ z.T
    return g_x.reshape(ans.shape), g_a, ta_z.reshape(b.shape)


@register_jitable
def lstsq_residuals_curvature(g, t_a, t_b, a, b):
    """(cotangent of a, of b) of lstsq_residuals_tangent: the gradient of
    P = 2 <R o G, t_b - t_a X> (G: g per column), X = N^-1 A^T b minimizing |R|^2. With
    D = dP/dR, the cotangent of X is E = -2 t_a^T (R o G) - A^T D, and Y = N^-1 E."""
    m, n = a.shape
    if g.size == 0:  # a square matrix: no residuals
        return np.zeros(a.shape), np.zeros(b.shape)
    t_a = np.zeros(a.shape, a.dtype) + t_a
    tb = (np.zeros(b.shape, b.dtype) + t_b).reshape((m, -1))
    bb = np.ascontiguousarray(b).reshape((m, -1))
    normal = _normal(a, b)
    x = np.linalg.solve(normal, a.T @ bb)
    r = bb - a @ x
    per_column = np.ascontiguousarray(g).reshape((1, -1))
    d = 2.0 * (tb - t_a @ x) * per_column
    y = np.linalg.solve(normal, -2.0 * t_a.T @ (r * per_column) - a.T @ d)
    g_a = -(d @ x.T) + r @ y.T - (a @ y) @ x.T
    return g_a, (d + a @ y).reshape(b.shape)
