"""Reverse and forward rules of the decompositions' tangent helpers (the run-time helpers
the forward rules of np.linalg.eigh and svd call, rules/forward_more.py), so second order
goes through them (issue 17). Each tangent is linear in its tangent argument, whose
cotangent is the first derivative's cotangent; the matrix's cotangent and the second
tangents are in runtime/decomposition_tangents.py.

For svd's U and Vt and qr's Q and R the matrices' cotangents of the tangents are
gradients of a pairing that srcgrad takes itself (runtime/decomposition_curvature.py,
Python); lstsq's are by hand (compiled); the second tangents go an entry at a time.
A tangent may be a number broadcast over its matrix: its cotangent is summed back.
"""
import numpy as np

from ..runtime import (eigh_values_grad, eigh_values_second_tangent, eigh_values_tangent,
                       eigh_values_tangent_grad, eigh_vectors, eigh_vectors_grad,
                       eigh_vectors_second_tangent, eigh_vectors_tangent,
                       eigh_vectors_tangent_grad, svd_s_grad, svd_s_second_tangent,
                       svd_s_tangent, svd_s_tangent_grad)
from ..runtime import (lstsq_residuals, lstsq_residuals_curvature, lstsq_residuals_grads,
                       lstsq_residuals_second_tangent, lstsq_residuals_tangent, lstsq_solution,
                       lstsq_solution_curvature, lstsq_solution_grads,
                       lstsq_solution_second_tangent, lstsq_solution_tangent, qr_q, qr_q_curvature,
                       qr_q_grad, qr_q_second_tangent, qr_q_tangent, qr_r, qr_r_curvature,
                       qr_r_grad, qr_r_second_tangent, qr_r_tangent, svd_u, svd_u_curvature,
                       svd_u_grad, svd_u_second_tangent, svd_u_tangent, svd_vt, svd_vt_curvature,
                       svd_vt_grad, svd_vt_second_tangent, svd_vt_tangent)
from ..runtime import unbroadcast
from .forward import defjvp
from .registry import defrule
from .samples import draw


def _symmetric(rng, n=3):
    m = draw(rng, n, n)
    return m @ m.T + np.diag(np.arange(1.0, n + 1.0))  # distinct eigenvalues, well apart


def _eigh_case(rng):
    return draw(rng, 3, 3), _symmetric(rng)


def _eigh_lower_case(rng):
    """eigh reads a's lower triangle: its upper one differs here."""
    return draw(rng, 3, 3), np.tril(_symmetric(rng)) + np.triu(draw(rng, 3, 3), 1)


_eigh_case.__name__, _eigh_lower_case.__name__ = "3x3", "3x3-lower"


def _svd_case(m, n):
    def sample(rng):
        spread = np.zeros((m, n))
        k = min(m, n)
        spread[np.arange(k), np.arange(k)] = np.arange(1.0, k + 1.0)  # singular values apart
        return draw(rng, m, n), draw(rng, m, n) + 2.0 * spread
    sample.__name__ = f"{m}x{n}"
    return sample


@defrule(eigh_values_tangent, sample=(_eigh_case, _eigh_lower_case))
def eigh_values_tangent_vjp(g, ans, t, a):
    return unbroadcast(eigh_values_grad(g, a), t), eigh_values_tangent_grad(g, t, a)


@defjvp(eigh_values_tangent_vjp)
def eigh_values_tangent_jvp(s_t, s_a, ans, t, a):
    return eigh_values_tangent(s_t, a) + eigh_values_second_tangent(t, s_a, a)


@defrule(eigh_vectors_tangent, sample=(_eigh_case, _eigh_lower_case))
def eigh_vectors_tangent_vjp(g, ans, t, a):
    return (unbroadcast(eigh_vectors_grad(g, eigh_vectors(a), a), t),
            eigh_vectors_tangent_grad(g, t, a))


@defjvp(eigh_vectors_tangent_vjp)
def eigh_vectors_tangent_jvp(s_t, s_a, ans, t, a):
    return eigh_vectors_tangent(s_t, a) + eigh_vectors_second_tangent(t, s_a, a)


@defrule(svd_s_tangent, sample=(_svd_case(3, 3), _svd_case(4, 2), _svd_case(2, 3)))
def svd_s_tangent_vjp(g, ans, t, a):
    return unbroadcast(svd_s_grad(g, a), t), svd_s_tangent_grad(g, t, a)


@defjvp(svd_s_tangent_vjp)
def svd_s_tangent_jvp(s_t, s_a, ans, t, a):
    return svd_s_tangent(s_t, a) + svd_s_second_tangent(t, s_a, a)


def _factor_case(primal, m, n, full=None):
    def sample(rng):
        a = draw(rng, m, n) + 2.0 * np.eye(m, n) * np.arange(1.0, n + 1.0)[:n]
        if full is None:  # (the tangent of a, the factor, a)
            return draw(rng, m, n), primal(a), a
        return draw(rng, m, n), primal(a, full), a, full
    sample.__name__ = f"{m}x{n}" + ("" if full is None else f"-full{full}")
    return sample


