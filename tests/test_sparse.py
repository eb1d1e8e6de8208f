"""sparse=True: the detected pattern never misses a nonzero, and the colored products give
the dense derivative.

Checked against srcgrad's dense jacfwd/hessian (themselves checked against finite
differences elsewhere) on a looped stencil, a sliced stencil, a function whose branches
depend on the argument (both sides of the branch), a reduction coupling every input, a
kmeans-like cost and the loop corpus; numba on and off for the stencil.
"""
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse

import srcgrad

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.second_order import stencil  # noqa: E402
from test_hvp import _array_cases  # noqa: E402


def sliced(u):
    return np.concatenate([u[:1], u[:-2] - 2.0 * u[1:-1] + u[2:] + u[1:-1] ** 3, u[-1:]])


def branchy(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        if x[i] > 0:
            s = s + x[i] * x[i + 1] ** 2
        else:
            s = s + x[i] ** 3
    return s


def coupled(x):
    return np.sin(x) * np.sum(x)


def kmeans_cost(c, points):
    d = np.sum((points[:, None, :] - c[None, :, :]) ** 2, axis=2)
    return np.sum(np.min(d, axis=1))


U = np.random.default_rng(0).normal(size=9)


def _same(sparse, dense):
    assert scipy.sparse.issparse(sparse)
    np.testing.assert_allclose(sparse.toarray(), dense.reshape(sparse.shape), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_stencil_jacobian_in_three_products(jit):
    dense = srcgrad.jacfwd(stencil, jit=jit)(U, 0.1)
    for make in (srcgrad.jacfwd, srcgrad.jacrev):
        j = make(stencil, sparse=True, jit=jit)(U, 0.1)
        _same(j, dense)
        assert j.srcgrad_products == 3 and j.nnz == 3 * 9 - 4


def test_patterns_are_sound():
    _same(srcgrad.jacfwd(sliced, sparse=True, jit=False)(U), srcgrad.jacfwd(sliced, jit=False)(U))
    for x in (U, np.abs(U), -np.abs(U)):  # the pattern is that of the branches x takes
        h = srcgrad.hessian(branchy, sparse=True, jit=False)(x)
        _same(h, srcgrad.hessian(branchy, jit=False)(x))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        j = srcgrad.jacrev(coupled, sparse=True, jit=False)(U)
    _same(j, srcgrad.jacrev(coupled, jit=False)(U))
    assert j.srcgrad_products == 9
    assert any("sparse=True gains nothing for coupled" in str(w.message) for w in caught)


def test_kmeans_hessian_is_diagonal_in_one_product():
    rng = np.random.default_rng(1)
    points = rng.normal(size=(30, 2))
    c = points[-3:].copy()
    h = srcgrad.hessian(kmeans_cost, sparse=True, jit=False)(c, points)
    assert h.srcgrad_products == 1 and h.nnz == 6
    _same(h, srcgrad.hessian(kmeans_cost, jit=False)(c, points))


@pytest.mark.parametrize("func, make", _array_cases())
def test_sparse_hessian_on_the_loop_corpus(func, make):
    args = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", srcgrad.SrcgradWarning)
        h = srcgrad.hessian(func, sparse=True, jit=False)(*args)
    _same(h, srcgrad.hessian(func, jit=False)(*args))
