"""Matrix decompositions as one helper per result, and their cotangents.

resolve.py spells `w, V = np.linalg.eigh(A)` as `(eigh_values(A), eigh_vectors(A))`
(likewise svd, qr and lstsq), so each result has a rule of its own and the
cotangents of the results used add up. Single matrices (2-d) only; the
formulas assume distinct eigenvalues / singular values and full column rank
(qr, lstsq with m >= n), and the helpers raise a ValueError otherwise
rather than return a wrong number. Every helper here but `tangent_by_cotangents`
compiles with numba as written (`register_jitable`).
"""
from __future__ import annotations

import numpy as np
from numba.extending import overload, register_jitable


@register_jitable
def _gaps(values):
    """F[i, j] = 1 / (v[j] - v[i]) off the diagonal, 0 on it; an error for a repeated value."""
    n = values.size
    out = np.zeros((n, n), values.dtype)
    for i in range(n):
        for j in range(n):
            if i != j:
                d = values[j] - values[i]
                if d == 0.0:
                    raise ValueError("srcgrad differentiates eigh/svd only where the "
                                     "eigenvalues (singular values) are distinct")
                out[i, j] = 1.0 / d
    return out


@register_jitable
def _lower_read(s):
    """The cotangent of a symmetric matrix NumPy reads from its lower triangle: S + S^T
    below the diagonal, S's diagonal on it, zero above."""
    n = s.shape[0]
    out = np.zeros((n, n), s.dtype)
    for i in range(n):
        out[i, i] = s[i, i]
        for j in range(i):
            out[i, j] = s[i, j] + s[j, i]
    return out


# --- eigh ---------------------------------------------------------------------------------

@register_jitable
def eigh_values(a):
    return np.linalg.eigh(a)[0]


@register_jitable
def eigh_vectors(a):
    return np.linalg.eigh(a)[1]


@register_jitable
def eigh_values_grad(g, a):
    v = np.linalg.eigh(a)[1]
    s = (v * g) @ v.T
    return _lower_read(0.5 * (s + s.T))


@register_jitable
def eigh_vectors_grad(g, ans, a):
    w = np.linalg.eigh(a)[0]
    inner = _gaps(w) * (ans.T @ g)
    s = ans @ inner @ ans.T
    return _lower_read(0.5 * (s + s.T))


# --- svd (reduced: A = U diag(s) Vt) -------------------------------------------------------

@register_jitable
def _reduced(a, full_matrices):
    m, n = a.shape
    if full_matrices and m != n:
        raise ValueError("srcgrad differentiates the U and Vt of np.linalg.svd of a "
                         "non-square matrix only with full_matrices=False")
    return np.linalg.svd(a, full_matrices=False)


@register_jitable
def svd_u(a, full_matrices=True):
    return np.linalg.svd(a, full_matrices=full_matrices)[0]


@register_jitable
def svd_s(a):
    return np.linalg.svd(a, full_matrices=False)[1]


@register_jitable
def svd_vt(a, full_matrices=True):
    return np.linalg.svd(a, full_matrices=full_matrices)[2]


