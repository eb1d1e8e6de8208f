"""Sums of squares (transforms/squares.py): the cotangent of `np.sum(u * u)` stays a number,
and the two contributions of `u * u` to u are one, `2.0 * E`.

Each function is checked against central finite differences and autograd, numba on and
off, and the generated code is checked to drop the filled array (`expand_to`) exactly
where the rule holds: `u * u` of one name; not `u * v`, not a sum along an axis.
"""

import numpy as np
import pytest

import srcgrad
from gradcheck import check_corpus_case


def squares_in_a_loop(x, w):
    total = 0.0
    for i in range(x.shape[0]):
        r = np.tanh(x[i] * w[0]) - w[1]
        total += 0.5 * np.sum(r * r)
    return total


def least_squares(x, w):
    r = x @ w[0] - w[1, 0]
    return np.sum(r * r) + 0.1 * np.sum(w * w)


def pairwise_squares(x, w):
    d = x[:, None, 0] - w[None, :, 1]  # broadcast to (5, 3) before squaring
    return np.sum(d * d)


def scalar_square(x, w):
    s = np.sum(x) * w[0, 0]
    return np.sum(s * s) + s


def product_not_square(x, w):
    u = np.sin(x[0])
    v = np.cos(x[1])
    return np.sum(u * v) + np.sum(np.sum(u * u, axis=0))


def _args():
    rng = np.random.default_rng(7)
    return rng.normal(size=(5, 3)), rng.normal(size=(3, 3)) * 0.5


CASES = [squares_in_a_loop, least_squares, pairwise_squares, scalar_square, product_not_square]


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func", CASES)
def test_gradient(func, jit):
    check_corpus_case(func, _args, (0, 1), jit)


def test_filled_array_dropped_only_for_one_name_squared():
    for func in (squares_in_a_loop, least_squares, pairwise_squares):
        assert "expand_to" not in srcgrad.grad(func, wrt=(0, 1)).source, func.__name__
    assert "expand_to" in srcgrad.grad(product_not_square, wrt=(0, 1)).source


def test_two_contributions_of_a_square_are_one():
    source = srcgrad.grad(squares_in_a_loop, wrt=(0, 1)).source
    assert "_adj_r = 2.0 * unbroadcast(" in source
    assert "_adj_r = _adj_r + " not in source
