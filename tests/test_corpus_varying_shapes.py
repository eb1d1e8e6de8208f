"""Loops whose values change shape between iterations (analysis/shape_classes.py).

The backward sweep reads some values only for their shape (`unbroadcast(g, t)`). A name whose
shape changes from one iteration to the next must be recorded or recomputed for those reads
too: it used to be read with the last iteration's shape, a silent wrong gradient (found by the
issue 13 helper: `m[j:] = 2.0 * x[j:]` inside `for j`). Every function is checked against
central finite differences and autograd, numba on and off; values recorded with changing
shapes go on stacks, which were refused before ("a value it records changes shape").
"""

import numpy as np
import pytest

from gradcheck import check_gradient


def slices_of_the_loop_variable(x, n):
    total = 0.0
    for j in range(1, n):
        m = x * 1.5
        m[:j] = x[:j] * 3.0
        m[j:] = 2.0 * x[j:]
        total += np.sum(m * m)
    return total


def growing_prefix_through_sin(x, n):
    total = 0.0
    for j in range(1, n):
        t = np.sin(x[:j])
        total += np.sum(t * t)
    return total


def scratch_sized_by_the_loop(x, n):
    total = 0.0
    for j in range(1, n):
        m = np.zeros(j)
        m[:] = x[:j] * 2.0
        total += np.sum(m * x[:j])
    return total


def carried_and_shrinking(x, n):
    y = x * 1.0
    for j in range(n):
        y = y[1:] * 0.9 + 0.1
    return np.sum(y * y)


def shape_chosen_by_a_branch(x, n):
    total = 0.0
    for j in range(n):
        if j % 2 == 0:
            t = x[:2] * 2.0
        else:
            t = x * 3.0
        total += np.sum(t * t)
    return total


def suffix_times_weights(x, w, n):
    total = 0.0
    for j in range(n):
        t = x[j:] * w[j]
        total += np.sum(np.tanh(t))
    return total


def _x():
    return np.array([0.3, -0.7, 1.1, 0.4, -0.2])


CASES = [
    (slices_of_the_loop_variable, lambda: (_x(), 5), 0),
    (growing_prefix_through_sin, lambda: (_x(), 5), 0),
    (scratch_sized_by_the_loop, lambda: (_x(), 5), 0),
    (carried_and_shrinking, lambda: (_x(), 3), 0),
    (shape_chosen_by_a_branch, lambda: (_x(), 5), 0),
    (suffix_times_weights, lambda: (_x(), np.array([0.5, -0.4, 0.9, 1.2, 0.1]), 4), (0, 1)),
]


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func, make_args, wrt", CASES)
def test_gradient(func, make_args, wrt, jit):
    check_gradient(func, make_args(), wrt=wrt, jit=jit)


def broadcast_in_the_first_iteration(a, v):
    y = a
    for i in range(3):
        y = y * 0.5 + v
    return np.sum(y * y)


def test_a_carried_value_broadcast_by_the_loop_is_a_clear_error():
    """The caveat shape_classes.py states: a value that takes its loop shape only in the first
    iteration is not followed; the mismatch is caught and named, not a crash."""
    import srcgrad

    with pytest.raises(srcgrad.SrcgradError, match=r"argument 'a' of shape \(\).*np.zeros_like"):
        srcgrad.grad(broadcast_in_the_first_iteration, jit=False)(0.7, _x())
