"""Derivatives of the tangents of svd's U and Vt, qr's Q and R and lstsq's solution and
residuals (runtime/decompositions.py), so second order goes through them (issue 17).

Each of those tangents is T(t, args) = sum_i <C(e_k, args)_i, t_i> per entry k, where C is
the first derivative's cotangent helper (svd_u_grad, qr_q_grad, ...). So T's cotangent of
t is C(g, args), and its cotangent of the matrices is the gradient of the pairing
<C(g, args), t> by args: that gradient is taken by srcgrad's own reverse mode, over a
plain-NumPy copy of C here (`_svd_u_pairing`, ...: the same formulas, written with
operations srcgrad has rules for, and calling no function of this package, which srcgrad
would take for a run-time helper without a rule). The pairings' gradients are generated
once, as Python (jit=False), so second order through these factors runs as Python (numba
falls back, with its warning), though the tangents themselves compile.

- `svd_u_curvature(g, t, a, full_matrices)`, `svd_vt_curvature`, `qr_q_curvature`,
  `qr_r_curvature`: the cotangent of a of that tangent for the cotangent g (lstsq's,
  written by hand and compiled, are in decomposition_tangents.py; its pairings here
  serve the second tangents).
- `..._second_tangent(tangents..., steps..., ans, args...)`: the tangent's derivative
  along the steps for its arguments (third order), an entry at a time.

As the first derivatives, they assume distinct singular values and full column rank.
"""
from __future__ import annotations

import numpy as np

from .decompositions import _reduced, tangent_by_cotangents
from .dtypes import as_float