@register_jitable
def svd_s_grad(g, a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return (u * g) @ vt


@register_jitable
def svd_u_grad(g, a, full_matrices):
    u, s, vt = _reduced(a, full_matrices)
    f = _gaps(s * s)
    j = f * (u.T @ g)
    inner = (j + j.T) * s  # (F o (U^T G - G^T U)) S, F antisymmetric
    rest = (g - u @ (u.T @ g)) / s  # (I - U U^T) G S^-1
    return u @ inner @ vt + rest @ vt


@register_jitable
def svd_vt_grad(g, a, full_matrices):
    u, s, vt = _reduced(a, full_matrices)
    v, gv = vt.T, g.T
    f = _gaps(s * s)
    k = f * (v.T @ gv)
    inner = s.reshape((-1, 1)) * (k + k.T)  # S (F o (V^T Gv - Gv^T V))
    rest = (gv - v @ (v.T @ gv)) / s  # (I - V V^T) Gv S^-1
    return u @ inner @ vt + u @ rest.T


# --- qr (reduced, m >= n, R with a nonzero diagonal) ----------------------------------------

@register_jitable
def qr_q(a):
    return np.linalg.qr(a)[0]


@register_jitable
def qr_r(a):
    return np.linalg.qr(a)[1]


@register_jitable
def _copy_lower(m):
    """The lower triangle of m mirrored into the upper one (also the symmetric matrix a
    perturbation of eigh's input stands for: NumPy reads only its lower triangle)."""
    n = m.shape[0]
    out = np.empty((n, n), m.dtype)
    for i in range(n):
        for j in range(n):
            out[i, j] = m[i, j] if j <= i else m[j, i]
    return out


@register_jitable
def _qr_back(q, r, m, gq):
    if q.shape[1] != r.shape[1]:
        raise ValueError("srcgrad differentiates np.linalg.qr of matrices with at least as "
                         "many rows as columns")
    b = gq + q @ _copy_lower(m)
    return np.linalg.solve(r, b.T).T  # B R^-T


@register_jitable
def qr_q_grad(g, a):
    q, r = np.linalg.qr(a)
    return _qr_back(q, r, -(g.T @ q), g)


@register_jitable
def qr_r_grad(g, a):
    q, r = np.linalg.qr(a)
    return _qr_back(q, r, r @ g.T, np.zeros(q.shape, q.dtype))


# --- lstsq (full column rank, m >= n) --------------------------------------------------------

@register_jitable
def _normal(a, b):
    m, n = a.shape
    if m < n or np.linalg.matrix_rank(a) < n:
        raise ValueError("srcgrad differentiates np.linalg.lstsq only for a matrix of full "
                         "column rank with at least as many rows as columns")
    return a.T @ a


def lstsq_solution(a, b, rcond=None):
    return np.linalg.lstsq(a, b, rcond=rcond)[0]


def lstsq_residuals(a, b, rcond=None):
    return np.linalg.lstsq(a, b, rcond=rcond)[1]


def lstsq_rank(a, b, rcond=None):
    return np.linalg.lstsq(a, b, rcond=rcond)[2]


def lstsq_sv(a, b, rcond=None):
    return np.linalg.lstsq(a, b, rcond=rcond)[3]


def _lstsq_twin(k):
    def typer(a, b, rcond=None):
        return lambda a, b, rcond=None: np.linalg.lstsq(a, b)[k]
    return typer


for _k, _fn in enumerate((lstsq_solution, lstsq_residuals, lstsq_rank, lstsq_sv)):
    overload(_fn)(_lstsq_twin(_k))


@register_jitable
def lstsq_solution_grads(g, ans, a, b):
    """(cotangent of a, of b) of x = lstsq(a, b)[0]: with z = (A^T A)^-1 g and r = b - A x,
    A' = r z^T - A z x^T and b' = A z."""
    z = np.linalg.solve(_normal(a, b), g)
    az = a @ z
    r = b - a @ ans
    if ans.ndim == 1:
        return np.outer(r, z) - np.outer(az, ans), az
    return r @ z.T - az @ ans.T, az


@register_jitable
def lstsq_residuals_grads(g, a, b):
    """(cotangent of a, of b) of the squared residual norms: -2 r x^T g and 2 r g
    (x minimizes them, so only their explicit dependence counts)."""
    _normal(a, b)
    x = np.linalg.lstsq(a, b)[0]
    if g.size == 0:  # no residuals (a square matrix): nothing depends on them
        return np.zeros(a.shape), np.zeros(b.shape)
    r = b - a @ x
    if b.ndim == 1:
        return -2.0 * g[0] * np.outer(r, x), 2.0 * g[0] * r
    return -2.0 * (r * g) @ x.T, 2.0 * r * g


# --- tangents (forward mode) -----------------------------------------------------------------

@register_jitable
def eigh_values_tangent(t, a):
    v = np.linalg.eigh(a)[1]
    return np.sum(v * (_copy_lower(np.zeros(a.shape, a.dtype) + t) @ v), axis=0)


@register_jitable
def eigh_vectors_tangent(t, a):
    w, v = np.linalg.eigh(a)
    return v @ (_gaps(w) * (v.T @ _copy_lower(np.zeros(a.shape, a.dtype) + t) @ v))


@register_jitable
def svd_s_tangent(t, a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(u * ((np.zeros(a.shape, a.dtype) + t) @ vt.T), axis=0)


def tangent_by_cotangents(cotangents, ans, *tangents):
    """The tangent of a result from its cotangent function, one output entry at a time:
    entry k is sum_i <cotangents(e_k)[i], tangents[i]> (e_k: the k-th unit cotangent).
    For results of a few entries (a decomposition's factors); plain NumPy."""
    out = np.zeros(np.shape(ans))
    flat = out.reshape(-1)
    for k in range(flat.size):
        unit = np.zeros(np.shape(ans))
        unit.reshape(-1)[k] = 1.0
        parts = cotangents(unit)
        parts = parts if isinstance(parts, tuple) else (parts,)
        flat[k] = sum(float(np.sum(p * t)) for p, t in zip(parts, tangents) if p is not None)
    return out


# Closed forms of the factors' tangents (by tangent_by_cotangents they cost one
# decomposition per entry); a tangent may be a number broadcast over the matrix.

@register_jitable
def _svd_factor_tangents(t, a, full_matrices):
    """(U', Vt') of the reduced SVD along t: with P = U^T t V and F the gaps of s^2,
    U' = U (F o (P S + S P^T)) + (I - U U^T) t V S^-1 and
    V' = V (F o (S P + P^T S)) + (I - V V^T) t^T U S^-1."""
    u, s, vt = _reduced(a, full_matrices)
    v = vt.T
    t = np.zeros(a.shape, a.dtype) + t  # a tangent may be a number broadcast over a
    tv, tu = t @ v, t.T @ u
    p = u.T @ tv
    f = _gaps(s * s)
    row, col = s.reshape((1, -1)), s.reshape((-1, 1))
    du = u @ (f * (p * row + col * p.T)) + (tv - u @ (u.T @ tv)) / row
    dv = v @ (f * (col * p + p.T * row)) + (tu - v @ (v.T @ tu)) / row
    return du, dv.T


@register_jitable
def svd_u_tangent(t, ans, a, full_matrices):
    return _svd_factor_tangents(t, a, full_matrices)[0]


@register_jitable
def svd_vt_tangent(t, ans, a, full_matrices):
    return _svd_factor_tangents(t, a, full_matrices)[1]


@register_jitable
def _qr_tangents(t, a):
    """(Q', R') along t (m >= n): X = Q^T t R^-1, its strict lower part L, W = L - L^T
    (Q^T Q', antisymmetric); R' = (X - W) R and Q' = t R^-1 - Q (X - W)."""
    q, r = np.linalg.qr(a)
    if q.shape[1] != r.shape[1]:
        raise ValueError("srcgrad differentiates np.linalg.qr of matrices with at least as "
                         "many rows as columns")
    t_r = np.linalg.solve(r.T, (np.zeros(a.shape, a.dtype) + t).T.copy()).T  # t R^-1
    x = q.T @ t_r
    low = np.tril(x, -1)
    upper = x - (low - low.T)
    return t_r - q @ upper, upper @ r


@register_jitable
def qr_q_tangent(t, ans, a):
    return _qr_tangents(t, a)[0]


@register_jitable
def qr_r_tangent(t, ans, a):
    return _qr_tangents(t, a)[1]


@register_jitable
def lstsq_solution_tangent(t_a, t_b, ans, a, b):
    """x' = (A^T A)^-1 (t_a^T r - A^T t_a x + A^T t_b), r = b - A x (x: ans)."""
    t_a, t_b = np.zeros(a.shape, a.dtype) + t_a, np.zeros(b.shape, b.dtype) + t_b
    r = b - a @ ans
    return np.linalg.solve(_normal(a, b), t_a.T @ r - a.T @ (t_a @ ans) + a.T @ t_b)


@register_jitable
def lstsq_residuals_tangent(t_a, t_b, ans, a, b):
    """The squared residual norms' tangent: 2 r . (t_b - t_a x) per column (A^T r = 0)."""
    x = np.linalg.solve(_normal(a, b), a.T @ b)
    if ans.size == 0:  # no residuals (a square matrix)
        return np.zeros(ans.shape)
    r = b - a @ x
    t_a, t_b = np.zeros(a.shape, a.dtype) + t_a, np.zeros(b.shape, b.dtype) + t_b
    per_column = (r * (t_b - t_a @ x)).reshape((r.shape[0], -1))  # a 1-d b: one column
    return (2.0 * np.sum(per_column, axis=0)).reshape(ans.shape)
