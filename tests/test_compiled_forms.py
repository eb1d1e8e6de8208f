"""Compiled forms (backend/fused.py, transforms/loops.py): runs of elementwise statements
as explicit loops, made for the first call's argument kinds.

Each function is checked three ways: the gradient numba computes from the compiled form
against the one it computes from the generated function (the same operations on the same
values: equal up to the order of sums), against central differences and against
autograd; and the form must be the code that ran (or, where a check cannot hold, must
have stepped aside: arrays of other shapes, arguments of other kinds). The suite runs
with SRCGRAD_LOOPS=strict (conftest.py): a form that fails where the function runs is an
error, not a silent fallback.
"""
import re

import numpy as np
import pytest

import srcgrad
from gradcheck import assert_close, assert_form_agrees, gradient_without_forms, numerical_grad


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def cell_steps(w, x):
    """An LSTM-like cell: gates of slices of one parameter row, state rows written back."""
    b = x.shape[1]
    h = np.zeros(b)
    c = np.zeros(b)
    total = 0.0
    for t in range(x.shape[0]):
        f = sigmoid(x[t] * w[:b] + w[b:2 * b])
        g = np.tanh(h * w[2 * b:3 * b] + w[3 * b:])
        c = c * f + g * (1.0 - f)
        h = np.tanh(c) * f
        total += np.sum(h * x[t])
    return total


def shifted_views(x):
    """Reads and writes of one array through views that overlap off by one."""
    y = x * 1.5
    for k in range(3):
        y[1:] = y[1:] + 0.5 * y[:-1] * x[:-1]
        y[:-1] += np.sin(y[1:])
    return np.sum(y * y)


def rows_2d(a, v):
    """Rank-2 elementwise runs, a row broadcast along the first axis, in-place updates."""
    m = a * 2.0
    for i in range(a.shape[0]):
        m[i] = m[i] * v + np.cos(a[i])
    s = np.exp(-m * m) + m
    s += a * m
    return np.sum(s)


def aliased(x, k):
    """A second name for a loop's array, the first rebound; an array updated in place."""
    u = np.tanh(x * k)
    v = u
    u = u + x * 0.25
    w = v * u + 1.0 / (2.0 + x)
    s = w * 1.0
    s += x * v
    return np.sum(s) + np.sum(v)


def _first(v, w):
    t = v
    return t


def second_name_shape(x):
    """A second name (through a call) of an array the loop makes, read later only for its
    shape by the backward sweep: the form once read a name it never bound (found by
    tests.fuzz.aliases --seed 4)."""
    a = x * 1.0
    b = np.sin(x)
    c = x * x
    m = np.stack((a, c))
    c = _first(b, a)
    return np.sum(np.cos(b)) + np.sum(c) + np.sum(m)


def swapped_buffers(u0, r):
    """A stencil swapping its two buffers: the backward sweep's adjoints of both are copies
    (transforms/copies.py), not zeros_plus calls LLVM cannot tell apart."""
    u = u0.copy()
    new = u0.copy()
    n = u.shape[0]
    for k in range(4):
        for i in range(1, n - 1):
            new[i] = u[i] + r * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u, new = new, u
    return np.sum(u * u)


def _shifted(x, y):
    z = np.empty(x.shape[0])
    z[0] = x[0]
    for i in range(1, x.shape[0]):
        z[i] = x[i] * y[i - 1]
    return z


def rk_steps(x, s):
    """Runge-Kutta stages (GradBench's ode): each stage's argument an array the loop
    makes anyway and records, recorded after its loop from that array (a store into the
    tape row inside the loop made LLVM read every array of the loop by gathers)."""
    y = np.zeros(x.shape[0])
    h = 0.1
    for step in range(s):
        k1 = _shifted(x, y)
        k2 = _shifted(x, y + h * k1 / 2.0)
        y = y + h * (k1 + k2) / 2.0
    return np.sum(y * y)


