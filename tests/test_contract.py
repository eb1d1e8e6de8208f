"""Arrays the compiled form recomputes where they are read (transforms/contract.py), and
the kinds of what a recursive call returns (backend/fused.Returns) that det's needs.

Each function runs its compiled form (SRCGRAD_LOOPS=strict, conftest.py) and is checked
against the gradient numba computes from the generated function itself (to 1e-13: the
same operations in the same order) and against central differences; the form's text
shows which arrays went. An array whose leaf is written before a read, a read past the
end and a negative index keep NumPy's behaviour."""

import numpy as np
import pytest

import srcgrad
from bench.problems.det import det
from gradcheck import assert_form_agrees, form_code


def read_after(x):
    """`a`'s elements are recomputed where read: 2.0 * (x[k] + 1.0) * x[k]."""
    b = x + 1.0
    a = 2.0 * b * x
    b[0] = 5.0
    return a[0] + a[1] * b[0] + a[2] * x[1] - a[-1]


def leaf_written(x):
    """`a`'s leaf `b` is written before `a` is read: `a` stays an array."""
    b = x.copy()
    a = 2.0 * b * x
    b[0] = 5.0
    return a[0] + a[1] * b[0]


def in_a_loop(x, w):
    s = 0.0
    for step in range(3):
        v = x * w
        a = v * w - v
        for i in range(x.shape[0]):
            s += a[i] * np.sin(x[i] * step)
    return s


def ping(x, n):  # mutual recursion: what a call returns is TOP where followed back
    if n <= 0:
        return np.sum(x * x)
    return pong(x[1:], n - 1) + np.sum(np.sin(x))


def pong(x, n):
    if n <= 0:
        return np.sum(np.cos(x))
    return 0.5 * ping(x * 2.0, n - 1) + ping(x[:-1], n - 1)


def mutual(x):
    return ping(x, 3)


rng = np.random.default_rng(11)
X, W = rng.uniform(0.2, 1.2, 5), rng.uniform(-1, 1, 5)
CASES = [(read_after, (X,), 0), (leaf_written, (X,), 0), (in_a_loop, (X, W), (0, 1)),
         (det, (rng.uniform(-1, 1, (5, 5)),), 0), (mutual, (np.linspace(0.1, 0.9, 7),), 0)]


@pytest.mark.parametrize("func, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_the_form_agrees(func, args, wrt):
    assert_form_agrees(func, args, wrt)


def test_elements_are_recomputed_where_read():
    code = form_code(read_after, 0, (X,))
    assert "\n    a = np.empty" not in code and " a[" not in code
    assert "2.0 * (x[0] + 1.0) * x[0]" in code


def test_a_written_leaf_keeps_the_array():
    assert "\n    a = np.empty" in form_code(leaf_written, 0, (X,))


def test_det_recomputes_its_minors_adjoint():
    """The recursive call's partials have a known kind (fused.Returns), so the minor's
    adjoint is elementwise, then recomputed in the two loops that read it."""
    code = form_code(det, 0, (CASES[3][1][0],))
    assert "_adj_minor" not in code and "_adj__t18 * _t11 * _t15[_k, _j]" in code


def past_the_end(x):
    a = 3.0 * x * x
    s = 0.0
    for i in range(x.shape[0]):
        s += a[i + 1]
    return s


def test_a_read_past_the_end_is_still_an_index_error():
    with pytest.raises(IndexError):
        srcgrad.grad(past_the_end)(X)
