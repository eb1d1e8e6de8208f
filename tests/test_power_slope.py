"""`x ** y` at x == 0 where y is 0 or 1 (runtime power_slope): the derivative of x ** 0 is 0
and the second derivative of x ** 1 is 0, also at x == 0, as in JAX (`0 * 0.0 ** -1` gave
nan, or ZeroDivisionError compiled). Checked against JAX where it is installed, else
against the closed forms, numba on and off; the exponent as a variable, a literal and an
array, and mixed second derivatives in (x, exponent)."""
import numpy as np
import pytest

import srcgrad


def poly(x, c):
    s = 0.0
    for k in range(c.shape[0]):
        s = s + np.sum(c[k] * x ** k)
    return s


def powered(x, p):
    return np.sum(x ** p) + np.sum(x ** 1)


X0 = np.array([0.0, 0.7, -1.3])
C = np.array([0.5, -2.0, 1.5, 0.25])


def _jax():
    jax = pytest.importorskip("jax", reason="jax is the oracle for these derivatives")
    jax.config.update("jax_enable_x64", True)
    return jax


def _jnp_poly(x, c):
    import jax.numpy as jnp
    return sum(jnp.sum(c[k] * x ** k) for k in range(c.shape[0]))


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_polynomial_at_zero_matches_jax(jit):
    jax = _jax()
    g = srcgrad.grad(poly, jit=jit)(X0, C)
    h = srcgrad.hessian(poly, jit=jit)(X0, C)
    hv = srcgrad.hvp(poly, jit=jit)(X0, C, np.ones(3))
    f = lambda x: _jnp_poly(x, C)  # noqa: E731
    np.testing.assert_allclose(g, jax.grad(f)(X0), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(h, jax.hessian(f)(X0), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(hv, jax.hessian(f)(X0) @ np.ones(3), rtol=1e-12, atol=1e-14)
    assert np.all(np.isfinite(h))


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("p", [0, 1, 2, 0.0, 1.0, 2.5], ids=lambda p: f"p={p!r}")
def test_variable_exponent_first_and_second_order(p, jit):
    # JAX's float powers go through log(x): nan at x == 0, where srcgrad gives the limit
    x = np.array([0.0, 0.7, 1.3]) if isinstance(p, int) else np.array([0.4, 0.7, 1.3])
    jax = _jax()
    import jax.numpy as jnp
    f = lambda x, p: jnp.sum(x ** p) + jnp.sum(x ** 1)  # noqa: E731
    np.testing.assert_allclose(srcgrad.grad(powered, jit=jit)(x, p), jax.grad(f)(x, p),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(srcgrad.jacfwd(powered, jit=jit)(x, p), jax.grad(f)(x, p),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(srcgrad.hessian(powered, jit=jit)(x, p),
                               jax.hessian(f)(x, p), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("jit", [False], ids=["python"])  # numba: the cases above
def test_mixed_second_derivative_in_base_and_exponent(jit):
    jax = _jax()
    import jax.numpy as jnp
    x, p = np.array([0.4, 0.7, 1.3]), np.array([1.5, 0.5, 2.0])
    both = lambda v: powered(v[:3], v[3:])  # noqa: E731
    h = srcgrad.hessian(both, jit=jit)(np.concatenate([x, p]))
    expected = jax.hessian(lambda v: jnp.sum(v[:3] ** v[3:]) + jnp.sum(v[:3]))(
        np.concatenate([x, p]))
    np.testing.assert_allclose(h, expected, rtol=1e-10, atol=1e-12)
