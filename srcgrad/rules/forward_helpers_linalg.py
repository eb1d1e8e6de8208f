"""Reverse and forward rules of the decompositions' tangent helpers (the run-time helpers
the forward rules of np.linalg.eigh and svd call, rules/forward_more.py), so second order
goes through them (issue 17). Each tangent is linear in its tangent argument, whose
cotangent is the first derivative's cotangent; the matrix's cotangent and the second
tangents are in runtime/decomposition_tangents.py.

Still without rules (second order through them names the user's line): svd's U and Vt,
qr's Q and R, lstsq's solution and residuals.
"""
import numpy as np

from ..runtime import (eigh_values_grad, eigh_values_second_tangent, eigh_values_tangent,
                       eigh_values_tangent_grad, eigh_vectors, eigh_vectors_grad,
                       eigh_vectors_second_tangent, eigh_vectors_tangent,
                       eigh_vectors_tangent_grad, svd_s_grad, svd_s_second_tangent,
                       svd_s_tangent, svd_s_tangent_grad)
from .forward import defjvp
from .registry import defrule
from .samples import draw


def _symmetric(rng, n=3):
    m = draw(rng, n, n)
    return m @ m.T + np.diag(np.arange(1.0, n + 1.0))  # distinct eigenvalues, well apart


def _eigh_case(rng):
    return draw(rng, 3, 3), _symmetric(rng)


_eigh_case.__name__ = "3x3"


def _svd_case(m, n):
    def sample(rng):
        spread = np.zeros((m, n))
        k = min(m, n)
        spread[np.arange(k), np.arange(k)] = np.arange(1.0, k + 1.0)  # singular values apart
        return draw(rng, m, n), draw(rng, m, n) + 2.0 * spread
    sample.__name__ = f"{m}x{n}"
    return sample


@defrule(eigh_values_tangent, sample=(_eigh_case,))
def eigh_values_tangent_vjp(g, ans, t, a):
    return eigh_values_grad(g, a), eigh_values_tangent_grad(g, t, a)


@defjvp(eigh_values_tangent_vjp)
def eigh_values_tangent_jvp(s_t, s_a, ans, t, a):
    return eigh_values_tangent(s_t, a) + eigh_values_second_tangent(t, s_a, a)


@defrule(eigh_vectors_tangent, sample=(_eigh_case,))
def eigh_vectors_tangent_vjp(g, ans, t, a):
    return eigh_vectors_grad(g, eigh_vectors(a), a), eigh_vectors_tangent_grad(g, t, a)


@defjvp(eigh_vectors_tangent_vjp)
def eigh_vectors_tangent_jvp(s_t, s_a, ans, t, a):
    return eigh_vectors_tangent(s_t, a) + eigh_vectors_second_tangent(t, s_a, a)


@defrule(svd_s_tangent, sample=(_svd_case(3, 3), _svd_case(4, 2), _svd_case(2, 3)))
def svd_s_tangent_vjp(g, ans, t, a):
    return svd_s_grad(g, a), svd_s_tangent_grad(g, t, a)


@defjvp(svd_s_tangent_vjp)
def svd_s_tangent_jvp(s_t, s_a, ans, t, a):
    return svd_s_tangent(s_t, a) + svd_s_second_tangent(t, s_a, a)
