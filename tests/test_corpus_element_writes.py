"""Element writes in counted loops: the backward code of `z[i] = e` inside `for i in
range(...)` reads `_adj_z[i]` and resets it (docs/design.md, "Dead element resets in
counted loops": dropping the resets was built, measured and not kept).

Each function is checked against central finite differences and autograd, numba on and
off: ode's stage (`z[i] = x[i] * y[i - 1]` in a step loop), a slot written before the
loop and again inside it (the earlier write's backward code reads the reset slot), rows
of a matrix, a loop written descending, and a write read back in the same iteration.
"""

import numpy as np
import pytest

from gradcheck import check_corpus_case


def stage_in_steps(x, w):
    y = x * w[0]
    for step in range(3):
        z = np.empty(x.shape[0])
        z[0] = x[0]
        for i in range(1, x.shape[0]):
            z[i] = x[i] * y[i - 1]
        y = y + 0.1 * z
    return np.sum(y * y)


def slot_written_before_the_loop(x, w):
    z = np.zeros(x.shape[0])
    z[1] = x[0] * w[1]
    for i in range(1, x.shape[0]):
        z[i] = np.sin(x[i] * w[0])
    return np.sum(z * x)


def rows_of_a_matrix(x, w):
    m = np.zeros((x.shape[0], 2))
    for i in range(x.shape[0]):
        m[i] = w * x[i]
    return np.sum(np.tanh(m))


def written_descending(x, w):
    z = np.zeros(x.shape[0])
    for i in range(x.shape[0] - 1, -1, -1):
        z[i] = x[i] * w[0] + w[1]
    return np.sum(z * z)


def read_back_in_the_iteration(x, w):
    z = np.zeros(x.shape[0])
    s = 0.0
    for i in range(x.shape[0]):
        z[i] = x[i] * w[0]
        s = s + z[i] * z[i]
    return s + np.sum(z)


def _args():
    rng = np.random.default_rng(5)
    return rng.normal(size=5), rng.normal(size=2) * 0.5


CASES = [stage_in_steps, slot_written_before_the_loop, rows_of_a_matrix, written_descending,
         read_back_in_the_iteration]


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func", CASES)
def test_gradient(func, jit):
    check_corpus_case(func, _args, (0, 1), jit)
