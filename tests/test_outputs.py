"""NumPy calls that write into an argument (frontend/outputs.py).

`out=`, a ufunc's positional output, `np.copyto` and `where=` with an output become
writes `o[:] = ...` that srcgrad differentiates: NumPy's value, and a gradient
matching central differences (not autograd, which does not follow `out=` either). The fill and scatter functions, and outputs srcgrad cannot
name, are refused with an error naming the user's line. Before 2026-12-06 every one of
these calls ran in the forward sweep and was missing from the backward one: gradients
off by the written values, without an error.
"""
import numpy as np
import pytest

import srcgrad
from gradcheck import numerical_grad

X = np.array([0.3, -0.5, 0.9, 0.1])


def copyto(x):
    a = np.zeros(4)
    np.copyto(a, x * 2.0)
    return np.sum(a * x)


def copyto_where(x):
    a = np.sin(x)
    np.copyto(a, x * x, where=x > 0.0)
    return np.sum(a * x)


def ufunc_out(x):
    a = x * 1.0
    np.add(a, x, out=a)
    return np.sum(a * x)


def ufunc_out_position(x):
    a = x * 1.0
    np.multiply(x, np.cos(x), a)
    return np.sum(a * x)


def ufunc_out_tuple_bound(x):
    a = x * 1.0
    b = np.sin(x, out=(a,))
    return np.sum(b * x) + np.sum(a)


def ufunc_where(x):
    a = x * 3.0
    np.exp(x, out=a, where=x < 0.5)
    return np.sum(a * x)


def reduction_out(x):
    m = np.outer(x, x)
    a = np.zeros(4)
    np.sum(m * m, axis=0, out=a)
    return np.sum(a * x)


def matmul_out(x):
    m = np.outer(x, np.sin(x))
    p = np.zeros((4, 4))
    np.matmul(m, m, out=p)
    return np.sum(p)


def out_none(x):
    return np.sum(np.subtract(x, 0.5, out=None) ** 2)


def _scale_into(v, out):
    np.multiply(v, 2.0, out=out)
    return out


def helper_out(x):
    a = np.zeros(4)
    b = np.tanh(x)
    c = _scale_into(b, a)
    return np.sum(c * x)


def _step(x, out=None):
    return np.sin(x) if out is None else out * x


def user_out_parameter(x):  # the user's own `out=` is an argument like any other
    buf = x * 2.0
    y = _step(x, out=buf)
    return np.sum(y * y) + np.sum(buf)


WRITING = [copyto, copyto_where, ufunc_out, ufunc_out_position, ufunc_out_tuple_bound,
           ufunc_where, reduction_out, matmul_out, out_none, user_out_parameter]


def _check(f, jit):
    x = X.copy()
    vg = srcgrad.value_and_grad(f, jit=jit)
    value, grad = vg(x)
    assert vg.backend == ("numba" if jit else "python"), getattr(vg, "fallback_reason", "")
    assert np.array_equal(x, X), "the argument was changed"
    assert np.isclose(value, f(X.copy()), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grad, numerical_grad(f, (X.copy(),), 0), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f", WRITING, ids=lambda f: f.__name__)
def test_writes_through_outputs_python(f):
    _check(f, jit=False)


@pytest.mark.parametrize("f", [copyto_where, ufunc_out_tuple_bound, reduction_out],
                         ids=lambda f: f.__name__)
def test_writes_through_outputs_numba(f):
    _check(f, jit=True)


def test_a_helper_writing_its_parameter_through_out_is_refused():
    # a callee writing into the caller's array is refused as for `out[i] = ...` (inline.py)
    with pytest.raises(srcgrad.SrcgradSyntaxError, match="writing into its parameter 'out'"):
        srcgrad.grad(helper_out, jit=False)(X.copy())


def fill_diagonal(x):
    m = np.outer(x, x)
    np.fill_diagonal(m, 1.0)  # MARK
    return np.sum(m * m)


def put(x):
    a = x * 1.0
    np.put(a, [0, 2], [1.0, 2.0])  # MARK
    return np.sum(a * x)


def putmask(x):
    a = x * 1.0
    np.putmask(a, x > 0, 0.0)  # MARK
    return np.sum(a * x)


def ufunc_at(x):
    a = x * 1.0
    np.add.at(a, [0, 0, 1], x[:3])  # MARK
    return np.sum(a * x)


def nested(x):
    a = np.zeros(4)
    return np.sum(np.sin(x, out=a) * x)  # MARK


def into_a_row(x):
    m = np.zeros((2, 4))
    np.sin(x, out=m[0])  # MARK
    return np.sum(m)


def where_without_out(x):
    a = np.exp(x, where=x > 0.0)  # MARK
    return np.sum(a)


@pytest.mark.parametrize("f, what", [
    (fill_diagonal, "np.fill_diagonal"), (put, "np.put"), (putmask, "np.putmask"),
    (ufunc_at, "np.add.at"), (nested, "inside a larger expression"), (into_a_row, "m[0]"),
    (where_without_out, "without an output"),
], ids=lambda v: getattr(v, "__name__", None))
def test_writes_srcgrad_cannot_follow_are_refused(f, what):
    with pytest.raises(srcgrad.SrcgradSyntaxError) as info:
        srcgrad.grad(f, jit=False)(X.copy())
    message = str(info.value)
    assert what in message and "test_outputs.py" in message, message
    assert "# MARK" in message, message  # the user's line is quoted
