"""Element stores nothing reads again, left out of the compiled form
(transforms/dead_stores.py).

Each function runs its compiled form (SRCGRAD_LOOPS=strict, conftest.py) and is checked
against the gradient of the generated function itself (to 1e-13), against central
differences and against autograd; the form's text shows which clearing stores went and
which stayed: those of an element read again, by the loop or after it."""

import numpy as np
import pytest

from gradcheck import assert_form_agrees, form_code


def scratch(x, s):
    """ode's shape: a scratch array filled afresh at every step."""
    y = np.zeros(x.shape[0])
    for step in range(s):
        z = np.empty(x.shape[0])
        z[0] = x[0]
        for i in range(1, x.shape[0]):
            z[i] = x[i] * y[i - 1]
        y = y + 0.5 * np.sin(z)
    return np.sum(y * y)


def overwritten_before(x):
    """z[2] is written before the loop that writes it again: its adjoint is read after
    the reversed loop, inside the counter's range, and must be cleared."""
    z = np.empty(x.shape[0])
    z[0] = 1.0
    z[2] = 5.0 * x[0]
    for i in range(1, x.shape[0]):
        z[i] = x[i] * x[i - 1]
    return np.sum(np.sin(z))


def written_twice(x):
    """Two loops write every element: the second's clearing is read by the first's."""
    z = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        z[i] = x[i] * 2.0
    for i in range(x.shape[0]):
        z[i] = np.sin(z[i]) + x[i]
    return np.sum(z * z)


def outside_range(x):
    """z[0] is written after the loop that writes z[1:]: read at a constant outside the
    reversed loop's range, the clearing inside the loop goes."""
    z = np.empty(x.shape[0])
    for i in range(1, x.shape[0]):
        z[i] = x[i] * x[i - 1]
    z[0] = np.cos(x[0])
    return np.sum(z * x)


def negative_counters(x):
    """Counters -1 and n - 1 name one element: its adjoint must be cleared."""
    n = x.shape[0]
    z = np.empty(n)
    for i in range(-1, n):
        z[i] = x[i] * x[i]
    return np.sum(np.sin(z))


def negative_counter_after(x):
    """z[4] is written before the loop whose counter -1 writes it again."""
    z = np.empty(5)
    z[4] = x[0] * 2.0
    for i in range(-1, 3):
        z[i] = x[i + 1] * x[i + 1]
    return np.sum(np.sin(z))


rng = np.random.default_rng(5)
X = rng.uniform(0.2, 1.2, 6)
CASES = [(scratch, (X, 3)), (overwritten_before, (X,)), (written_twice, (X,)),
         (outside_range, (X,)), (negative_counters, (X,)), (negative_counter_after, (X,))]


@pytest.mark.parametrize("func, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_the_form_agrees(func, args):
    assert_form_agrees(func, args, 0, oracle=True)


def test_a_scratch_arrays_clearing_goes():
    code = form_code(scratch, 0, (X, 3))
    assert "_adj_z[i] = 0.0" not in code and "_adj_z[0] = 0.0" not in code


def test_an_element_read_after_the_loop_outside_its_range_is_not_cleared():
    assert "_adj_z[i] = 0.0" not in form_code(outside_range, 0, (X,))


def test_an_element_read_after_the_loop_inside_its_range_is_cleared():
    assert "_adj_z[i] = 0.0" in form_code(overwritten_before, 0, (X,))


def test_an_element_read_by_a_later_loop_is_cleared():
    assert "_adj_z[i] = 0.0" in form_code(written_twice, 0, (X,))
