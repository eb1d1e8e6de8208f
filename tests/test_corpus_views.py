"""Views of an array the function writes into later (frontend/expressions.py).

`x.T`, `np.transpose(x)`, `x.reshape(...)`, `np.ravel(x)` may share memory with `x`. When the
function writes into `x` after taking such a view, the backward sweep must still see the
values the view had when it was read: it is kept as a snapshot, as `x[i]` already was. The
fuzzer (seed 51, program 2318) found an all-NaN gradient: `np.min(x.T)` in a loop that writes
`x[i, i]`, with `x` rebound after the loop, left the min rule finding no element equal to the
recorded minimum (its tie share divided by zero). Also here: a slice of a list, whose
adjoint was added with `+=`, which joins lists (the issue 13 helper found `xs[0:2]` giving
zeros). Each function is checked against central finite differences and autograd, numba on
and off.
"""

import numpy as np
import pytest

from gradcheck import check_gradient


def min_of_transpose_then_written(x, y):
    for i in range(2):
        x[i, i] = max(np.max(np.outer(x[i % 2, :], y)), np.min(x.T))
    x = np.cos(x * x)
    return np.max(x)


def max_of_reshaped_then_written(x, y):
    for i in range(2):
        x[i, 1 - i] = np.max(x.reshape(4)) * y[i]
    x = np.sin(x) * 2.0
    return np.sum(x * x)


def ravelled_then_written(x, y):
    total = 0.0
    for i in range(2):
        total += np.max(np.ravel(x) * y[1])
        x[i, 0] = x[i, 1] * y[0]
    x = x * 1.5
    return total + np.sum(x)


def list_slice_read(x, y):
    xs = [x[0, 0], x[0, 1], x[1, 0] * y[0]]
    v = xs[0:2]
    return v[0] * v[1] + xs[2]


def list_slice_of_arrays(x, y):
    rows = [x[0] * 1.0, x[1] * y, np.sin(x[0])]
    tail = rows[1:]
    return np.sum(tail[0] * tail[1]) + np.sum(rows[0] ** 2)


def _args():
    x = np.array([[-0.5088445208189494, 1.346808227370163],
                  [0.5806836315197437, -0.867466386940465]])
    return x, np.array([0.4879498387365193, -1.3067607665169558])


CASES = [min_of_transpose_then_written, max_of_reshaped_then_written, ravelled_then_written,
         list_slice_read, list_slice_of_arrays]


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func", CASES)
def test_gradient(func, jit):
    check_gradient(func, _args(), wrt=0, jit=jit)