@defrule(svd_u_tangent, sample=(_factor_case(svd_u, 3, 3, True), _factor_case(svd_u, 4, 3, False)))
def svd_u_tangent_vjp(g, ans, t, u, a, full_matrices=True):
    return (unbroadcast(svd_u_grad(g, a, full_matrices), t), None,
            svd_u_curvature(g, t, a, full_matrices))


@defjvp(svd_u_tangent_vjp)
def svd_u_tangent_jvp(s_t, s_u, s_a, ans, t, u, a, full_matrices=True):
    return (svd_u_tangent(s_t, u, a, full_matrices)
            + svd_u_second_tangent(t, s_a, u, a, full_matrices))


@defrule(svd_vt_tangent, sample=(_factor_case(svd_vt, 3, 3, True),
                                 _factor_case(svd_vt, 4, 3, False)))
def svd_vt_tangent_vjp(g, ans, t, vt, a, full_matrices=True):
    return (unbroadcast(svd_vt_grad(g, a, full_matrices), t), None,
            svd_vt_curvature(g, t, a, full_matrices))


@defjvp(svd_vt_tangent_vjp)
def svd_vt_tangent_jvp(s_t, s_vt, s_a, ans, t, vt, a, full_matrices=True):
    return (svd_vt_tangent(s_t, vt, a, full_matrices)
            + svd_vt_second_tangent(t, s_a, vt, a, full_matrices))


@defrule(qr_q_tangent, sample=(_factor_case(qr_q, 3, 3), _factor_case(qr_q, 4, 3)))
def qr_q_tangent_vjp(g, ans, t, q, a):
    return unbroadcast(qr_q_grad(g, a), t), None, qr_q_curvature(g, t, a)


@defjvp(qr_q_tangent_vjp)
def qr_q_tangent_jvp(s_t, s_q, s_a, ans, t, q, a):
    return qr_q_tangent(s_t, q, a) + qr_q_second_tangent(t, s_a, q, a)


@defrule(qr_r_tangent, sample=(_factor_case(qr_r, 3, 3), _factor_case(qr_r, 4, 3)))
def qr_r_tangent_vjp(g, ans, t, r, a):
    return unbroadcast(qr_r_grad(g, a), t), None, qr_r_curvature(g, t, a)


@defjvp(qr_r_tangent_vjp)
def qr_r_tangent_jvp(s_t, s_r, s_a, ans, t, r, a):
    return qr_r_tangent(s_t, r, a) + qr_r_second_tangent(t, s_a, r, a)


def _system_case(primal, rows, cols, rhs=()):
    def sample(rng):
        a = draw(rng, rows, cols) + 2.0 * np.eye(rows, cols)
        b = draw(rng, rows, *rhs)
        return draw(rng, rows, cols), draw(rng, rows, *rhs), primal(a, b), a, b
    sample.__name__ = f"{rows}x{cols}-rhs{'x'.join(map(str, rhs)) or 'vector'}"
    return sample


@defrule(lstsq_solution_tangent, sample=(_system_case(lstsq_solution, 5, 3),
                                         _system_case(lstsq_solution, 4, 2, (3,))))
def lstsq_solution_tangent_vjp(g, ans, t_a, t_b, x, a, b):
    lin = lstsq_solution_grads(g, x, a, b)
    bent = lstsq_solution_curvature(g, t_a, t_b, x, a, b)
    return unbroadcast(lin[0], t_a), unbroadcast(lin[1], t_b), bent[0], bent[1], bent[2]


@defjvp(lstsq_solution_tangent_vjp)
def lstsq_solution_tangent_jvp(s_ta, s_tb, s_x, s_a, s_b, ans, t_a, t_b, x, a, b):
    return (lstsq_solution_tangent(s_ta, s_tb, x, a, b)
            + lstsq_solution_second_tangent(t_a, t_b, s_x, s_a, s_b, x, a, b))


@defrule(lstsq_residuals_tangent, sample=(_system_case(lstsq_residuals, 5, 3),
                                          _system_case(lstsq_residuals, 4, 2, (3,))))
def lstsq_residuals_tangent_vjp(g, ans, t_a, t_b, res, a, b):
    lin = lstsq_residuals_grads(g, a, b)
    bent = lstsq_residuals_curvature(g, t_a, t_b, a, b)
    return unbroadcast(lin[0], t_a), unbroadcast(lin[1], t_b), None, bent[0], bent[1]


@defjvp(lstsq_residuals_tangent_vjp)
def lstsq_residuals_tangent_jvp(s_ta, s_tb, s_res, s_a, s_b, ans, t_a, t_b, res, a, b):
    return (lstsq_residuals_tangent(s_ta, s_tb, res, a, b)
            + lstsq_residuals_second_tangent(t_a, t_b, s_a, s_b, res, a, b))
