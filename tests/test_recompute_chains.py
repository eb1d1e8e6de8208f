"""Chains of cheap temporaries (transforms/recompute.py): a temporary is recomputed in the
backward sweep when its operands hold their forward values up to its last use, counted
through the later temporaries recomputed from it. The candidates of a block are decided
from the last to the first, so one that fails (its operand is rebound at the end of the
chain) does not take earlier ones with it.

Each function is checked against central finite differences, numba on and off; the
generated code shows which temporaries were taped."""
import numpy as np
import pytest

import srcgrad
from bench.problems.det import det  # recursive, by minors (the bench's det)
from gradcheck import check_gradient


def euler(y0, k, n, dt):
    y = y0
    for i in range(n):
        y = y + dt * (-k * y * y + np.sin(y))
    return y


def rebound_mid_chain(x, n):
    """`_t1 = y + 1.0` feeds `y = np.sin(_t1 * x)`: y is rebound before the backward
    sweep reads _t1's user, so _t1 must be taped, not recomputed."""
    y = x
    for i in range(n):
        y = np.sin((y + 1.0) * x) + 0.5 * y
    return np.sum(y)


def power_sum(x, k):
    """A recursive call's value, read again by the backward sweep (through `linked`)."""
    if k == 0:
        return np.sum(x)
    total = 0.0
    for j in range(2):
        v = power_sum(x * (1.0 + 0.1 * j), k - 1)
        total = total + v * v * x[j] + np.sin(v)
    return total


def arrays_carried(x, w, n):
    y = x.copy()
    for i in range(n):
        y = y + 0.1 * (-w * y * y + np.cos(y))
    return np.sum(y * w)


CASES = [
    (euler, (0.5, 0.3, 40, 0.05), (0, 1)),
    (rebound_mid_chain, (np.linspace(0.1, 0.9, 5), 6), 0),
    (arrays_carried, (np.linspace(0.1, 0.9, 5), np.linspace(1.0, 0.5, 5), 7), (0, 1)),
    (power_sum, (np.array([0.3, -0.2, 0.5]), 2), 0),
    (det, (np.array([[2.0, 0.5, -1.0, 0.3], [0.4, 1.5, 0.2, -0.7], [1.1, -0.3, 0.9, 0.2],
                     [0.1, 0.8, -0.5, 1.2]]),), 0),
]


@pytest.mark.parametrize("jit", [True, False])
@pytest.mark.parametrize("func, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradient(func, args, wrt, jit):
    check_gradient(func, args, wrt, jit=jit)


def test_only_the_carried_value_is_taped():
    source = srcgrad.grad(euler, wrt=(0, 1), jit=False).source
    assert "_tape_y" in source
    assert [line for line in source.splitlines()
            if "tape_like(" in line or ".append(" in line] == []


@pytest.mark.parametrize("func", [power_sum, det])
def test_a_recursive_value_is_read_from_its_call_record(func):
    """`v = linked(value, partial, arg)` is `value`: the backward sweep takes it from the
    recorded (value, partials) of the call instead of a tape of its own."""
    source = srcgrad.grad(func, jit=False).source
    values = [line.split("=")[0].strip() for line in source.splitlines()
              if " = linked(" in line]
    assert values
    assert [v for v in values if f"_tape_{v}" in source] == []