def _svd_u_pairing(g, t, a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    eye = np.eye(s.size)  # the gaps 1 / (s_j^2 - s_i^2) off the diagonal, zero on it
    gaps = (1.0 - eye) / ((s * s).reshape((1, -1)) - (s * s).reshape((-1, 1)) + eye)
    j = gaps * (u.T @ g)
    cot = u @ ((j + j.T) * s) @ vt + ((g - u @ (u.T @ g)) / s) @ vt
    return np.sum(cot * t)


def _svd_vt_pairing(g, t, a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    v = vt.T
    gv = g.T
    eye = np.eye(s.size)
    gaps = (1.0 - eye) / ((s * s).reshape((1, -1)) - (s * s).reshape((-1, 1)) + eye)
    k = gaps * (v.T @ gv)
    cot = u @ (s.reshape((-1, 1)) * (k + k.T)) @ vt + u @ ((gv - v @ (v.T @ gv)) / s).T
    return np.sum(cot * t)


def _qr_q_pairing(g, t, a):
    q, r = np.linalg.qr(a)
    m = -(g.T @ q)
    b = g + q @ (np.tril(m) + np.tril(m, -1).T)  # m's lower triangle mirrored
    return np.sum(np.linalg.solve(r, b.T).T * t)


def _qr_r_pairing(g, t, a):
    q, r = np.linalg.qr(a)
    m = r @ g.T
    b = q @ (np.tril(m) + np.tril(m, -1).T)
    return np.sum(np.linalg.solve(r, b.T).T * t)


def _lstsq_solution_pairing(g, t_a, t_b, ans, a, b):
    z = np.linalg.solve(a.T @ a, g)
    az = a @ z
    r = b - a @ ans
    if np.ndim(ans) == 1:
        return np.sum((np.outer(r, z) - np.outer(az, ans)) * t_a) + np.sum(az * t_b)
    return np.sum((r @ z.T - az @ ans.T) * t_a) + np.sum(az * t_b)


def _lstsq_residuals_pairing(g, t_a, t_b, a, b):
    n = a.T @ a
    x = np.linalg.solve(n, a.T @ b)
    r = b - a @ x
    if np.ndim(b) == 1:
        return -2.0 * g[0] * np.sum(np.outer(r, x) * t_a) + 2.0 * g[0] * np.sum(r * t_b)
    return -2.0 * np.sum(((r * g) @ x.T) * t_a) + 2.0 * np.sum(r * g * t_b)


# kind: (pairing, number of tangents, does the pairing read the result `ans`)
_KINDS = {"svd_u": (_svd_u_pairing, 1, False), "svd_vt": (_svd_vt_pairing, 1, False),
          "qr_q": (_qr_q_pairing, 1, False), "qr_r": (_qr_r_pairing, 1, False),
          "lstsq_solution": (_lstsq_solution_pairing, 2, True),
          "lstsq_residuals": (_lstsq_residuals_pairing, 2, False)}
_GRADIENTS: dict = {}
_GRAD: list = []  # srcgrad.grad, given by api/derivatives.py (the runtime imports no api)


def use_grad(grad) -> None:
    """Take `srcgrad.grad` for the pairings' gradients (api/derivatives.py calls this)."""
    _GRAD[:] = [grad]


def _pairing_gradient(kind, count):
    key = (kind, count)
    if key not in _GRADIENTS:
        pairing, tangents, _ = _KINDS[kind]
        first = 1 + tangents
        _GRADIENTS[key] = _GRAD[0](pairing, wrt=tuple(range(first, first + count)), jit=False)
    return _GRADIENTS[key]


def _floats(values, like):
    return tuple(np.array(np.broadcast_to(np.asarray(v, dtype=np.float64), np.shape(x)))
                 for v, x in zip(values, like))


def _curvature(kind, g, tangents, args):
    """The cotangents of args of `kind`'s tangent (its tangents held) for the cotangent g."""
    g = np.asarray(g, dtype=np.float64)
    if kind == "lstsq_residuals" and g.size == 0:  # a square matrix: no residuals
        return tuple(np.zeros(np.shape(x)) for x in args)
    floats = _floats(args, args)
    parts = _pairing_gradient(kind, len(args))(g, *_floats(tangents, tangents), *floats)
    return tuple(as_float(np.asarray(p, dtype=np.float64).reshape(np.shape(x)), x)
                 for p, x in zip(parts, args))


def _second(kind, tangents, steps, ans, args):
    """The derivative of `kind`'s tangent along `steps` (one per entry of args) for args."""
    return tangent_by_cotangents(lambda e: _curvature(kind, e, tangents, args), ans,
                                 *_floats(steps, args))


def svd_u_curvature(g, t, a, full_matrices):
    _reduced(a, full_matrices)  # the first derivative's check
    return _curvature("svd_u", g, (t,), (a,))[0]


def svd_vt_curvature(g, t, a, full_matrices):
    _reduced(a, full_matrices)
    return _curvature("svd_vt", g, (t,), (a,))[0]


def qr_q_curvature(g, t, a):
    return _curvature("qr_q", g, (t,), (a,))[0]


def qr_r_curvature(g, t, a):
    return _curvature("qr_r", g, (t,), (a,))[0]


def svd_u_second_tangent(t, s, ans, a, full_matrices):
    return _second("svd_u", (t,), (s,), ans, (a,))


def svd_vt_second_tangent(t, s, ans, a, full_matrices):
    return _second("svd_vt", (t,), (s,), ans, (a,))


def qr_q_second_tangent(t, s, ans, a):
    return _second("qr_q", (t,), (s,), ans, (a,))


def qr_r_second_tangent(t, s, ans, a):
    return _second("qr_r", (t,), (s,), ans, (a,))


def lstsq_solution_second_tangent(t_a, t_b, s_ans, s_a, s_b, ans, a, b):
    return _second("lstsq_solution", (t_a, t_b), (s_ans, s_a, s_b), ans, (ans, a, b))


def lstsq_residuals_second_tangent(t_a, t_b, s_a, s_b, ans, a, b):
    return _second("lstsq_residuals", (t_a, t_b), (s_a, s_b), ans, (a, b))
