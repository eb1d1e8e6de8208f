"""Arrays the compiled form records right after filling them, filled in their tape's row
(transforms/tape_rows.py).

Each function runs its compiled form (SRCGRAD_LOOPS=strict, conftest.py) and is checked
against the gradient of the generated function itself (to 1e-13), against central
differences and against autograd; the form's text shows which arrays were filled in
their rows and which kept their copy: one written after its record."""

import re

import numpy as np
import pytest

from gradcheck import assert_form_agrees, form_code


def written_after(x, s):
    """`b` is recorded as made; `a` is written after its record and keeps its copy."""
    y = np.zeros(x.shape[0]) + 0.1
    for step in range(s):
        a = y + 0.5 * x
        b = np.sin(a) * a
        a[0] = 2.0
        y = y + 0.3 * b * a
    return np.sum(y * y)


def aliased_before(x, s):
    """`c`, an alias of the loop's array, is written before the record: in the row."""
    y = np.zeros(x.shape[0]) + 0.1
    for step in range(s):
        a = y + 0.5 * x
        b = np.sin(a) * a
        c = a
        c[1] = 3.0
        y = y + 0.3 * b * c
    return np.sum(y * y)


def aliased_after(x, s):
    """An alias of `b`, written after `b` is read: recorded where it was last written."""
    y = np.zeros(x.shape[0]) + 0.1
    for step in range(s):
        a = y + 0.5 * x
        b = np.sin(a) * a
        c = b
        y = y + 0.3 * b * a
        c[2] = 1.5
        y = y * c
    return np.sum(y * y)


X = np.linspace(0.1, 0.9, 5)
CASES = [written_after, aliased_before, aliased_after]


@pytest.mark.parametrize("func", CASES, ids=[c.__name__ for c in CASES])
def test_the_form_agrees(func):
    assert_form_agrees(func, (X, 3), 0, oracle=True)


def test_a_recorded_array_is_filled_in_its_row():
    code = form_code(written_after, 0, (X, 3))
    # b is bound to its row and filled there (the row's same_shape is implied: dropped)
    assert re.search(r"\n\s+b = _tape_b\[step\]\n(?:.*\n){0,12}?\s+b\[_k\] = b__e", code), code
    assert "record_at(_tape_b," not in code


def test_an_array_written_after_its_record_keeps_its_copy():
    assert "record_at(_tape_a, step, a)" in form_code(written_after, 0, (X, 3))

