"""A carried state made in its tape's next row (transforms/next_rows.py) and an adjoint
copy that takes its source's array (transforms/coalesce.py): the forward and backward
sweeps of a time-stepping loop `y = y + h * f(y)`.

Each function runs its compiled form (SRCGRAD_LOOPS=strict, conftest.py) and is checked
against the gradient of the generated function itself, bit for bit, against central
differences and against autograd; the form's text shows which rewrites applied. The
passes are also run on hand-written forms, where the cases they must refuse are easy to
write down."""

import gast
import numpy as np
import pytest

from gradcheck import assert_form_agrees, form_code
from test_in_place import rk2  # RK2 steps of GradBench ode's right-hand side
from srcgrad.analysis import kinds as K
from srcgrad.transforms.coalesce import coalesce


def euler(x, s):
    """The state is recorded at each step and replaced by the step's new array."""
    y = np.zeros(x.shape[0]) + 0.1
    for step in range(s):
        y = y + 0.2 * np.sin(y) * x
    return np.sum(y * y)


def written_in_place(x, s):
    """The state is written in place during the step, before it is recorded."""
    y = np.zeros(x.shape[0]) + 0.1
    for step in range(s):
        y[0] = y[0] * 0.5 + x[0]
        y = y + 0.2 * np.sin(y) * x
    return np.sum(y * y)


def kept(x, s):
    """The state before the step stays in `prev` and is read after the new one is made."""
    y = np.zeros(x.shape[0]) + 0.1
    total = 0.0
    for step in range(s):
        prev = y
        y = y + 0.2 * np.sin(y) * x
        total = total + np.sum(prev * y)
    return total + np.sum(y)


def kept_written(x, s):
    """The state before the step is written through `prev` after it was recorded (srcgrad
    gives `prev` an array of its own: nothing else reads the old state's)."""
    y = np.zeros(x.shape[0]) + 0.1
    total = 0.0
    for step in range(s):
        prev = y
        y = y + 0.2 * np.sin(y) * x
        prev[0] = 0.5 * x[1]
        total = total + np.sum(prev * y)
    return total + np.sum(y)


def stopped(x, s):
    """A break: the last state may be made in a row."""
    y = np.zeros(x.shape[0]) + 0.1
    for step in range(s):
        y = y + 0.2 * np.sin(y) * x
        if y[0] > 0.5:
            break
    return np.sum(y * y)


X = np.linspace(0.2, 0.9, 6)
CASES = [(euler, (X, 4)), (euler, (X, 1)), (euler, (X, 0)), (rk2, (X, 3)),
         (written_in_place, (X, 3)), (kept, (X, 3)), (kept_written, (X, 3)),
         (stopped, (X, 5)), (stopped, (X * 4, 5))]


@pytest.mark.parametrize("func, args", CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_the_form_agrees_to_the_bit(func, args):
    assert_form_agrees(func, args, 0, exact=True, oracle=True)


def test_the_new_state_is_made_in_the_tapes_next_row():
    code = form_code(rk2, 0, (X, 3))
    assert "[step + 1]" in code and "if step == 0:" in code


def test_the_steps_adjoint_is_not_copied():
    code = form_code(rk2, 0, (X, 3))
    assert "_adj_y = _adj__t" in code


def test_a_state_read_after_the_next_is_made_may_live_in_its_row():
    assert "[step + 1]" in form_code(kept, 0, (X, 3))


def test_a_loop_that_may_stop_records_as_before():
    assert "[step + 1]" not in form_code(stopped, 0, (X, 3))


# --- coalesce on hand-written forms -------------------------------------------------

_COPY = """
def f(a0, n):
    a = a0 * 2.0
    _n = a.shape
    b = np.empty(_n)
    for _k in range(_n[0]):
        b[_k] = a[_k]
{middle}
    for _k in range(_n[0]):
        b[_k] = b[_k] + 1.0
{after}
    return b
"""


def _coalesced(middle="", after=""):
    source = _COPY.format(middle=middle or "    c = 0.0", after=after or "    d = 0.0")
    func = gast.parse(source).body[0]
    kinds = K.infer(func, {"a0": ("arr", 1, "f"), "n": K.I})
    coalesce(func, kinds)
    return gast.unparse(func) if hasattr(gast, "unparse") else \
        __import__("ast").unparse(gast.gast_to_ast(func))


def test_a_copy_whose_source_is_dead_takes_its_array():
    assert "b = a\n" in _coalesced("    c = a[0] * 2.0")


def test_a_source_read_after_the_first_write_keeps_the_copy():
    assert "np.empty" in _coalesced(after="    d = a[1]")


def test_a_source_written_before_the_first_write_keeps_the_copy():
    assert "np.empty" in _coalesced("    a[0] = 5.0")


def test_a_view_of_the_source_kept_alive_keeps_the_copy():
    assert "np.empty" in _coalesced("    v = a[1:]", after="    d = v[0]")


def test_a_parameter_is_never_taken():
    source = _COPY.replace("    a = a0 * 2.0\n", "    a = a0\n")
    func = gast.parse(source.format(middle="    c = 0.0", after="    d = 0.0")).body[0]
    coalesce(func, K.infer(func, {"a0": ("arr", 1, "f"), "n": K.I}))
    assert any(isinstance(n, gast.Call) and getattr(n.func, "attr", "") == "empty"
               for n in gast.walk(func))


@pytest.mark.parametrize("alias", ["np.ascontiguousarray(a)", "np.array(a, copy=False)",
                                   "np.split(a, 1)[0]"])
def test_a_view_made_by_numpy_keeps_the_copy(alias):
    """Found by a review: these may return a's own memory (analysis/roots.py)."""
    assert "np.empty" in _coalesced(f"    v = {alias}", after="    d = v[0]")
