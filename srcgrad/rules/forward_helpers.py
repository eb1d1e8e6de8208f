"""Reverse rules (and forward rules where they are one line) for the run-time helpers that
forward rules call (rules/forward.py, forward_more.py), so reverse mode can differentiate
generated forward code: an HVP, a Hessian and grad(grad(f)) through np.prod, np.sort,
np.cumprod, np.median, np.percentile, np.interp, np.linalg.solve and np.linalg.norm
(issue 17).

- `sort_tangent(t, a, axis)` and `median_grad(g, a, axis)` are linear in their first
  argument and piecewise constant in `a` (an ordering): the cotangent of `a` is zero
  (np.sort's and np.median's second derivatives vanish off ties, as in JAX).
- `prod_others(a, axis)`: np.prod's Hessian applied to g (runtime/tangent_grads.py).
- `cumprod_tangent(t, a, axis)`: linear in t (its adjoint is np.cumprod's own cotangent),
  nonlinear in a (tangent_grads.cumprod_tangent_grad).
- `solve_like` and `solve_product`: a solve and a product with NumPy's vector reading of
  a 1-d right-hand side, differentiated as np.linalg.solve and @ are.
- `linalg_norm_grad(g, ans, x, ...)`: the norm's direction, by tangent_grads.
- `percentile_weights(g, a, q, axis)` (np.percentile's weights on two ranks: linear in
  g, piecewise constant in a, linear in q between ranks) and `percentile_spread(s, a, q,
  axis)` (its derivative by q, linear in s).
- `interp_tangent(t_x, t_xp, t_fp, x, xp, fp)`: linear in the tangents (their adjoint
  is np.interp's cotangent), piecewise smooth in (x, xp, fp) (runtime/interp_tangents.py).
The decompositions' tangents are in rules/forward_helpers_linalg.py; helpers still
without a rule make reverse mode name the user's call, as any missing rule does.
"""
import numpy as np

from ..runtime import (cumprod_grad, interp_curvature, interp_parts, interp_second_tangent,
                       interp_tangent, cumprod_second_tangent, cumprod_tangent, cumprod_tangent_grad,
                       linalg_norm_grad, median_grad, norm_direction_grads, norm_direction_tangent, percentile_spread,
                       percentile_spread_grad, percentile_weights, prod_others, prod_others_grad,
                       reduce_sum, seed_like, solve_like, solve_outer, solve_product,
                       solve_transposed, sort_grad, sort_tangent, swap_last_axes, unbroadcast)
from .forward import defjvp
from .registry import defrule
from .samples import draw


def _pair(*shape, axis=-1):
    def sample(rng):
        return draw(rng, *shape), draw(rng, *shape), axis
    sample.__name__ = "x".join(map(str, shape)) + f"-{axis}"
    return sample


def _along(*shape, axis=None):
    def sample(rng):
        return draw(rng, *shape), axis
    sample.__name__ = "x".join(map(str, shape)) + f"-{axis}"
    return sample


@defrule(sort_tangent, sample=(_pair(5), _pair(3, 4, axis=0)))
def sort_tangent_vjp(g, ans, t, a, axis=-1):
    return sort_grad(g, a, axis), None


@defjvp(sort_tangent_vjp)
def sort_tangent_jvp(t_t, t_a, ans, t, a, axis=-1):
    return sort_tangent(t_t, a, axis)


def _median_seed(rng):
    return 1.5, draw(rng, 5), None


@defrule(median_grad, sample=(_median_seed,))
def median_grad_vjp(g, ans, seed, a, axis=None):
    return reduce_sum(g * median_grad(seed_like(seed), a, axis), axis, False), None


@defjvp(median_grad_vjp)
def median_grad_jvp(t_seed, t_a, ans, seed, a, axis=None):
    return median_grad(t_seed, a, axis)


@defrule(prod_others, sample=(_along(5), _along(3, 4, axis=1), _along(2, 3, axis=-1)))
def prod_others_vjp(g, ans, a, axis=None):
    return prod_others_grad(g, a, axis)


@defjvp(prod_others_vjp)
def prod_others_jvp(t_a, ans, a, axis=None):
    return prod_others_grad(t_a, a, axis)  # np.prod's Hessian is symmetric


@defrule(cumprod_tangent, sample=(_pair(5, axis=None), _pair(3, 4, axis=1)))
def cumprod_tangent_vjp(g, ans, t, a, axis=None):
    return cumprod_grad(g, a, axis), cumprod_tangent_grad(g, t, a, axis)


@defjvp(cumprod_tangent_vjp)
def cumprod_tangent_jvp(t_t, t_a, ans, t, a, axis=None):
    return cumprod_tangent(t_t, a, axis) + cumprod_second_tangent(t, t_a, a, axis)


def _solve_case(*rhs):
    def sample(rng):
        return draw(rng, 3, 3) + 4.0 * np.eye(3), draw(rng, *rhs), draw(rng, *rhs)
    sample.__name__ = "3x3-" + "x".join(map(str, rhs))
    return sample


