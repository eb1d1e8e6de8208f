"""The compiled form's views as elements of their arrays (transforms/flat_views.py).

Each function runs its compiled form (SRCGRAD_LOOPS=strict, conftest.py) and is checked
against the gradient numba computes from the generated function itself and against
central differences; the form's text shows which views went. Loops whose
views are read before being bound again, views passed to functions, and indices out of
bounds keep the behaviour they had (an IndexError stays an IndexError)."""

import numpy as np
import pytest

import srcgrad
from bench.problems.det import det  # slices bounded by the loop's index, in a recursion
from gradcheck import assert_close, assert_form_agrees, form_code, numerical_grad


def project(c, x):  # ba's shape: a helper taking rows, slicing a parameter row
    xo = x - c[3:6]
    p = xo[0] / (xo[2] + 4.0)
    return c[0] * p * p + c[1] * xo[1] + c[2]


def observations(cams, X):
    total = 0.0
    for i in range(X.shape[0]):
        total += project(cams[i], X[i]) ** 2
    return total


def carried_row(a, w):
    """`prev` is read before the loop binds it again: its view stays."""
    prev = a[0]
    s = 0.0
    for i in range(1, a.shape[0]):
        row = a[i]
        s += w[0] * row[0] * prev[1] + w[1] * np.sin(row[1])
        prev = row
    return s


def last_row(a, w):
    """A negative index and a view handed to a NumPy function."""
    r = a[-1]
    return np.sum(r * w) + r[0] * r[1]


def segments(a):
    s = 0.0
    for i in range(a.shape[0]):
        seg = a[i, 1:3]
        s += seg[0] * seg[1] + np.cos(seg[1])
    return s


rng = np.random.default_rng(7)
CAMS, XS = rng.uniform(0.5, 1.5, (5, 7)), rng.uniform(0.5, 1.5, (5, 3))
A, W = rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, 3)
CASES = [(observations, (CAMS, XS), (0, 1)), (carried_row, (A, W), (0, 1)),
         (last_row, (A, W), (0, 1)), (segments, (A,), 0)]


@pytest.mark.parametrize("func, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_the_form_agrees(func, args, wrt):
    assert_form_agrees(func, args, wrt)


def test_inlined_rows_and_slices_become_elements():
    code = form_code(observations, (0, 1), (CAMS, XS)).splitlines()
    assert not any("= cams[i]" in line or "= X[i]" in line or "[3:6]" in line for line in code)
    assert any("cams[i, 3 + _k]" in line for line in code)
    # the row check, made once before the loop (transforms/bounds.py)
    assert any("index_in(cams.shape[0]," in line for line in code)


def test_a_row_read_before_it_is_bound_again_stays_a_view():
    assert "prev = a[0]" in form_code(carried_row, (0, 1), (A, W))


def test_a_row_out_of_bounds_is_still_an_index_error():
    def shifted(cams, X):
        total = 0.0
        for i in range(X.shape[0]):
            total += project(cams[i + 1], X[i]) ** 2
        return total
    with pytest.raises(IndexError):
        srcgrad.grad(shifted)(CAMS, XS)


def view_bound_alone_in_a_branch(x, y):
    """Fuzz seed 402, program 95: `v2 = v1[:2]`, unused, was a branch's only statement;
    flattened away, the branch was left empty (an IndentationError in the form)."""
    if x < -0.25:
        v1 = 0.1 + np.zeros(3)
        if v1[2] * v1[2] < 2.0 and np.exp(v1[1]) < 0.3:
            v2 = v1[:2]
        else:
            v3 = v1
    v5 = np.empty(3)
    v5[:1] = np.min(np.log(1.0 + (y * np.ones(3)) ** 2))
    v5[1:] = y * np.ones(2) + x
    return np.tanh(np.sum(v5) * x)


@pytest.mark.parametrize("x", [-0.5, 1.46])
def test_a_branch_left_without_statements_gets_pass(x):
    args = (x, -0.9)
    g = srcgrad.grad(view_bound_alone_in_a_branch, wrt=(0, 1))
    got = g(*args)
    assert g._last.compiled.form.state == "on"
    for k in (0, 1):
        assert_close(got[k], numerical_grad(view_bound_alone_in_a_branch, args, k),
                     rtol=1e-5, atol=1e-7)


def windows(x, w):
    """Bounds that are names, negative at the start (clamped as NumPy clamps them: an
    empty window), past the end, and negative constants."""
    s = 0.0
    for i in range(x.shape[0] + 2):
        win = x[i - 2:i + 1]
        s += np.sum(np.sin(win) * w[:win.shape[0]])
        tail = x[-2:]
        head = x[:-1]
        s += np.sum(tail * tail) * np.sum(head[1:] * i)
    return s


BOUND_CASES = [(det, (rng.uniform(-1, 1, (4, 4)),), 0),
               (windows, (rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 3)), (0, 1))]


@pytest.mark.parametrize("func, args, wrt", BOUND_CASES, ids=["det", "windows"])
def test_slices_bounded_by_names_agree(func, args, wrt):
    assert_form_agrees(func, args, wrt)


def test_a_slice_from_zero_becomes_elements():
    """`0:2` once read as no slice at all (a bound of 0 compared equal to False)."""
    def heads(a):
        s = 0.0
        for i in range(a.shape[0]):
            seg = a[i, 0:2]
            s += seg[0] * seg[1]
        return s
    code = form_code(heads, 0, (A,))
    assert "a[i, 0:2]" not in code and "a[i, 1]" in code


def test_slices_bounded_by_names_become_elements():
    code = form_code(det, 0, BOUND_CASES[0][1])
    assert "A[1:, :j]" not in code and "= A[1 + _k, _j]" in code
    assert "slice_at(j, minor.shape[1]) + _j" in code
