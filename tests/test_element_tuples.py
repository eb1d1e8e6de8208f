"""Tuple targets holding array elements (frontend/element_tuples.py): `a[i], a[j] = a[j],
a[i]` and `q[i], p[i] = step(...)`, checked against finite differences, numba on and off;
a swap of rows of a 2-d array, where NumPy's own result would read a row already
overwritten, is refused at the user's line."""
import numpy as np
import pytest

import srcgrad
from gradcheck import check_gradient


def swap(x):
    a = x.copy()
    a[0], a[1] = a[1], a[0]
    return a[0] * 2 + a[1] * np.sin(a[2])


def bubble_sort_weighted(x):
    a = x * 1.0
    n = a.shape[0]
    for i in range(n):
        for j in range(n - 1 - i):
            if a[j] > a[j + 1]:
                a[j], a[j + 1] = a[j + 1], a[j]
    return np.sum(a * np.arange(1.0, n + 1))


def _step(q, p, h):
    return q + h * p, p - h * np.sin(q)


def leapfrog_elements(x):
    q = np.zeros(3)
    p = np.zeros(3)
    for i in range(3):
        q[i], p[i] = _step(x[i], x[i + 3], 0.1)
    return np.sum(q * q + p)


def nested_targets(x):
    a = np.zeros(3)
    b, a[1] = x[0] * 2, x[1] ** 2
    a[0], (c, a[2]) = b, (x[2], np.exp(x[0]))
    [a[1], a[2]] = [a[2] * 3, a[1]]
    return np.sum(a * a) + b * c


def index_bound_first(x):
    a = x.copy()
    i = 0
    i, a[i] = 2, x[0] * 5  # Python binds i first: a[2] is written
    return np.sum(a * a)


X = np.array([0.3, -1.2, 0.7, 2.0, 0.1, 0.5])


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("f", [swap, bubble_sort_weighted, leapfrog_elements, nested_targets,
                               index_bound_first], ids=lambda f: f.__name__)
def test_tuple_targets_with_elements(f, jit):
    check_gradient(f, (X.copy(),), jit=jit)


def swap_rows(x):
    a = x.reshape(2, 3) * 1.0
    a[0], a[1] = a[1], a[0]  # NumPy: a[1] gets the new a[0], a view of row 1
    return np.sum(a[0] * 2 + a[1])


def test_swapping_rows_of_views_is_refused_at_the_users_line():
    with pytest.raises(srcgrad.SrcgradError, match=r"test_element_tuples.py:\d+: `a\[0\], "
                       r"a\[1\] = a\[1\], a\[0\]` writes into 'a'.*a value computed"):
        srcgrad.grad(swap_rows, jit=False)(X.copy())