def updated_after_read(x):
    """Arrays the loops make, read by a product and then updated in place: the backward
    sweep needs their values before the update (u is recorded after its loop; w, updated
    in place, keeps the value recorded before `w += x`)."""
    v = np.zeros(x.shape[0])
    t = 0.0
    for k in range(3):
        v = x * 0.5 + v
        w = np.sin(v)
        u = w * x
        w += x
        t += np.sum(u * w)
    return t


def damped_growth(x, s):
    """A vector update taping a number only its loop holds (`np.sqrt(1 + y * y)`): the tape
    is made before the step loop (transforms/hoist_tapes.py), not in an `if step == 0:`
    of it, which made LLVM read every array of the element loop by gathers."""
    y = x.copy()
    for step in range(s):
        z = y * x
        y = y + 0.01 * z * (1.0 - z) * np.sqrt(1.0 + y * y)
    return np.sum(y)


def divides(x, d):
    """A quotient by an element that may be zero: inf as NumPy gives, not an exception."""
    q = x / (d - 1.0) + x * x
    return np.sum(np.where(np.isfinite(q), q, 0.0))


def heat_steps(u0, a):
    """A stencil of the new user's: the backward sweep adds into views of `_adj_un`, an
    array the same window makes (`_adj_un = zeros_like(un)`)."""
    u = u0.copy()
    for k in range(4):
        un = u.copy()
        u[1:-1] = un[1:-1] + a * (un[2:] - 2.0 * un[1:-1] + un[:-2])
    return np.sum(u * u)


def recursive_rows(A):
    """A recursive function (its f__grad_all is fused too) slicing rows and columns."""
    n = A.shape[0]
    if n == 1:
        return A[0, 0] * A[0, 0]
    total = 0.0
    for j in range(n):
        minor = A[1:, :] * 0.5 + A[:-1, :] * A[:-1, :]
        total = total + A[0, j] * recursive_rows(minor[:, 1:])
    return total


