"""Elementwise updates the compiled form writes into the array they replace
(transforms/in_place.py): the backward sweep's `_adj_y = _adj_y + ...` of an RK step.

Each function runs its compiled form (SRCGRAD_LOOPS=strict, conftest.py) and is checked
against the gradient of the generated function itself (to 1e-13), against central
differences and against autograd; the form's text shows the update written in place."""

import re

import numpy as np
import pytest

from gradcheck import assert_form_agrees, form_code
from test_compiled_forms import _shifted as rhs  # GradBench ode's right-hand side


def rk2(x, s):
    """Each stage's adjoint is added into `_adj_y` after its element loop."""
    y = np.zeros(x.shape[0]) + 0.1
    for step in range(s):
        k1 = rhs(x, y)
        k2 = rhs(x, y + 0.5 * k1)
        y = y + 0.25 * (k1 + k2)
    return np.sum(y * y)


def rk2_kept(x, s):
    """The state before the step is also returned through `first`, kept from step 0."""
    y = np.zeros(x.shape[0]) + 0.1
    first = y
    for step in range(s):
        k1 = rhs(x, y)
        k2 = rhs(x, y + 0.5 * k1)
        y = y + 0.25 * (k1 + k2)
        if step == 0:
            first = y
    return np.sum(y * y) + np.sum(np.sin(first))


def reversed_view(x):
    """`y + v` with `v` a reversed view of y: the update must not overwrite y's elements
    before v reads them (the `if`s keep `v` and the update apart from other statements)."""
    y = x * 1.5
    for step in range(2):
        v = y[::-1]
        if x[0] > 100.0:
            v = v * 2.0
        y = y + v
        if x[1] > 100.0:
            y = y * 3.0
    return np.sum(y * x)


X = np.linspace(0.2, 0.9, 6)
CASES = [rk2, rk2_kept, reversed_view]


@pytest.mark.parametrize("func", CASES, ids=[c.__name__ for c in CASES])
def test_the_form_agrees(func):
    args = (X,) if func is reversed_view else (X, 3)
    assert_form_agrees(func, args, 0, oracle=True)


def test_a_stage_adjoint_is_added_in_place():
    code = form_code(rk2, 0, (X, 3))
    assert re.search(r"\n\s+_adj_y\[_k\] = _adj_y__e\d+\n", code), code
    assert "__adj_y_a" not in code
