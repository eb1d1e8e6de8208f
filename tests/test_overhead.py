"""The fast call path of `srcgrad.grad` (api/binding.py) gives what the general path gives.

Each case calls a gradient with positional arguments of plain types (the fast path)
and checks the result's value, type and shape, and that the caller's arrays are
untouched; the cases the fast path hands over (keywords, 0-d arrays, Variables,
integers to differentiate, ...) are checked to behave as before. No timings here:
bench/overhead.py measures them.
"""
import numpy as np
import pytest

import srcgrad
from srcgrad.api import binding

SCALE = 2.0
OFFSETS = np.array([1.0, 2.0, 3.0])


def square(x):
    return x * x


def scaled(x):
    return SCALE * x * x


def with_offsets(x):
    return np.sum((x + OFFSETS) ** 2)


def writes_into(x, n):
    x[0] = x[0] * 2.0
    return np.sum(x * x) * n


def defaults(x, a=3.0, b=2):
    return a * x ** b


def two(x, y):
    return x * y * y


def matrix(A):
    return np.sum(A * A)


def make_closure():
    k = 1.5

    def inner(x):
        return k * x * x

    def set_k(value):
        nonlocal k
        k = value
    return inner, set_k


def test_fast_path_is_taken_for_plain_positional_calls(monkeypatch):
    g = srcgrad.grad(square, jit=False)
    assert g._fast is not None
    taken = []
    fast = g._fast
    monkeypatch.setattr(g, "_fast", lambda args: taken.append(1) or fast(args))
    assert g(3.0) == 6.0
    assert taken


def test_scalars_and_numpy_scalars():
    g = srcgrad.grad(square, jit=False)
    for x in (3.0, np.float64(3.0)):
        out = g(x)
        assert type(out) is float and out == 6.0
    assert type(g(np.float32(3.0))) is np.float32  # a float32 gets a float32 (issue 15)
    zero_d = g(np.array(3.0))  # a 0-d array: the general path, a 0-d gradient
    assert isinstance(zero_d, np.ndarray) and zero_d.shape == () and zero_d == 6.0


def test_arrays_keep_their_shape_and_are_not_modified():
    g = srcgrad.grad(matrix, jit=False)
    A = np.arange(6.0).reshape(2, 3)
    out = g(A)
    assert out.shape == (2, 3) and out.dtype == np.float64
    np.testing.assert_allclose(out, 2 * A)
    np.testing.assert_allclose(g(A.T), 2 * A.T)  # not contiguous: the general path
    np.testing.assert_allclose(g(A.astype(np.float32)), 2 * A)


def test_arrays_the_function_writes_into_are_copied():
    g = srcgrad.grad(writes_into, jit=False)
    x = np.array([1.0, 2.0])
    first = g(x, 3)
    assert x.tolist() == [1.0, 2.0]
    np.testing.assert_allclose(g(x, 3), first)
    np.testing.assert_allclose(first, [24.0, 12.0])


def test_defaults_and_keywords():
    g = srcgrad.grad(defaults, jit=False)
    assert g(2.0) == pytest.approx(12.0)
    assert g(2.0, 1.0) == pytest.approx(4.0)
    assert g(2.0, 1.0, 3) == pytest.approx(12.0)
    assert g(2.0, b=3) == pytest.approx(36.0)
    assert g(x=2.0) == pytest.approx(12.0)
    with pytest.raises(TypeError):
        g()
    with pytest.raises(TypeError):
        g(1.0, 2.0, 3, 4)


def test_data_globals_and_closures_are_read_afresh(monkeypatch):
    g = srcgrad.grad(scaled, jit=False)
    assert g(1.0) == 4.0
    monkeypatch.setattr(__import__(__name__), "SCALE", 5.0)
    assert g(1.0) == 10.0
    h = srcgrad.grad(with_offsets, jit=False)
    np.testing.assert_allclose(h(np.zeros(3)), 2 * OFFSETS)
    inner, set_k = make_closure()
    c = srcgrad.grad(inner, jit=False)
    assert c(1.0) == 3.0
    set_k(0.5)
    assert c(1.0) == 1.0


def test_value_and_grad_and_tuples():
    vg = srcgrad.value_and_grad(two, wrt=(0, 1), jit=False)
    value, (dx, dy) = vg(2.0, 3.0)
    assert (value, dx, dy) == (18.0, 9.0, 12.0)
    assert type(value) is float


def test_what_the_fast_path_hands_over_keeps_its_messages():
    g = srcgrad.grad(square, jit=False)
    with pytest.raises(TypeError, match="it is a boolean"):
        g(True)
    with pytest.raises(TypeError, match="it is an integer"):
        g(3)
    with pytest.raises(TypeError, match="complex"):
        g(1.0 + 2.0j)
    with pytest.raises(TypeError, match="integer array"):
        srcgrad.grad(matrix, jit=False)(np.arange(3))
    with pytest.raises(TypeError, match="of type Variable"):
        g(srcgrad.Variable(3.0))


def test_compiled_fast_path():
    g = srcgrad.grad(two, wrt=1)
    assert g(2.0, 3.0) == 12.0
    assert g.backend == "numba"
    assert srcgrad.grad(matrix)(np.ones((2, 2))).tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_no_fast_path_for_var_args():
    def star(x, *rest):
        return x * x
    assert binding.fast_call(None, star, __import__("inspect").signature(star), ["x"],
                             False, False, None) is None
