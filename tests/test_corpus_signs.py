"""Negated contributions subtracted (transforms/signs.py): `T += unbroadcast(-E, t)` becomes
`T -= unbroadcast(E, t)`, `v = L + unbroadcast(-E, t)` becomes `v = L - ...`, and a
negation inside a product read once by `v = -w` cancels.

Each function is checked against central finite differences and autograd, numba on and
off: a difference of a slice and a point inside a loop (ba's `X - cam[3:6]`), a scalar
minus an array (the contribution is summed), a sigmoid in a recurrence (its backward
code negates twice: lstm's gates), a quotient with a negated operand, and a subtraction
carried across iterations; the generated code is checked to use the subtracted forms.
"""

import numpy as np
import pytest

import srcgrad
from gradcheck import check_corpus_case


def point_minus_slice(x, w):
    total = 0.0
    for i in range(x.shape[0]):
        d = x[i] - w[0, 0:3]
        total += np.sum(np.sin(d) * w[1])
    return total


def scalar_minus_array(x, w):
    return np.sum(np.tanh(w[0, 0] - x * w[1, 1]))


def sigmoid_recurrence(x, w):
    h = x[0]
    for i in range(1, x.shape[0]):
        h = 1.0 / (1.0 + np.exp(-(h * w[0] + x[i])))
    return np.sum(h * w[2])


def negated_quotient(x, w):
    q = -x[0] / (w[0] + 2.0)
    return np.sum(q * x[1]) - np.sum(x[2] / -(w[1] * w[1] + 1.0))


def carried_difference(x, w):
    y = x[0]
    for i in range(1, x.shape[0]):
        y = np.cos(y - x[i] * w[0])
    return np.sum(y)


def _args():
    rng = np.random.default_rng(11)
    return rng.normal(size=(5, 3)), rng.normal(size=(3, 3)) * 0.5


CASES = [point_minus_slice, scalar_minus_array, sigmoid_recurrence, negated_quotient,
         carried_difference]


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func", CASES)
def test_gradient(func, jit):
    check_corpus_case(func, _args, (0, 1), jit)


def test_negated_contributions_are_subtracted():
    source = srcgrad.grad(point_minus_slice, wrt=(0, 1)).source
    assert "_adj_w[0, 0:3] -= " in source or "] -= unbroadcast(" in source, source
    assert "+= unbroadcast(-" not in source
    sigmoid = srcgrad.grad(sigmoid_recurrence, wrt=(0, 1)).source
    assert "= -_adj_" not in sigmoid, sigmoid
