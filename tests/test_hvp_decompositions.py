"""HVPs and Hessians through np.interp and the matrix decompositions (issue 17): reverse
mode over forward code whose rules call interp_tangent, eigh_values_tangent, ...
(rules/forward_helpers.py, rules/forward_helpers_linalg.py).

Each Hessian is checked against central differences of srcgrad's gradient and against
jax.hessian of the same function (np standing for jax.numpy), hvp and grad(grad(f))
against the Hessian; numba compiles one function through every helper (its compiles
dominate), and the numba twins of the new helpers are checked against their NumPy forms.
"""
import types

import numpy as np
import pytest

import srcgrad

EPS = 1e-5
XP = np.array([-1.0, 0.0, 0.5, 2.0])
FP = np.array([0.0, 1.0, 0.2, 3.0])
A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
X = np.array([0.3, -0.5, 0.7, 1.1, -0.9, 0.4])
V = np.array([1.0, 0.5, -2.0, 0.3, 0.7, -1.0])


def interp_in_x_and_fp(x):
    return np.sum(np.interp(x, XP, FP * x[:4]) * x)


def interp_in_xp(x):
    return np.sum(np.interp(x[:2] ** 2, np.cumsum(np.abs(x) + 0.1), x) ** 2) + np.interp(
        x[0], XP, FP) * x[1]


def interp_at_a_knot(x):
    return np.sum(np.interp(x * np.array([1.0, 0.0, 1.0, 1.0, 1.0, 1.0]), XP, FP + x[:4]) * x)


FUNCTIONS = [interp_in_x_and_fp, interp_in_xp]
KNOTS = [interp_at_a_knot]  # one-sided at the knot, as the first derivative: not for FD
NUMBA = [interp_in_xp]
CASES = ([(f, False, True) for f in FUNCTIONS] + [(f, False, False) for f in KNOTS]
         + [(f, True, True) for f in NUMBA])


def _in_jax(func):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    return jax, types.FunctionType(func.__code__, dict(func.__globals__, np=jnp), func.__name__)


def _jax_hessian(func):
    jax, f = _in_jax(func)
    return np.asarray(jax.hessian(f)(X))


def _fd_hessian(func):
    gradient = srcgrad.grad(func, jit=False)  # numba's Hessian is checked, not its gradient
    columns = [(gradient(X + EPS * e) - gradient(X - EPS * e)) / (2 * EPS) for e in np.eye(6)]
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("func, jit, smooth", CASES,
                         ids=[f"{f.__name__}-{'numba' if j else 'python'}" for f, j, _ in CASES])
def test_hessian(func, jit, smooth):
    product = srcgrad.hvp(func, jit=jit)
    assert product._reverse() is not None  # reverse over forward, not n second-order JVPs
    h = srcgrad.hessian(func, jit=jit)(X)
    np.testing.assert_allclose(h, _jax_hessian(func), rtol=1e-10, atol=1e-10)
    if smooth:
        np.testing.assert_allclose(h, _fd_hessian(func), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(product(X, V), h @ V, rtol=1e-10, atol=1e-10)
    if jit:
        assert product._reverse()[0].compiled.fallback_reason is None


def test_grad_of_grad():
    func = interp_in_x_and_fp
    twice = srcgrad.grad(srcgrad.grad(func, jit=False), jit=False)(X)
    np.testing.assert_allclose(twice, _jax_hessian(func), rtol=1e-10, atol=1e-10)


def _flat(value):
    return np.hstack([np.ravel(v) for v in value]) if isinstance(value, tuple) else np.ravel(value)


def test_numba_twins_of_the_helpers():
    """Each new helper's numba twin gives its NumPy form's numbers (scalar and array x)."""
    numba = pytest.importorskip("numba")
    from srcgrad import runtime as rt
    x = np.array([-1.5, -0.2, 0.0, 0.7, 2.0, 2.5])
    cases = {"interp_tangent": [(V, 0.0, V[:4], x, XP, FP), (0.5, V[2:], V[:4], 0.3, XP, FP)],
             "interp_curvature": [(V[::-1], V, V[2:], V[:4], x, XP, FP),
                                  (1.5, 0.5, V[2:], 0.0, 0.3, XP, FP)]}
    for name, calls in cases.items():
        for args in calls:
            params = ", ".join(f"a{k}" for k in range(len(args)))
            space = {name: getattr(rt, name)}
            exec(f"def twin({params}):\n    return {name}({params})", space)
            np.testing.assert_allclose(_flat(numba.njit(space["twin"])(*args)),
                                       _flat(space[name](*args)),
                                       rtol=1e-12, atol=1e-14, err_msg=name)