rng = np.random.default_rng(5)
CASES = {
    "cell_steps": (cell_steps, lambda: (rng.uniform(-1, 1, 28), rng.uniform(-1, 1, (6, 7))),
                   (0, 1)),
    "shifted_views": (shifted_views, lambda: (rng.uniform(-1, 1, 9),), 0),
    "rows_2d": (rows_2d, lambda: (rng.uniform(-1, 1, (4, 5)), rng.uniform(-1, 1, 5)), (0, 1)),
    "aliased": (aliased, lambda: (rng.uniform(-1, 1, 6), 0.7), (0, 1)),
    "recursive_rows": (recursive_rows, lambda: (rng.uniform(-1, 1, (4, 4)),), 0),
    "second_name_shape": (second_name_shape, lambda: (rng.uniform(-1, 1, 4),), 0),
    "swapped_buffers": (swapped_buffers, lambda: (rng.uniform(-1, 1, 7), 0.2), (0, 1)),
    "rk_steps": (rk_steps, lambda: (rng.uniform(-1, 1, 6), 4), 0),
    "updated_after_read": (updated_after_read, lambda: (rng.uniform(-1, 1, 5),), 0),
    "damped_growth": (damped_growth, lambda: (rng.uniform(-1, 1, 6), 5), 0),
    "heat_steps": (heat_steps, lambda: (rng.uniform(-1, 1, 9), 0.2), (0, 1)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_form_runs_and_agrees(case):
    func, make, wrt = CASES[case]
    assert_form_agrees(func, make(), wrt, oracle=True)


def test_a_quotient_by_zero_gives_numpys_inf():
    x = np.array([0.5, -1.0, 2.0])
    d = np.array([1.0, 3.0, 1.0])  # d - 1 is 0 at two elements
    g = srcgrad.grad(divides)
    got = g(x, d)
    assert g._last.compiled.form.state == "on"
    np.testing.assert_array_equal(got, gradient_without_forms(divides, 0, (x, d)))


def test_other_shapes_step_aside_for_the_function():
    """Arrays the form assumed of one shape broadcast at run time: its check fails, and the
    function computes the gradient (what NumPy's broadcasting gives)."""
    def broadcast(x, y):
        z = np.tanh(x * y) + x
        return np.sum(z * z)
    g = srcgrad.grad(broadcast, wrt=(0, 1))
    x = rng.uniform(-1, 1, 5)
    g(x, rng.uniform(-1, 1, 5))
    assert g._last.compiled.form.state == "on"
    y1 = rng.uniform(-1, 1, 1)  # shape (1,): broadcast along x
    gx, gy = g(x, y1)
    assert g._last.compiled.form.state == "off"
    assert_close(gy, numerical_grad(broadcast, (x, y1), 1), rtol=1e-6)
    assert_close(gx, numerical_grad(broadcast, (x, y1), 0), rtol=1e-6)


def test_arguments_of_other_kinds_step_aside():
    def scaled(x, k):
        return np.sum(np.sin(x * k) * x)
    g = srcgrad.grad(scaled, wrt=(0, 1))
    x = rng.uniform(-1, 1, 4)
    g(x, 2.0)
    assert g._last.compiled.form.state == "on"
    k = rng.uniform(-1, 1, 4)  # an array where a float was
    gx, gk = g(x, k)
    assert g._last.compiled.form.state == "off"
    assert_close(gk, numerical_grad(scaled, (x, k), 1), rtol=1e-6)


def test_the_form_reads_as_the_function_does():
    """Kept names and line comments; each loop checks the shapes it assumes."""
    g = srcgrad.grad(cell_steps, wrt=(0, 1))
    g(*CASES["cell_steps"][1]())
    text = open(g._last.compiled.form.path).read()
    assert "# c = c * f + g * (1.0 - f)   (test_compiled_forms.py:" in text
    assert "for _k in range(_n" in text and "same_shape(" in text
    assert "guard_kind(w, 1, 1)" in text and re.search(r"\bc__e\d* = ", text)


def test_a_swap_copies_its_adjoints():
    g = srcgrad.grad(swapped_buffers, wrt=(0, 1))
    g(rng.uniform(-1, 1, 7), 0.2)
    form = g.compiled_source
    # copies.py's `same_shape` before each copy is implied: both buffers are copies of u0,
    # swapped by name (transforms/implied_checks.py drops it)
    assert "zeros_plus(" not in form and ".copy()" in form, form


def test_arrays_the_loop_makes_are_recorded_after_it():
    """Recorded after the loop, or filled in the tape's row (transforms/tape_rows.py)."""
    g = srcgrad.grad(rk_steps)
    g(rng.uniform(-1, 1, 6), 4)
    form = g.compiled_source
    taped = re.findall(r"record_at\((_tape_\w+), step, (\w+)\)", form)
    forward = form[:form.index("# backward sweep")]  # (its row's same_shape may be implied)
    rows = re.findall(r"(\w+) = (_tape_\w+)\[step\]\n", forward)
    assert len(taped) + len(rows) >= 2 and rows, form
    for tape in [t for t, _ in taped] + [t for _, t in rows]:  # no element stores into
        assert not re.search(rf"{tape}\[step, _k\] =", form), form  # tapes in the loops


def test_tapes_are_made_before_their_loop():
    g = srcgrad.grad(damped_growth)
    g(rng.uniform(-1, 1, 6), 5)
    form = g.compiled_source
    assert not re.search(r"if step == 0:\n\s+_tape_\w+ = ", form), form
    head = form[:form.index("\n    for step in range(s):\n")]  # the loop, not its comment
    assert re.search(r"_tape_\w+ = tape_like\(", head), form


def test_stores_into_views_of_an_array_the_window_makes_are_loops():
    """Such a store ends its window (transforms/windows.py) and the next runs it as a loop,
    instead of leaving it an array statement numba runs slowly."""
    g = srcgrad.grad(heat_steps, wrt=(0, 1))
    g(rng.uniform(-1, 1, 9), 0.2)
    form = g.compiled_source
    assert not re.search(r"\n\s+_adj_un\[[^\]]*:[^\]]*\] [-+]= ", form), form  # slices
    assert re.search(r"\n\s+_adj_un\[[^\]:]*_k\] [-+]?= ", form), form  # element loops
