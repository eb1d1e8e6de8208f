"""The dense Hessian and grad(grad(f)) from one call (api/second_order_rows.py): with numba
the loop over unit directions runs in a compiled driver, otherwise in Python with the
inputs prepared once. Each result is checked against one HVP per column (the way the
Hessian was computed before) and central differences of the gradient, numba on and off,
for a matrix argument, a function writing into its argument and mixed arguments.
"""
import numpy as np
import pytest

import srcgrad
from srcgrad.api import second_order_rows

EPS = 1e-5
M = np.array([[0.3, -0.5, 0.7], [1.1, -0.9, 0.4]])


def matrix_loop(m):
    s = 0.0
    for i in range(m.shape[0]):
        s = s + np.sum(np.tanh(m[i] * m[i - 1]) ** 2) * m[i, 0]
    return s + np.sum(m ** 3)


def writes_its_argument(x):
    x[0] = x[0] * x[1]
    return np.sum(np.sin(x) * x)


def mixed(x, y):
    return np.sum(np.sin(np.outer(x, y))) + np.sum(x ** 2) * np.sum(y ** 3)


def _by_columns(func, x, jit):
    product = srcgrad.hvp(func, jit=jit)
    columns = [np.ravel(product(x.copy(), e)) for e in np.eye(x.size).reshape((x.size,) + x.shape)]
    return np.stack(columns, axis=-1)


def _fd(func, x, jit):
    gradient = srcgrad.grad(func, jit=jit)
    columns = [np.ravel(gradient(x + EPS * e) - gradient(x - EPS * e)) / (2 * EPS)
               for e in np.eye(x.size).reshape((x.size,) + x.shape)]
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("func, x", [(matrix_loop, M), (writes_its_argument, M[0])],
                         ids=["matrix_loop", "writes_its_argument"])
def test_dense_hessian_in_one_call(func, x, jit):
    before = x.copy()
    h = srcgrad.hessian(func, jit=jit)(x)
    np.testing.assert_array_equal(x, before)  # the caller's array is not written
    assert h.shape == x.shape + x.shape
    flat = h.reshape(x.size, x.size)
    by_columns = _by_columns(func, x, jit)
    np.testing.assert_allclose(flat, (by_columns + by_columns.T) / 2, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(flat, _fd(func, x, False), rtol=1e-6, atol=1e-7)
    if jit and func is matrix_loop:
        assert second_order_rows._DRIVERS  # the loop over columns ran in compiled code


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_grad_of_grad_with_two_array_arguments(jit):
    x, y = M[0], M[1, :2]
    got = srcgrad.grad(srcgrad.grad(mixed, wrt=0, jit=jit), wrt=1, jit=jit)(x, y)
    assert got.shape == (3, 2)
    gradient = srcgrad.grad(mixed, wrt=0, jit=False)
    want = np.stack([(gradient(x, y + EPS * e) - gradient(x, y - EPS * e)) / (2 * EPS)
                     for e in np.eye(2)], axis=-1)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
