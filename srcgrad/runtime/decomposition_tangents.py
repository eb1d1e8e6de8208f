"""Derivatives of the decompositions' tangents (runtime/decompositions.py), so reverse mode
can differentiate their forward rules: an HVP, a Hessian, grad(grad(f)) through
np.linalg.eigh and np.linalg.svd's singular values (issue 17).

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

from .decompositions import (_copy_lower, _gaps, eigh_values_grad, eigh_vectors_grad,
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
