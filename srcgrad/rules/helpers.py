"""Rules for the run-time helpers generated code calls, so generated code can be differentiated.

Higher derivatives transform generated code again (forward over forward for
Hessians and `grad(grad(f))`, reverse over forward for a gradient called
inside a differentiated function); the helpers that code calls need rules in
both modes (rules/forward.py classifies them).
"""
import numpy as np

from ..runtime import (axis_extremum_share, broadcast_like, clip_mask, cotangent_dot, expand_to,
                       extremum_share, log_or_zero, matrix_inner, power_slope, reduce_sum,
                       seed_like, select_where, stack_scalar, stored, swap_last_axes, tie_share,
                       tril_half_diag, unbroadcast, unit_like, zeros_like)
from .registry import BINARY, defnondiff, defrule

# Constants and piecewise-constant weights: no gradient.
defnondiff(zeros_like, seed_like, unit_like, tie_share, extremum_share, axis_extremum_share,
           clip_mask)


def _reduce_axis0(rng):
    return rng.normal(size=(3, 4)), 0, False


def _reduce_all(rng):
    return rng.normal(size=(2, 3)), None, False


@defrule(reduce_sum, sample=(_reduce_axis0, _reduce_all))
def reduce_sum_vjp(g, ans, x, axis, keepdims):
    return expand_to(g, x, axis, keepdims), None, None


def _expand_axis1(rng):
    return rng.normal(size=(3,)), rng.normal(size=(3, 4)), 1, False


def _expand_all(rng):
    return 0.7, rng.normal(size=(2, 3)), None, False


@defrule(expand_to, sample=(_expand_axis1, _expand_all))
def expand_to_vjp(g, ans, v, x, axis, keepdims):  # linear in v; x gives only a shape
    return reduce_sum(g, axis, keepdims), None, None, None


def _into_floats(rng):
    return rng.normal(size=(3,)), rng.normal(size=(3,))


def _into_integers(rng):
    return rng.normal(size=(3,)), np.arange(3)


@defrule(stored, sample=(_into_floats, _into_integers))
def stored_vjp(g, ans, x, a):  # linear in x: zero where a holds integers
    return stored(g, a), None


def _stretched(rng):
    return rng.normal(size=(3,)), rng.normal(size=(2, 3))


def _stretched_number(rng):
    return 0.7, rng.normal(size=(2, 3))


@defrule(broadcast_like, sample=(_stretched, _stretched_number, _into_floats))
def broadcast_like_vjp(g, ans, t, z=None):  # linear in t; z gives the shape only
    return unbroadcast(g, t)


def _dotted(rng):
    return rng.normal(size=(3, 4)), rng.normal(size=(3, 4))


@defrule(cotangent_dot, sample=(_dotted,))
def cotangent_dot_vjp(g, ans, x, ct):
    return g * ct, g * x


def _matrices(rng):
    return rng.normal(size=(3, 3)), rng.normal(size=(3, 3))


@defrule(matrix_inner, sample=(_matrices,))
def matrix_inner_vjp(g, ans, p, q):
    return stack_scalar(g) * q, stack_scalar(g) * p


def _matrix(rng):
    return (rng.normal(size=(3, 3)),)


@defrule(swap_last_axes, sample=(_matrix,))
def swap_last_axes_vjp(g, ans, x):
    return swap_last_axes(g)


@defrule(tril_half_diag, sample=(_matrix,))
def tril_half_diag_vjp(g, ans, x):
    return tril_half_diag(g)  # a projection that scales the diagonal: its own adjoint


def _select(rng):
    return rng.normal(size=4) > 0, rng.normal(size=4), rng.normal(size=4)


@defrule(select_where, sample=(_select,))
def select_where_vjp(g, ans, c, a, b):
    return None, select_where(c, g, 0.0), select_where(c, 0.0, g)


@defrule(log_or_zero, domain=(0.3, 2.0))
def log_or_zero_vjp(g, ans, x):
    return g * select_where(x > 0, 1.0 / np.where(x > 0, x, 1.0), 0.0)


def _powers(rng):  # bases in (0.5, 2), exponents and coefficients apart from 0
    return rng.uniform(0.5, 2.0, 4), rng.uniform(0.5, 2.5, 4), rng.uniform(0.5, 2.0, 4)


def _scalar_powers(rng):
    return 1.3, 2.0, 0.7


@defrule(power_slope, sample=(_powers, _scalar_powers))
def power_slope_vjp(g, ans, x, y, c):
    # ans = c y x^(y-1); by x: c y (y-1) x^(y-2), again 0 where its coefficient is
    return (unbroadcast(g * power_slope(x, y - 1, c * y), x),
            unbroadcast(g * select_where(c == 0, 0.0, c * x ** (y - 1.0) * (
                1.0 + y * log_or_zero(x))), y),
            unbroadcast(g * power_slope(x, y, 1.0), c))
