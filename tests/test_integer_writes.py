"""Float values written into an integer or boolean array carry no derivative.

NumPy rounds (or tests) the values it stores in an int or bool array: a step
function, whose derivative is zero almost everywhere, and what central differences,
JAX (float0) and autograd give. Before 2026-12-06 srcgrad passed the cotangent of the
unrounded values through such a write, in reverse and forward mode: the gradient of
`a = np.zeros(4, dtype=np.int64); a[0] = 10 * x[0]; return np.sum(a * x)` was off by
10 * x[0]. analysis/integer_arrays.py lists the names that may hold such arrays and
`stored(g, a)` (runtime/adjoints.py) zeroes the cotangent where, at run time, they do.
"""
import numpy as np
import pytest

import srcgrad
from gradcheck import numerical_grad

X = np.array([0.33, -0.51, 0.92, 0.14])  # 10 x, 7 x and 9 x stay clear of integers
V = np.array([1.0, 0.5, -0.3, 0.2])


def int_element(x):
    a = np.zeros(4, dtype=np.int64)
    a[0] = x[0] * 10.0
    return np.sum(a * x)


def int_loop(x):
    a = np.zeros(4, int)
    for i in range(4):
        a[i] = x[i] * 7.0
    return np.sum(a * x) + np.sum(np.sin(x))


def int_slice(x):
    a = np.zeros(4, dtype=np.int32)
    a[:] = x * 7.0
    return np.sum(a * x)


def arange_element(x):
    a = np.arange(4)
    a[1] = x[1] * 9.0
    return np.sum(a * x)


def bool_element(x):
    b = np.zeros(4, dtype=bool)
    b[0] = x[0]
    return np.sum(b * x)


def float_element(x):  # a float array keeps its derivative
    a = np.zeros(4, dtype=np.float64)
    a[0] = x[0] * 10.0
    return np.sum(a * x)


CASES = [int_element, int_loop, int_slice, arange_element, bool_element, float_element]


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_gradient_and_tangent(f, jit):
    fd = numerical_grad(f, (X.copy(),), 0)
    g = srcgrad.grad(f, jit=jit)
    np.testing.assert_allclose(g(X.copy()), fd, rtol=1e-6, atol=1e-8)
    # `dtype=int` and `dtype=bool` compile: frontend/dtype_names.py spells them np.int64, np.bool_
    assert g.backend == ("numba" if jit else "python"), getattr(g, "fallback_reason", "")
    _, tangent = srcgrad.jvp(f, (X.copy(),), (V,), jit=jit)
    assert np.isclose(tangent, fd @ V, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [int_element, float_element], ids=lambda f: f.__name__)
def test_hessian(f):
    grad = srcgrad.grad(f, jit=False)
    columns = [numerical_grad(lambda x, k=k: grad(x)[k], (X.copy(),), 0) for k in range(4)]
    np.testing.assert_allclose(srcgrad.hessian(f, jit=False)(X.copy()), np.array(columns),
                               rtol=1e-5, atol=1e-7)


def _buffer_like_indices(x, idx):
    buf = np.zeros_like(idx)  # idx's integer dtype: NumPy truncates each write
    for i in range(idx.shape[0]):
        buf[i] = x[idx[i]] * 2.5
    order = np.argsort(x)
    order[0] = x[1] * 3.0  # an integer array too
    return np.sum(buf) + np.sum(order) + np.sum(x * x)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_writes_into_arrays_of_indices_made_without_a_dtype_carry_no_gradient(jit):
    x, idx = np.array([0.37, 1.71, 2.25]), np.array([2, 0, 1, 1])
    value, g = srcgrad.value_and_grad(_buffer_like_indices, jit=jit)(x, idx)
    assert value == _buffer_like_indices(x, idx)
    np.testing.assert_allclose(g, 2 * x)  # only the float term
