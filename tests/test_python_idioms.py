"""Python idioms a new user's loops contain, with Python's meaning, numba on and off:
`for i in reversed(range(...))` (it crashed inside generated code), `reversed(xs)` and
`enumerate(reversed(xs))`, and an int to a negative literal power (`(i + 1) ** -2`: numba
made 0 of it, Python a float), a list started with ints and filled with floats (numba
truncated them), `np.array(u, copy=False)` (it is u)."""
import numpy as np
import pytest

import srcgrad
from gradcheck import check_gradient


def horner_down(x):
    s = 0.0
    for i in reversed(range(x.shape[0])):
        s = s * x[i] + 1.0
    return s


def down_from_one(x):
    s = 0.0
    for i in reversed(range(1, x.shape[0])):
        s = s * x[i] + x[i - 1]
    return s


def down_by_two(x):
    s = 0.0
    for i in reversed(range(0, x.shape[0], 2)):
        s = s * x[i] + 1.0
    for i in reversed(range(5, 1, -2)):
        s = s * x[i % x.shape[0]] + 1.0
    return s


def over_reversed_items(x):
    s = 0.0
    for v in reversed(x):
        s = s * v + 1.0
    for k, v in enumerate(reversed(x[1:])):
        s = s * v + k
    return s


def inverse_squares(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * (i + 1) ** -2 + x[i] ** 2 * 10 ** -3
    return s


def list_started_with_ints(x):
    vals = [0] * 3  # numba typed it a list of ints and truncated what was put in it
    flags = [False, False]
    for i in range(3):
        vals[i] = x[i] * (i + 1) * 0.7
    flags[1] = x[0] * 2.0
    s = 0.0
    for v in vals:
        s = s + v ** 2
    return s + flags[1] * flags[0]


X = np.array([0.5, 2.0, 3.0, -0.7, 1.3])


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("f", [horner_down, down_from_one, down_by_two, over_reversed_items,
                               inverse_squares, list_started_with_ints],
                         ids=lambda f: f.__name__)
def test_idiom(f, jit):
    check_gradient(f, (X.copy(),), jit=jit)


def _no_copy(x):
    u = x.copy()
    v = np.array(u, copy=False)  # NumPy: v is u
    v[0] = 2.0 * v[1]
    return np.sum(u ** 2)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_an_array_made_without_copy_is_the_same_array(jit):
    with pytest.raises(srcgrad.SrcgradError, match=r"writes into 'v', and it shares memory "
                       r"with 'u' \(since `v = np.array\(u, copy=False\)`"):
        srcgrad.grad(_no_copy, jit=jit)(X.copy())
