"""Forward mode through broadcasting against an operand without a tangent.

The tangent of `X - mu` by `mu` alone is `-t_mu`, of mu's shape; the result has X's. Forward
mode once kept the smaller shape, so a later sum, transpose, index or axis reduction gave a
wrong number without an error (jacfwd of `np.sum(X - b)` by a scalar b: -1 instead of
-X.size; Hessians of centred and intercept losses a factor of n off) or raised inside the
generated code. The tangent is now broadcast to the result's shape (`broadcast_like`,
transforms/forward.py), also where an operand stretches the result past a smaller
condition or bound (`np.where(mu > 0, mu, X)`, `np.clip(a, lo, X)`). Each case is checked
against JAX's Hessian (skipped where JAX is not installed) or a closed form, numba on and
off. Stacks of matrices (`A @ w`, A 3-d) are checked against JAX's gradient and HVP.
"""
import warnings

import numpy as np
import pytest

import srcgrad
from gradcheck import jax_hessian

RNG = np.random.default_rng(11)
X = RNG.normal(size=(6, 3))
Y = RNG.normal(size=6)
SQUARE = RNG.normal(size=(3, 3))
S = np.eye(3) + 0.3 * np.ones((3, 3))
MU = RNG.normal(size=3)
JITS = pytest.mark.parametrize("jit", [True, False], ids=["numba", "python"])


def shifted_sum(b):
    return np.sum(X - b)


def centred_columns(mu):
    return np.sum(np.sum(X - mu, axis=0) ** 2)


def intercept(b):
    r = X @ np.ones(3) + b - Y
    return np.sum(r) ** 2 + np.sum(r ** 2)


def transposed(mu):
    r = SQUARE - mu
    return np.sum(np.sin(r.T) * SQUARE)


def first_column(mu):
    r = X - mu
    return np.sum(np.cos(r[:, 0]) * r[:, 1])


def small_condition(mu):  # the condition is mu's shape, the result X's
    return np.sum(np.where(mu > 0.0, mu, X) ** 2)


def clipped_from_below(lo):  # the upper bound stretches the result
    return np.sum(np.clip(MU, lo, X)) ** 2


def crossed_bounds(lo):  # lo > hi: NumPy's clip is hi everywhere, nothing by lo
    return np.sum(np.clip(MU, lo, -5.0) * lo)


def gaussian(mu):
    r = X - mu
    return 0.5 * np.sum(r * np.linalg.solve(S, r.T).T)


@JITS
def test_jacfwd_by_a_scalar_broadcast_against_an_array(jit):
    assert srcgrad.jacfwd(shifted_sum, jit=jit)(0.3) == -X.size
    assert srcgrad.jvp(shifted_sum, (0.3,), (1.0,), jit=jit)[1] == -X.size


@JITS
def test_scalar_intercept_hessian(jit):
    n = X.shape[0]
    assert srcgrad.hessian(intercept, jit=jit)(0.4) == pytest.approx(2 * n * n + 2 * n)


BROADCAST = [centred_columns, transposed, first_column, gaussian, small_condition,
             clipped_from_below, crossed_bounds]
# every function as Python; numba compiles three derivatives of each (seconds apiece), so
# two stand for the rest in the suite's time (the rule is the same in both modes)
CASES = [(f, False) for f in BROADCAST] + [(f, True) for f in (centred_columns, small_condition)]


@pytest.mark.parametrize("func, jit", CASES,
                         ids=[f"{f.__name__}-{'numba' if j else 'python'}" for f, j in CASES])
def test_hessian_by_a_broadcast_vector_matches_jax(func, jit):
    # away from ties of a bound with the argument (there NumPy's clip has no derivative)
    at = MU + {crossed_bounds: 3.0, clipped_from_below: 0.5}.get(func, 0.0)
    expected = jax_hessian(func, at)
    with warnings.catch_warnings():  # numba has no clip with array bounds: Python runs
        warnings.simplefilter("ignore", srcgrad.SrcgradWarning)
        np.testing.assert_allclose(srcgrad.hessian(func, jit=jit)(at), expected, rtol=1e-9,
                                   atol=1e-9)
        v = np.array([1.0, -0.5, 2.0])
        np.testing.assert_allclose(srcgrad.hvp(func, jit=jit)(at, v), expected @ v,
                                   rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(srcgrad.jacfwd(srcgrad.grad(func, jit=jit), jit=jit)(at),
                                   expected, rtol=1e-9, atol=1e-9)


# Stacks of matrices: `A @ w` with A (2, 3, 3) raised in reverse mode (the matmul rules took
# 1-d and 2-d operands only); the batch axes broadcast like elementwise ones.
BATCHED = {"stack_vector": ((2, 3, 3), (3,)), "vector_stack": ((3,), (2, 3, 4)),
           "stack_matrix": ((2, 3, 4), (4, 2)), "broadcast_batches": ((2, 1, 3, 4), (5, 4, 2))}


def batched(a, b):
    return np.sum(np.sin(a @ b))


@pytest.mark.parametrize("shapes", BATCHED.values(), ids=BATCHED.keys())
def test_gradients_of_stacked_matmul_match_jax(shapes):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    a, b = (RNG.normal(size=s) for s in shapes)
    for wrt in (0, 1):
        expected = jax.grad(lambda a, b: jnp.sum(jnp.sin(a @ b)), argnums=wrt)(a, b)
        with warnings.catch_warnings():  # numba's @ takes 1-d and 2-d operands: Python runs
            warnings.simplefilter("ignore", srcgrad.SrcgradWarning)
            got = srcgrad.grad(batched, wrt=wrt)(a, b)
            hvp = srcgrad.hvp(batched, wrt=wrt, jit=False)(a, b, np.ones(shapes[wrt]))
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
        h = jax.hessian(lambda a, b: jnp.sum(jnp.sin(a @ b)), argnums=wrt)(a, b)
        n = int(np.prod(shapes[wrt]))
        np.testing.assert_allclose(hvp.ravel(), np.asarray(h).reshape(n, n) @ np.ones(n),
                                   rtol=1e-9, atol=1e-9)
