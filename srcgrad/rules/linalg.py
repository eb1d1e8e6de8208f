"""Rules for products and np.linalg (dot, matmul: with @ in arith.py; transpose: shapes.py).

The np.linalg rules accept stacks of matrices (`(..., M, M)`) as NumPy does;
numba compiles single matrices only. `swap_last_axes` transposes each matrix.
"""
import numpy as np

from ..runtime import (cofactors, linalg_norm_grad, matrix_inner, slogdet_logabs,
                       slogdet_sign, solve_outer, solve_transposed, stack_scalar,
                       swap_last_axes, tril_half_diag, unbroadcast)
from .registry import METHODS, defnondiff, defrule


@defrule(np.outer, shapes=(((3,), (4,)),))
def outer(g, ans, a, b):
    return g @ b, a @ g


@defrule(np.inner, shapes=(((3,), (3,)),))
def inner(g, ans, a, b):
    return g * b, g * a


@defrule(np.vdot, shapes=(((3,), (3,)),))
def vdot(g, ans, a, b):
    return g * b, g * a


# --- sample arguments: well-conditioned and symmetric positive definite matrices ------

def _square(rng, *shape):
    """Random matrices with a dominant diagonal (well conditioned), stacked as `shape`."""
    n = shape[-1]
    return rng.normal(size=shape) + n * np.eye(n)


def _spd(rng, *shape):
    m = rng.normal(size=shape)
    return m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])


def _matrix(rng):
    return (_square(rng, 3, 3),)


def _stack(rng):
    return (_square(rng, 2, 3, 3),)


def _negative_det(rng):
    return (_square(rng, 3, 3) * np.array([[-1.0], [1.0], [1.0]]),)


def _solve_vector(rng):
    return _square(rng, 3, 3), rng.normal(size=3)


def _solve_matrix(rng):
    return _square(rng, 3, 3), rng.normal(size=(3, 2))


def _solve_stack(rng):
    return _square(rng, 2, 3, 3), rng.normal(size=(2, 3, 2))


def _solve_stack_shared_vector(rng):
    return _square(rng, 2, 3, 3), rng.normal(size=3)


def _solve_shared_matrix(rng):
    return _square(rng, 3, 3), rng.normal(size=(2, 3, 2))


@defrule(np.linalg.solve, sample=(_solve_vector, _solve_matrix, _solve_stack,
                                  _solve_stack_shared_vector, _solve_shared_matrix))
def solve(g, ans, a, b):
    gb = solve_transposed(a, g)
    return unbroadcast(-solve_outer(gb, ans, a), a), unbroadcast(gb, b)


@defrule(np.linalg.inv, sample=(_matrix, _stack))
def inv(g, ans, a):
    t = swap_last_axes(ans)
    return -(t @ g @ t)


def _singular(rng):
    a = _square(rng, 3, 3)
    a[2] = a[0] + 2.0 * a[1]
    return (a,)


@defrule(np.linalg.det, sample=(_matrix, _stack, _negative_det, _singular))
def det(g, ans, a):  # det(a) inv(a)^T, and the cofactors where a is singular
    return stack_scalar(g) * cofactors(a, ans)


def _scaled_inverse(rng):
    return _square(rng, 3, 3), 1.7


@defrule(cofactors, sample=(_scaled_inverse,))
def cofactors_vjp(g, ans, a, d):  # d inv(a)^T, a and d apart (second derivatives of det)
    b = swap_last_axes(np.linalg.inv(a))
    return -stack_scalar(d) * (b @ swap_last_axes(g) @ b), matrix_inner(g, b)


# np.linalg.slogdet(a) is rewritten to (slogdet_sign(a), slogdet_logabs(a)).
defnondiff(slogdet_sign)


@defrule(slogdet_logabs, sample=(_matrix, _stack, _negative_det))
def logabsdet(g, ans, a):
    return stack_scalar(g) * swap_last_axes(np.linalg.inv(a))


def _spd_matrix(rng):
    return (_spd(rng, 3, 3),)


def _spd_stack(rng):
    return (_spd(rng, 2, 3, 3),)


@defrule(np.linalg.cholesky, sample=(_spd_matrix, _spd_stack))
def cholesky(g, ans, a):
    # L L^T = A: with P = Phi(L^T g) (Phi: lower triangle, half diagonal), the cotangent of
    # a symmetric A is S = L^-T P L^-1; NumPy reads A's lower triangle only: Phi(S + S^T).
    lt = swap_last_axes(ans)
    p = tril_half_diag(lt @ g)
    s = swap_last_axes(np.linalg.solve(lt, swap_last_axes(np.linalg.solve(lt, p))))
    return tril_half_diag(s + swap_last_axes(s))


# The sweep perturbs float arguments, so ord is an int, or infinity as a NumPy float32.
INF = np.float32(np.inf)


def _norm_cases():
    def case(shape, *options):
        def sample(rng):
            return (rng.uniform(0.3, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape),
                    *options)
        shown = ",".join(str(o).replace("inf", "Inf") for o in options)
        sample.__name__ = f"{'x'.join(map(str, shape))}-{shown or 'default'}"
        return sample
    return (case((4,)), case((4,), 1), case((4,), 2), case((4,), 3), case((4,), INF),
            case((4,), -INF), case((4,), 0), case((2, 3, 2)), case((3, 4)),
            case((3, 4), "fro"), case((3, 4), "nuc"), case((3, 4), 2), case((3, 4), -2),
            case((3, 4), 1), case((3, 4), -1), case((3, 4), INF), case((3, 4), -INF),
            case((3, 4), None, 1), case((3, 4), 1, 0), case((2, 3, 4), INF, -1),
            case((3, 4), 3, 1, True), case((3, 4), None, None, True))


@defrule(np.linalg.norm, sample=_norm_cases())
def norm(g, ans, x, ord=None, axis=None, keepdims=False):
    return linalg_norm_grad(g, ans, x, ord, axis, keepdims)


METHODS.update({"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min,
                "prod": np.prod, "dot": np.dot, "copy": np.copy})
