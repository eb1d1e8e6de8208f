"""Arrays a loop makes at every iteration, with a shape it does not change, get one buffer
made before the loop (transforms/hoist_buffers.py).

Each gradient from the compiled form is checked against the generated function's, bit for
bit, against central differences and against autograd; the form is read for the buffers
made before the loop, and for the allocations left alone."""
import numpy as np
import pytest

from gradcheck import assert_form_agrees, form_code
from test_compiled_forms import _shifted as rhs  # GradBench ode's right-hand side


def rk2(x, s):
    """ode's shape: the stages' scratch arrays and their adjoints, every step."""
    y = np.zeros(x.shape[0]) + 0.1
    for step in range(s):
        k1 = rhs(x, y)
        k2 = rhs(x, y + 0.5 * k1)
        y = y + 0.25 * (np.sin(k1) + k2)
    return np.sum(y * y)


def growing(x):
    """An array whose length is the counter's: made afresh at every iteration."""
    total = 0.0
    for i in range(1, x.shape[0]):
        z = np.empty(i)
        for j in range(i):
            z[j] = x[j] * x[i]
        total = total + np.sum(np.sin(z))
    return total


def never_runs(x, m):
    """A loop that never runs, whose array's extent is negative: nothing may raise."""
    total = np.sum(x * x)
    n = x.shape[0] - 10
    for i in range(m):
        z = np.empty(n)
        for j in range(n):
            z[j] = x[j] * 2.0
        total = total + np.sum(z * z)
    return total


def never_runs_huge(x, n, m):
    """Found by a review: a loop of no iterations whose array would take 128 TB; a
    buffer made before it raised MemoryError where the function returns."""
    total = np.sum(x * x)
    for i in range(m):
        z = np.zeros(n * n)
        for j in range(x.shape[0]):
            z[j] += x[j] * 2.0 + i
        total = total + np.sum(np.sin(z))
    return total


def in_branch(x, s, flag):
    """Found by a review: the loop sits in an `if`; n, bound before it, serves."""
    n = x.shape[0]
    y = x * 1.0
    if flag > 0:
        for step in range(s):
            z = np.empty(n)
            for j in range(n):
                z[j] = np.cos(y[j]) * x[j]
            y = y + 0.1 * z
    return np.sum(y * y)


X = np.linspace(0.2, 0.9, 6)
CASES = [(rk2, (X, 3)), (rk2, (X, 0)), (growing, (X,)), (never_runs, (X, 0)),
         (never_runs_huge, (X, 4 * 10 ** 6, 0)), (in_branch, (X, 3, 1))]


@pytest.mark.parametrize("func, args", CASES,
                         ids=[f"{c[0].__name__}-{len(c[1])}-{c[1][-1]}" for c in CASES])
def test_the_form_agrees_to_the_bit(func, args):
    assert_form_agrees(func, args, 0, exact=True, oracle=True)


def test_stage_arrays_and_adjoints_get_buffers_before_the_loop():
    code = form_code(rk2, 0, (X, 3))
    assert "    _buf_z___shifted2 = np.empty(" in code
    assert "    _buf__adj_k1 = np.empty(" in code
    assert "if _buf_" not in code  # not checked at every iteration (reuse_buffers.py)


def test_the_adjoint_of_a_tape_row_gets_a_buffer_of_the_rows_shape():
    """k2's argument is a row of its tape, `y = T[step]`; its adjoint's shape, `y.shape`,
    is read from the tape before the loop (T may have no rows: `T[0]` is not read)."""
    code = form_code(rk2, 0, (X, 3))
    assert "= _tape_y___shifted2.shape[1:]" in code
    assert "        _adj_y___shifted2 = _buf__adj_y___shifted2" in code
    assert "OWN_BOUNDS = ()" not in code  # kinds read `T.shape[1:]` as a tuple of ints


def test_an_array_of_the_counters_length_is_made_afresh():
    assert "z = np.empty(i)" in form_code(growing, 0, (X,))


def test_a_negative_extent_of_a_loop_that_never_runs_is_clamped():
    assert "np.empty((max(" in form_code(never_runs, 0, (X, 0))


def test_a_loop_in_a_branch_gets_buffers_from_names_bound_before_it():
    assert "_buf_z = np.empty(" in form_code(in_branch, 0, (X, 3, 1))


def test_a_loop_that_never_runs_makes_empty_buffers():
    code = form_code(never_runs_huge, 0, (X, 4 * 10 ** 6, 0))
    assert "if _runs else (0,)" in code
