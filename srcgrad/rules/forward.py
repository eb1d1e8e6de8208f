"""Forward-mode (JVP) rules, keyed by the reverse rule of the same primitive.

Most primitives need no second rule:
- ELEMENTWISE: the Jacobian with respect to each argument is diagonal (up to
  broadcasting), so the tangent contributed by argument `x` is the reverse
  rule's cotangent for `x` evaluated with `g` set to x's tangent and
  `unbroadcast` dropped (`g * np.cos(x)` becomes `t_x * np.cos(x)`).
- LINEAR: the primitive is linear in each argument separately (sum, reshape,
  matmul, concatenate, einsum), so its tangent is the sum over varied
  arguments of the primitive applied with that argument replaced by its
  tangent (`t_a @ b + a @ t_b`).
The rest get a `jvp(t_x, ..., ans, x, ..., options)` function here: one tangent
parameter per differentiable argument (a zero of the argument's shape when it
is not varied), then the reverse rule's parameters after `g`.

tests/test_rules.py checks every forward rule against finite differences.
"""
import numpy as np

from ..runtime import (axis_extremum_share, cofactors, linalg_norm_grad, matrix_inner,
                       prod_others, reduce_sum, seed_like, solve_like, solve_product,
                       stack_scalar, swap_last_axes, tril_half_diag)
from . import arith, einsum, helpers, joining, linalg, numpy_ufuncs, reductions, shapes

ELEMENTWISE = "elementwise"
LINEAR = "linear"

JVP: dict = {}  # reverse rule -> ELEMENTWISE, LINEAR or a jvp function


def _vjps(module) -> list:
    return [value for value in vars(module).values()
            if callable(value) and getattr(value, "__module__", None) == module.__name__
            and not isinstance(value, type) and value.__code__.co_varnames[:2] == ("g", "ans")]


for _vjp in _vjps(numpy_ufuncs) + _vjps(arith) + [helpers.log_or_zero_vjp,
                                                     helpers.power_slope_vjp]:
    JVP[_vjp] = ELEMENTWISE
for _vjp in _vjps(shapes) + _vjps(joining) + _vjps(einsum) + [
        numpy_ufuncs.cumsum, arith.matmul, arith.identity, reductions.sum_, reductions.mean,
        linalg.outer, linalg.inner, linalg.vdot, helpers.reduce_sum_vjp, helpers.expand_to_vjp,
        helpers.matrix_inner_vjp, helpers.swap_last_axes_vjp, helpers.tril_half_diag_vjp,
        helpers.select_where_vjp, helpers.cotangent_dot_vjp, helpers.stored_vjp,
        helpers.broadcast_like_vjp]:
    JVP[_vjp] = LINEAR


def defjvp(vjp):
    """Decorator: the forward rule of the primitive whose reverse rule is `vjp`."""
    def register(jvp):
        JVP[vjp] = jvp
        return jvp
    return register


@defjvp(reductions.var)
def var_jvp(t_a, ans, a, axis=None, dtype=None, out=None, ddof=0, *, keepdims=False):
    centred = a - np.mean(a, axis=axis, keepdims=True)
    return reduce_sum(t_a * centred, axis, keepdims) * (2.0 / (np.size(a) / np.size(ans) - ddof))


@defjvp(reductions.std)
def std_jvp(t_a, ans, a, axis=None, dtype=None, out=None, ddof=0, *, keepdims=False):
    centred = a - np.mean(a, axis=axis, keepdims=True)
    return reduce_sum(t_a * centred, axis, keepdims) / (ans * (np.size(a) / np.size(ans) - ddof))


@defjvp(reductions.max_)
def max_jvp(t_a, ans, a, axis=None, *, keepdims=False):
    return reduce_sum(t_a * axis_extremum_share(a, ans, axis, keepdims), axis, keepdims)


@defjvp(reductions.min_)
def min_jvp(t_a, ans, a, axis=None, *, keepdims=False):
    return reduce_sum(t_a * axis_extremum_share(a, ans, axis, keepdims), axis, keepdims)


@defjvp(reductions.prod)
def prod_jvp(t_a, ans, a, axis=None, *, keepdims=False):
    return reduce_sum(t_a * prod_others(a, axis), axis, keepdims)


@defjvp(linalg.det)
def det_jvp(t_a, ans, a):
    return matrix_inner(cofactors(a, ans), t_a)


@defjvp(linalg.cofactors_vjp)
def cofactors_jvp(t_a, t_d, ans, a, d):
    b = swap_last_axes(np.linalg.inv(a))
    return stack_scalar(t_d) * b - stack_scalar(d) * (b @ swap_last_axes(t_a) @ b)


@defjvp(linalg.logabsdet)
def logabsdet_jvp(t_a, ans, a):
    return matrix_inner(swap_last_axes(np.linalg.inv(a)), t_a)


@defjvp(linalg.inv)
def inv_jvp(t_a, ans, a):
    return -(ans @ t_a @ ans)


@defjvp(linalg.solve)
def solve_jvp(t_a, t_b, ans, a, b):
    return solve_like(a, t_b - solve_product(t_a, ans, b), b)


@defjvp(linalg.cholesky)
def cholesky_jvp(t_a, ans, a):
    # NumPy reads a's lower triangle: the symmetric matrix it stands for moves by s.
    lower = tril_half_diag(t_a)
    s = lower + swap_last_axes(lower)
    m = swap_last_axes(np.linalg.solve(ans, swap_last_axes(np.linalg.solve(ans, s))))
    return ans @ tril_half_diag(m)


@defjvp(linalg.norm)
def norm_jvp(t_x, ans, x, ord=None, axis=None, keepdims=False):
    return reduce_sum(linalg_norm_grad(seed_like(ans), ans, x, ord, axis, keepdims) * t_x,
                      axis, keepdims)


def forward_rule(rule):
    """ELEMENTWISE, LINEAR, a jvp function, or None (no forward rule) for a registry rule."""
    return JVP.get(rule.vjp)
