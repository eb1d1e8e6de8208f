"""Cotangents of matrix-vector products added into their adjoints element by element in
the compiled form (transforms/products.py): the same values as the generated function's
`_adj_W += np.outer(g, h)`, to the last bit, and central differences agree; with numba
off (the generated function in Python) too."""

import numpy as np
import pytest

from gradcheck import assert_close, assert_form_agrees, form_code, numerical_grad


def rnn(W, h0, xs):
    """W @ h: W's adjoint gains outer(g, h) at every step."""
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h * h)


def rnn_left(W, h0, xs):
    """h @ W: W's adjoint gains outer(h, g)."""
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h)


def dots(w, xs):
    """xs[t] @ w, a dot product: w's adjoint gains g * xs[t]."""
    total = 0.0
    for t in range(xs.shape[0]):
        total += np.tanh(xs[t] @ w)
    return total


def dots_left(w, xs):
    """w @ xs[t]: the same from the left operand."""
    total = 0.0
    for t in range(xs.shape[0]):
        total += np.sin(w @ xs[t]) * (w @ w)
    return total


RNG = np.random.default_rng(5)
W, H0, XS = RNG.normal(size=(4, 4)) * 0.4, RNG.normal(size=4), RNG.normal(size=(6, 4))
CASES = [
    (rnn, (W, H0, XS), "_adj_W[_k, _j] += "),
    (rnn_left, (W, H0, XS), "_adj_W[_k, _j] "),
    (dots, (H0, XS), "_adj_w[_k] "),
    (dots_left, (H0, XS), "_adj_w[_k] "),
]


@pytest.mark.parametrize("func, args, added", CASES, ids=[c[0].__name__ for c in CASES])
def test_products_added_in_place_agree(func, args, added):
    code = form_code(func, 0, args)
    assert any(line.strip().startswith(added) for line in code.splitlines()), code
    assert_form_agrees(func, args, exact=True)


def test_the_state_still_flows_back():
    """The adjoint of h0 comes through matmul_rhs_grad (a matrix-vector product, BLAS):
    not rewritten, and right."""
    code = form_code(rnn, 1, (W, H0, XS))
    assert "matmul_rhs_grad(" in code
    assert_form_agrees(rnn, (W, H0, XS), wrt=1, exact=True)


@pytest.mark.parametrize("func, args, added", CASES, ids=[c[0].__name__ for c in CASES])
def test_python_gradient_agrees(func, args, added):
    import srcgrad
    g = srcgrad.grad(func, wrt=0, jit=False)
    assert_close(g(*args), numerical_grad(func, args, 0), rtol=1e-5, atol=1e-7)
