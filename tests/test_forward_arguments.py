"""Forward mode (jvp, jacfwd, hessian, hvp) where an argument that is not differentiated
comes to hold differentiated values: loop state passed in (`s = s * 0.5 + x[i]`, an RNN's
h), a scratch buffer written into, a list appended to, a matrix row assigned. Its tangent
starts at zero (it raised NameError or UnboundLocalError inside generated code). Checked
against finite differences, numba on and off."""
import numpy as np
import pytest

import srcgrad
from gradcheck import numerical_grad


def carried(x, s):
    for i in range(3):
        s = s * 0.5 + x[i]
    return s * s


def scratch(x, buf):
    buf[:] = x * 3.0
    return np.sum(buf * x)


def appended(x, L):
    L.append(x[0] * 2.0)
    return L[-1] * x[1] + L[0]


def row(x, M):
    M[1] = x
    return np.sum(np.tanh(M @ x))


X = np.array([0.4, -0.8, 1.1])
CASES = [(carried, lambda: 0.3), (carried, lambda: 1), (scratch, lambda: np.zeros(3)),
         (appended, lambda: [1.5]), (row, lambda: np.ones((3, 3)))]


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("f, other", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_forward_mode_with_an_argument_that_takes_tangents(f, other, jit):
    expected = numerical_grad(lambda x: f(x, other()), (X.copy(),), 0)
    np.testing.assert_allclose(srcgrad.jacfwd(f, jit=jit)(X.copy(), other()), expected,
                               rtol=1e-6, atol=1e-8)
    if f is carried:
        g = lambda x: srcgrad.grad(f, jit=False)(x, other())  # noqa: E731
        h = np.array([numerical_grad(lambda x: g(x)[k], (X.copy(),), 0) for k in range(3)])
        np.testing.assert_allclose(srcgrad.hessian(f, jit=jit)(X.copy(), other()), h,
                                   rtol=1e-6, atol=1e-8)


def _pair(x):
    return np.sum(x ** 2), x * 2.0


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_jacfwd_of_a_tuple_is_a_tuple_of_jacobians(jit):
    d_sum, d_double = srcgrad.jacfwd(_pair, jit=jit)(X.copy())
    np.testing.assert_allclose(d_sum, 2 * X)
    np.testing.assert_allclose(d_double, 2 * np.eye(3))
