"""A gradient goes to worker processes the ways users send it: `multiprocessing.Pool` (spawn)
and `joblib.Parallel` (loky), one shard of data per task (api/pickling.py carries the source
and generated module, so the workers need not import this file's functions by name). The
summed shard gradients equal the gradient of the whole loss computed here."""
import multiprocessing

import numpy as np
import pytest

import srcgrad


def shard_loss(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return np.sum((p - y) ** 2)


def _data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    return np.array([0.3, -0.2, 0.5]), X, (X[:, 0] > 0).astype(float)


def _shards(X, y, k=4):
    return list(zip(np.array_split(X, k), np.array_split(y, k)))


def test_multiprocessing_pool_sums_to_the_whole_gradient():
    g = srcgrad.grad(shard_loss, jit=False)
    w, X, y = _data()
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        parts = pool.starmap(g, [(w, Xs, ys) for Xs, ys in _shards(X, y)])
    np.testing.assert_allclose(sum(parts), g(w, X, y), rtol=1e-12, atol=1e-14)


def test_joblib_parallel_sums_to_the_whole_gradient():
    joblib = pytest.importorskip("joblib", reason="joblib is not installed (the test extra has it)")
    g = srcgrad.value_and_grad(shard_loss, jit=False)
    w, X, y = _data()
    parts = joblib.Parallel(n_jobs=2, backend="loky")(
        joblib.delayed(g)(w, Xs, ys) for Xs, ys in _shards(X, y))
    value, grad = g(w, X, y)
    assert abs(sum(v for v, _ in parts) - value) < 1e-12 * max(1.0, abs(value))
    np.testing.assert_allclose(sum(d for _, d in parts), grad, rtol=1e-12, atol=1e-14)
