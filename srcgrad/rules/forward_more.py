"""Forward-mode rules of the rule families added for issue 15 (see rules/forward.py).

Linear functions apply themselves to the tangent; elementwise ones reuse the
reverse rule's expression; the rest are written out here.
"""
import numpy as np

from ..runtime import (cumprod_tangent, eigh_values_tangent, eigh_vectors_tangent, expand_to,
                       interp_tangent, lstsq_residuals_tangent, lstsq_solution_tangent,
                       median_grad, percentile_spread, percentile_weights, qr_q_tangent,
                       qr_r_tangent, reduce_sum, seed_like, sort_tangent, svd_s_tangent,
                       svd_u_tangent, svd_vt_tangent)
from . import decompositions, everyday, matrices, ordering, special
from .forward import ELEMENTWISE, JVP, LINEAR, defjvp

for _vjp in (matrices.diag, matrices.trace, matrices.tril, matrices.triu, matrices.kron,
             matrices.atleast, matrices.roll, ordering.take, ordering.take_along_axis,
             everyday.astype, everyday.sum_start_vjp):
    JVP[_vjp] = LINEAR
for _vjp in (special.erf, special.gammaln, special.digamma, special.math_digamma_vjp,
             special.expit, special.xlogy, special.xlogy_dx_vjp, special.trigamma):
    JVP[_vjp] = ELEMENTWISE


@defjvp(matrices.interp)
def interp_jvp(t_x, t_xp, t_fp, ans, x, xp, fp):
    return interp_tangent(t_x, t_xp, t_fp, x, xp, fp)


@defjvp(ordering.sort)
def sort_jvp(t_a, ans, a, axis=-1, kind=None):
    return sort_tangent(t_a, a, axis)


@defjvp(ordering.cumprod)
def cumprod_jvp(t_a, ans, a, axis=None):
    return cumprod_tangent(t_a, a, axis)


@defjvp(ordering.median)
def median_jvp(t_a, ans, a, axis=None):
    return reduce_sum(median_grad(seed_like(ans), a, axis) * t_a, axis, False)


@defjvp(ordering.percentile)
def percentile_jvp(t_a, t_q, ans, a, q, axis=None):
    weights = percentile_weights(seed_like(ans), a, q, axis)
    return reduce_sum(weights * t_a, axis, False) + percentile_spread(a, a, q, axis) * t_q


@defjvp(special.logsumexp)
def logsumexp_jvp(t_a, ans, a, axis=None, keepdims=False):
    return reduce_sum(t_a * np.exp(a - expand_to(ans, a, axis, keepdims)), axis, keepdims)


@defjvp(special.logaddexp_reduce_vjp)
def logaddexp_reduce_jvp(t_a, ans, a, axis=0):
    return reduce_sum(t_a * np.exp(a - expand_to(ans, a, axis, False)), axis, False)


@defjvp(decompositions.eigh_values_vjp)
def eigh_values_jvp(t_a, ans, a):
    return eigh_values_tangent(t_a, a)


@defjvp(decompositions.eigh_vectors_vjp)
def eigh_vectors_jvp(t_a, ans, a):
    return eigh_vectors_tangent(t_a, a)


@defjvp(decompositions.svd_s_vjp)
def svd_s_jvp(t_a, ans, a):
    return svd_s_tangent(t_a, a)


@defjvp(decompositions.lstsq_sv_vjp)
def lstsq_sv_jvp(t_a, t_b, ans, a, b, rcond=None):
    return svd_s_tangent(t_a, a)


@defjvp(decompositions.svd_u_vjp)
def svd_u_jvp(t_a, ans, a, full_matrices=True):
    return svd_u_tangent(t_a, ans, a, full_matrices)


@defjvp(decompositions.svd_vt_vjp)
def svd_vt_jvp(t_a, ans, a, full_matrices=True):
    return svd_vt_tangent(t_a, ans, a, full_matrices)


@defjvp(decompositions.qr_q_vjp)
def qr_q_jvp(t_a, ans, a):
    return qr_q_tangent(t_a, ans, a)


@defjvp(decompositions.qr_r_vjp)
def qr_r_jvp(t_a, ans, a):
    return qr_r_tangent(t_a, ans, a)


@defjvp(decompositions.lstsq_solution_vjp)
def lstsq_solution_jvp(t_a, t_b, ans, a, b, rcond=None):
    return lstsq_solution_tangent(t_a, t_b, ans, a, b)


@defjvp(decompositions.lstsq_residuals_vjp)
def lstsq_residuals_jvp(t_a, t_b, ans, a, b, rcond=None):
    return lstsq_residuals_tangent(t_a, t_b, ans, a, b)
