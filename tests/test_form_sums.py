"""Sums over a loop's elements computed in the loop of the compiled form
(transforms/window_forms.py): `s = np.sum(E)` and a scalar's cotangent `_adj_a +=
unbroadcast(E, a)` become `_acc += e` in the loop. numba's np.sum adds in the same order
(index order, for arrays of one dimension), so the gradient is the generated function's
to the last bit; central differences agree. Sums of matrices stay numba's: it adds them
in memory order, which a loop over indices matches only for C-ordered arrays."""

import numpy as np
import pytest

from gradcheck import assert_form_agrees, form_code


def stencil(u0, a):
    """A scalar coefficient times a stencil: a's cotangent is a sum over the elements."""
    u = u0.copy()
    for k in range(4):
        un = u.copy()
        u[1:-1] = un[1:-1] + a * (un[2:] - 2.0 * un[1:-1] + un[:-2])
    return np.sum(u * u)


def reads_its_sum(x, a):
    """A statement right after the sum reads it: it must see the finished sum."""
    y = np.sin(x) * a
    s = np.sum(y * y)
    z = y * s + x
    return np.sum(z * z)


def sums_in_a_loop(x, w):
    """Sums of rows in a loop, added into a carried total."""
    total = 0.0
    for i in range(x.shape[0]):
        r = x[i] * w
        total += np.sum(r * r) - np.sum(np.tanh(r))
    return total


X = np.linspace(0.2, 1.4, 7)
CASES = [
    (stencil, (np.sin(np.linspace(0.0, 3.0, 9)), 0.2), 1),
    (reads_its_sum, (X, 0.7), 0),
    (reads_its_sum, (X, 0.7), 1),
    (sums_in_a_loop, (np.outer(np.arange(1.0, 4.0), X) / 5, X), 0),
    (sums_in_a_loop, (np.outer(np.arange(1.0, 4.0), X) / 5, X), 1),
]


@pytest.mark.parametrize("func, args, wrt", CASES,
                         ids=[f"{c[0].__name__}-{c[2]}" for c in CASES])
def test_sums_in_loops_agree_to_the_last_bit(func, args, wrt):
    code = form_code(func, wrt, args)
    assert "_acc = 0.0" in code and "_acc += " in code, code
    assert_form_agrees(func, args, wrt=wrt, exact=True)


def test_a_read_of_the_sum_waits_for_its_loop():
    code = form_code(reads_its_sum, 0, (X, 0.7))
    lines = [line.strip() for line in code.splitlines()]
    done = lines.index("s = _acc")
    assert all("* s" not in line for line in lines[:done]), code


def matrix_sums(w, x):
    """Sums of a matrix expression: numba adds a Fortran-ordered one column by column."""
    y = np.tanh(w * x)
    return np.sum(y * y) + np.sum(w)


@pytest.mark.parametrize("order", ["C", "F"])
def test_sums_of_matrices_stay_numbas(order):
    w = np.asarray(np.outer(np.linspace(0.2, 1.0, 5), np.linspace(0.5, 1.5, 4)), order=order)
    x = np.asarray(np.ones((5, 4)) * 0.3, order=order)
    code = form_code(matrix_sums, 0, (w, x))
    assert "_acc" not in code and "np.sum(" in code, code
    assert_form_agrees(matrix_sums, (w, x), exact=True)
