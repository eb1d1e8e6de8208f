"""Second order: srcgrad.hvp (reverse over forward), the Hessian from HVPs, composed
Jacobians and grad of a gradient with array arguments.

Every HVP is checked against central differences of srcgrad's gradient along v, and
the dense Hessian against the HVPs, on the loop corpus (for, while, branches, early
exits, in-place writes) without numba, and on a loop, a recursion and a helper call
with numba; composed Jacobians against JAX where it is installed.
"""
import numpy as np
import pytest

import srcgrad
import test_calls
import test_corpus_loops

EPS = 1e-5


def _fd_hvp(gradient, args, v):
    plus = gradient(args[0] + EPS * v, *args[1:])
    minus = gradient(args[0] - EPS * v, *args[1:])
    return (plus - minus) / (2 * EPS)


def _array_cases():
    """Corpus functions differentiated by a float array first argument."""
    out = []
    for case in test_corpus_loops.CASES:
        func, make, wrt = case.values
        args = make()
        if wrt == 0 and not case.marks and isinstance(args[0], np.ndarray) \
                and args[0].dtype == np.float64 and 1 < args[0].size <= 12:
            out.append(pytest.param(func, make, id=func.__name__))
    return out


@pytest.mark.parametrize("func, make", _array_cases())
def test_hvp_on_the_loop_corpus(func, make):
    args = make()
    v = np.random.default_rng(3).normal(size=args[0].shape)
    got = srcgrad.hvp(func, jit=False)(*args, v)
    np.testing.assert_allclose(got, _fd_hvp(srcgrad.grad(func, jit=False), args, v),
                               rtol=1e-5, atol=1e-6)
    h = srcgrad.hessian(func, jit=False)(*args).reshape(v.size, v.size)
    np.testing.assert_allclose(h @ v.ravel(), got.ravel(), rtol=1e-9, atol=1e-9)


def loop_while_write(x, n):
    s = 0.0
    y = x * 1.0
    for i in range(n):
        y = np.sin(y) * x
        s = s + np.sum(y ** 2)
    k = 0
    while s > 1.0 and k < 5:
        s = s * 0.5
        k += 1
    y[0] = s
    return np.sum(y * y) + s + test_calls.softplus(x[1] * x[2], beta=2.0)


def recursive_sum(x, n):
    if n == 0:
        return np.sum(x * x)
    return np.sin(recursive_sum(x, n - 1)) + np.sum(x ** 3)


X = np.array([0.3, 0.5, 0.7])
V = np.array([1.0, -0.5, 2.0])


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("func", [loop_while_write, recursive_sum])
def test_hvp_numba_and_python(func, jit):
    got = srcgrad.hvp(func, jit=jit)(X, 3, V)
    np.testing.assert_allclose(got, _fd_hvp(srcgrad.grad(func, jit=jit), (X, 3), V),
                               rtol=1e-6, atol=1e-7)
    h = srcgrad.hessian(func, jit=jit)(X, 3)
    np.testing.assert_allclose(h, h.T, rtol=0, atol=0)
    np.testing.assert_allclose(h @ V, got, rtol=1e-10)
    np.testing.assert_allclose(srcgrad.jacfwd(srcgrad.grad(func, jit=jit), jit=jit)(X, 3), h)


def test_hvp_of_a_scalar_argument_and_by_name():
    def f(a, b):
        return a ** 3 * b
    assert srcgrad.hvp(f, wrt="a", jit=False)(2.0, 5.0, 1.5) == pytest.approx(6 * 2.0 * 5 * 1.5)


def vector_valued(x):
    return np.array([np.sin(x[0]) * x[1], x[0] * x[1] * x[2], np.exp(x[2])])


def test_composed_jacobians_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def f(x):
        return jnp.array([jnp.sin(x[0]) * x[1], x[0] * x[1] * x[2], jnp.exp(x[2])])
    want = np.asarray(jax.jacfwd(jax.jacrev(f))(jnp.asarray(X)))
    for outer, inner in [(srcgrad.jacfwd, srcgrad.jacrev), (srcgrad.jacrev, srcgrad.jacfwd),
                         (srcgrad.jacfwd, srcgrad.jacfwd)]:
        got = outer(inner(vector_valued, jit=False), jit=False)(X)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def mixed(x, y):
    return np.sum(np.sin(x * y) + x ** 2 * y)


def test_grad_of_grad_with_an_array_outermost_argument():
    y = 0.4
    got = srcgrad.grad(srcgrad.grad(mixed, wrt=1, jit=False), wrt=0, jit=False)(X, y)
    np.testing.assert_allclose(got, np.cos(X * y) - X * y * np.sin(X * y) + 2 * X, rtol=1e-12)
    cross = srcgrad.jacfwd(srcgrad.grad(mixed, wrt=0, jit=False), wrt=1, jit=False)(X, y)
    np.testing.assert_allclose(cross, got, rtol=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match=r"v has shape \(2,\).*\(3,\) of 'x'.*test_hvp.py:"):
        srcgrad.hvp(loop_while_write, jit=False)(X, 3, np.ones(2))
    with pytest.raises(ValueError, match="hvp needs a scalar function"):
        srcgrad.hvp(vector_valued, jit=False)(X, V)
    with pytest.raises(TypeError, match="v, the direction, comes last"):
        srcgrad.hvp(vector_valued, jit=False)()


def test_gradbench_second_order_modules_answer():
    """Smoke test of bench/problems/{kmeans,particle,saddle} through the GradBench adapter."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from bench import gradbench
    from bench.problems import kmeans, saddle
    out, timings = gradbench.evaluate("saddle", "rr", {"start": [1.0, 1.0]})
    np.testing.assert_allclose(out, saddle.EXPECTED, rtol=1e-9)
    tiny = dict(kmeans.GRADBENCH_WARMUP)["dir"]
    out, _ = gradbench.evaluate("kmeans", "dir", tiny)
    c, p = np.array(tiny["centroids"]), np.array(tiny["points"])
    h = srcgrad.hessian(kmeans.cost, sparse=True, jit=False)(c, p)
    assert h.srcgrad_products == 1
    np.testing.assert_allclose(out, (srcgrad.grad(kmeans.cost, jit=False)(c, p).ravel()
                                     / h.diagonal()).reshape(c.shape), rtol=1e-12)