@defrule(solve_like, sample=(_solve_case(3), _solve_case(3, 2)))
def solve_like_vjp(g, ans, a, r, b):
    gr = solve_transposed(a, g)
    return unbroadcast(-solve_outer(gr, ans, a), a), unbroadcast(gr, r), None


@defjvp(solve_like_vjp)
def solve_like_jvp(t_a, t_r, t_b, ans, a, r, b):
    return solve_like(a, t_r - solve_product(t_a, ans, b), b)


@defrule(solve_product, sample=(_solve_case(3), _solve_case(3, 2)))
def solve_product_vjp(g, ans, a, x, b):
    return (unbroadcast(solve_outer(g, x, a), a),
            unbroadcast(solve_product(swap_last_axes(a), g, b), x), None)


@defjvp(solve_product_vjp)
def solve_product_jvp(t_a, t_x, t_b, ans, a, x, b):
    return solve_product(t_a, x, b) + solve_product(a, t_x, b)


def _norm_case(shape, ord, axis):
    def sample(rng):
        x = draw(rng, *shape)
        value = np.linalg.norm(x, ord, axis)
        seed = 1.5 if np.ndim(value) == 0 else draw(rng, *np.shape(value))
        return seed, value, x, ord, axis, False
    sample.__name__ = "x".join(map(str, shape)) + f"-{ord}-{axis}"
    return sample


@defrule(linalg_norm_grad, sample=(_norm_case((5,), None, None), _norm_case((5,), 3, None),
                                   _norm_case((3, 4), None, None),
                                   _norm_case((3, 4), 3, 1), _norm_case((3, 4), "fro", None)))
def linalg_norm_grad_vjp(g, ans, seed, value, x, ord=None, axis=None, keepdims=False):
    parts = norm_direction_grads(g, seed, value, x, ord, axis, keepdims)
    return parts[0], parts[1], parts[2]


@defjvp(linalg_norm_grad_vjp)
def linalg_norm_grad_jvp(t_seed, t_value, t_x, ans, seed, value, x, ord=None, axis=None,
                         keepdims=False):
    return norm_direction_tangent(t_seed, t_value, t_x, seed, value, x, ord, axis, keepdims)


def _percentile_case(first, q, axis):
    def sample(rng):
        a = draw(rng, 7) if axis is None else draw(rng, 3, 5)
        lead = first(rng, a)
        return lead, a, q, axis
    sample.__name__ = f"q{q}-{axis}"
    return sample


def _seed(rng, a):
    return 1.5 if a.ndim == 1 else draw(rng, a.shape[0])


def _like(rng, a):
    return draw(rng, *a.shape)


@defrule(percentile_weights, sample=(_percentile_case(_seed, 30.0, None),
                                     _percentile_case(_seed, 40.0, 1)))
def percentile_weights_vjp(g, ans, seed, a, q, axis=None):
    return (reduce_sum(g * percentile_weights(seed_like(seed), a, q, axis), axis, False), None,
            reduce_sum(seed * percentile_spread(g, a, q, axis), None, False))


@defjvp(percentile_weights_vjp)
def percentile_weights_jvp(t_seed, t_a, t_q, ans, seed, a, q, axis=None):
    return percentile_weights(t_seed, a, q, axis) + percentile_spread_grad(seed * t_q, a, q, axis)


@defrule(percentile_spread, sample=(_percentile_case(_like, 30.0, None),
                                    _percentile_case(_like, 40.0, 1)))
def percentile_spread_vjp(g, ans, s, a, q, axis=None):
    return unbroadcast(percentile_spread_grad(g, a, q, axis), s), None, None


@defjvp(percentile_spread_vjp)
def percentile_spread_jvp(t_s, t_a, t_q, ans, s, a, q, axis=None):
    return percentile_spread(t_s, a, q, axis)


def _interp_case(scalar):
    def sample(rng):
        xp = np.array([0.0, 0.7, 1.5, 2.0, 3.2])
        x = 1.3 if scalar else np.array([-0.5, 0.2, 1.1, 1.9, 2.5, 3.0, 4.0])
        return (draw(rng, *np.shape(x)) if not scalar else float(rng.normal()), draw(rng, 5),
                draw(rng, 5), x, xp, draw(rng, 5))
    sample.__name__ = "scalar" if scalar else "points"
    return sample


@defrule(interp_tangent, sample=(_interp_case(False), _interp_case(True)))
def interp_tangent_vjp(g, ans, t_x, t_xp, t_fp, x, xp, fp):
    lin = interp_parts(g, x, xp, fp)
    bent = interp_curvature(g, t_x, t_xp, t_fp, x, xp, fp)
    return (unbroadcast(lin[0], t_x), unbroadcast(lin[1], t_xp), unbroadcast(lin[2], t_fp),
            bent[0], bent[1], bent[2])


@defjvp(interp_tangent_vjp)
def interp_tangent_jvp(s_tx, s_txp, s_tfp, s_x, s_xp, s_fp, ans, t_x, t_xp, t_fp, x, xp, fp):
    return (interp_tangent(s_tx, s_txp, s_tfp, x, xp, fp)
            + interp_second_tangent(t_x, t_xp, t_fp, s_x, s_xp, s_fp, x, xp, fp))
