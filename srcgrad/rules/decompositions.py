"""Rules for np.linalg.eigh, svd, qr and lstsq, one per result.

resolve.py spells each call as a tuple of helpers, one per result
(`np.linalg.eigh(A)` -> `(eigh_values(A), eigh_vectors(A))`, see
frontend/everyday.py), so a result the function ignores costs nothing in the
backward sweep and the cotangents of the results it uses add up. The
formulas and their conditions are in runtime/decompositions.py.
"""
import numpy as np

from ..runtime import (eigh_values, eigh_values_grad, eigh_vectors, eigh_vectors_grad, lstsq_rank,
                       lstsq_residuals, lstsq_residuals_grads, lstsq_solution, lstsq_solution_grads,
                       lstsq_sv, qr_q, qr_q_grad, qr_r, qr_r_grad, svd_s, svd_s_grad, svd_u,
                       svd_u_grad, svd_vt, svd_vt_grad)
from .registry import REWRITTEN, defnondiff, defrule

for _spelled in ("np.linalg.eigh", "np.linalg.svd", "np.linalg.qr", "np.linalg.lstsq"):
    REWRITTEN[_spelled] = "decompositions"

defnondiff(lstsq_rank, np.linalg.matrix_rank)


def _symmetric(rng):
    m = rng.normal(size=(4, 4))
    return (m + m.T + np.diag([0.0, 1.5, 3.0, 4.5]),)


def _lower_only(rng):
    """A matrix whose upper triangle differs: eigh reads the lower one."""
    return (np.tril(_symmetric(rng)[0]) + np.triu(rng.normal(size=(4, 4)), 1),)


@defrule(eigh_values, sample=(_symmetric, _lower_only))
def eigh_values_vjp(g, ans, a):
    return eigh_values_grad(g, a)


@defrule(eigh_vectors, sample=(_symmetric, _lower_only))
def eigh_vectors_vjp(g, ans, a):
    return eigh_vectors_grad(g, ans, a)


def _matrix(*shape):
    def sample(rng):
        return (rng.normal(size=shape),)
    sample.__name__ = "x".join(map(str, shape))
    return sample


def _reduced(*shape):
    def sample(rng):
        return rng.normal(size=shape), False
    sample.__name__ = "x".join(map(str, shape)) + "-reduced"
    return sample


@defrule(svd_s, sample=(_matrix(3, 3), _matrix(4, 3), _matrix(2, 4)))
def svd_s_vjp(g, ans, a):
    return svd_s_grad(g, a)


@defrule(svd_u, sample=(_matrix(3, 3), _reduced(4, 3), _reduced(2, 4)))
def svd_u_vjp(g, ans, a, full_matrices=True):
    return svd_u_grad(g, a, full_matrices)


@defrule(svd_vt, sample=(_matrix(3, 3), _reduced(4, 3), _reduced(2, 4)))
def svd_vt_vjp(g, ans, a, full_matrices=True):
    return svd_vt_grad(g, a, full_matrices)


@defrule(qr_q, sample=(_matrix(3, 3), _matrix(5, 3)))
def qr_q_vjp(g, ans, a):
    return qr_q_grad(g, a)


@defrule(qr_r, sample=(_matrix(3, 3), _matrix(5, 3)))
def qr_r_vjp(g, ans, a):
    return qr_r_grad(g, a)


def _system(rows, cols, rhs=()):
    def sample(rng):
        return rng.normal(size=(rows, cols)), rng.normal(size=(rows, *rhs))
    sample.__name__ = f"{rows}x{cols}-rhs{'x'.join(map(str, rhs)) or 'vector'}"
    return sample


@defrule(lstsq_solution, sample=(_system(5, 3), _system(4, 2, (3,)), _system(3, 3)))
def lstsq_solution_vjp(g, ans, a, b, rcond=None):
    parts = lstsq_solution_grads(g, ans, a, b)
    return parts[0], parts[1]


@defrule(lstsq_residuals, sample=(_system(5, 3), _system(4, 2, (3,))))
def lstsq_residuals_vjp(g, ans, a, b, rcond=None):
    parts = lstsq_residuals_grads(g, a, b)
    return parts[0], parts[1]


@defrule(lstsq_sv, sample=(_system(5, 3),))
def lstsq_sv_vjp(g, ans, a, b, rcond=None):
    return svd_s_grad(g, a), None
