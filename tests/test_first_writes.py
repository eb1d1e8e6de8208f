"""An adjoint cleared to zeros, then accumulated into once per element by a loop: the first
accumulation stores (transforms/first_writes.py).

Each function runs its compiled form (SRCGRAD_LOOPS=strict, conftest.py) and is checked
against the gradient of the generated function itself, bit for bit (the sign of a zero
included), against central differences and against autograd; the form's text shows
where the fill went and where it stayed."""

import numpy as np
import pytest

from gradcheck import assert_form_agrees, form_code, gradient_without_forms
from test_compiled_forms import _shifted  # ode's right-hand side: element i reads y[i - 1]


def _from_above(x, y):
    """Element i reads y[i + 1]: the reversed loop's slots start at 1."""
    n = x.shape[0]
    z = np.empty(n)
    z[n - 1] = x[n - 1]
    for i in range(n - 1):
        z[i] = x[i] * y[i + 1]
    return z


def _wrapping(x, y):
    """Counter -1 reads y[0]: slots i + 1 are 0 .. n - 1, each once."""
    n = x.shape[0]
    z = np.empty(n)
    for i in range(-1, n - 1):
        z[i] = x[i] * y[i + 1]
    return z


def _wrapping_same(x, y):
    """Counters -1 and n - 1 both read y[n - 1]: that slot is added to twice."""
    n = x.shape[0]
    z = np.zeros(n)
    for i in range(-1, n):
        z[i] = z[i] + x[i] * y[i]
    return z


def _skipping(x, y):
    """Some iterations skip the read: their slots keep the cleared zero."""
    n = x.shape[0]
    z = np.zeros(n)
    for i in range(1, n):
        if x[i] > 0.6:
            continue
        z[i] = x[i] * y[i - 1]
    return z


def below(x, s):
    y = np.zeros(x.shape[0]) + 0.3
    for step in range(s):
        k = _shifted(x, 0.5 * y + 0.1)
        y = y + 0.1 * np.sin(k)
    return np.sum(y * y)


def above(x, s):
    y = np.zeros(x.shape[0]) + 0.3
    for step in range(s):
        k = _from_above(x, 0.5 * y + 0.1)
        y = y + 0.1 * np.sin(k)
    return np.sum(y * y)


def wrapping(x, s):
    y = np.zeros(x.shape[0]) + 0.3
    for step in range(s):
        k = _wrapping(x, 0.5 * y + 0.1)
        y = y + 0.1 * np.sin(k)
    return np.sum(y * y)


def wrapping_same(x, s):
    y = np.zeros(x.shape[0]) + 0.3
    for step in range(s):
        k = _wrapping_same(x, 0.5 * y + 0.1)
        y = y + 0.1 * np.sin(k)
    return np.sum(y * y)


def skipping(x, s):
    y = np.zeros(x.shape[0]) + 0.3
    for step in range(s):
        k = _skipping(x, 0.5 * y + 0.1)
        y = y + 0.1 * np.sin(k)
    return np.sum(y * y)


def signed_zero(x, s):
    """x holds -0.0: the adjoint slots of y receive -0.0, which added to a cleared
    zero gives +0.0."""
    y = np.zeros(x.shape[0]) + 0.3
    for step in range(s):
        k = _shifted(x, 0.5 * y + 0.1)
        y = y + k
    return np.sum(y)


rng = np.random.default_rng(11)
X = rng.uniform(0.2, 1.2, 7)
X1 = X[:1].copy()
XZ = np.array([0.5, -0.0, 0.7, -0.0, 0.2])
CASES = [(below, (X, 3)), (above, (X, 3)), (wrapping, (X, 3)), (wrapping_same, (X, 3)),
         (skipping, (X, 3)), (below, (X1, 2)), (above, (X1, 2)), (signed_zero, (XZ, 2))]


@pytest.mark.parametrize("func, args", CASES,
                         ids=[f"{c[0].__name__}-{len(c[1][0])}" for c in CASES])
def test_the_form_agrees_to_the_bit(func, args):
    g = assert_form_agrees(func, args, 0, exact=True, oracle=True)
    np.testing.assert_array_equal(np.signbit(g(*args)),
                                  np.signbit(gradient_without_forms(func, 0, args)))


def test_a_shifted_reads_adjoint_is_stored_not_cleared_then_added():
    code = form_code(below, 0, (X, 3))
    assert "+ 0.0" in code and "max(" in code
    assert "index_in(_adj_y___shifted1.shape[0], _k)" not in code  # bounds.py proves it


def test_slots_from_one_clear_the_first_element_too():
    code = form_code(above, 0, (X, 3))
    assert "+ 0.0" in code and "range(min(1, _nz" in code


def test_a_slot_named_twice_keeps_its_accumulation():
    assert "+ 0.0" not in form_code(wrapping_same, 0, (X, 3))


def test_a_loop_that_may_skip_keeps_its_accumulation():
    assert "+ 0.0" not in form_code(skipping, 0, (X, 3))
