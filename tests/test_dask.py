"""srcgrad.dask on a real `distributed.LocalCluster` of two worker processes (one thread
each, started once for the module): the value and gradient summed over shards given as
a chunked dask array, a list of delayed shards and a dask bag equal the single-process
ones to 1e-10; scipy.optimize.minimize(jac=True) reaches the same optimum; each worker
builds and compiles the gradient once; bad data is refused with a clear error.
"""
import numpy as np
import pytest

distributed = pytest.importorskip(
    "distributed", reason="srcgrad.dask needs the [dask] extra (dask and distributed)")
dask = pytest.importorskip("dask", reason="srcgrad.dask needs the [dask] extra")
import dask.array as da  # noqa: E402
import dask.bag as db  # noqa: E402
from scipy.optimize import minimize  # noqa: E402

import srcgrad  # noqa: E402
import srcgrad.dask  # noqa: E402
from gradcheck import numerical_grad  # noqa: E402

RNG = np.random.default_rng(19)
X = RNG.normal(size=(2000, 4))
Y = (RNG.random(2000) < 1.0 / (1.0 + np.exp(-X @ np.array([1.0, -2.0, 0.5, 0.0])))).astype(float)
W = np.array([0.2, -0.1, 0.3, 0.05])


def logistic(w, X, y):
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z)


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def expected():
    value, grad = srcgrad.value_and_grad(logistic)(W, X, Y)
    np.testing.assert_allclose(grad, numerical_grad(logistic, (W, X, Y), 0), rtol=1e-6)
    return value, grad


def _close(got, expected):
    assert isinstance(got[0], float) and got[1].shape == W.shape
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-10, atol=0)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-10, atol=1e-10)


def test_a_chunked_dask_array(client, expected):
    Xd, yd = da.from_array(X, chunks=(300, 2)), da.from_array(Y, chunks=300)
    _close(srcgrad.dask.value_and_grad(logistic, W, Xd, yd), expected)
    _close(srcgrad.dask.value_and_grad(logistic, W, Xd, yd, split_every=2), expected)


def test_delayed_shards_and_a_bag(client, expected):
    parts = [(X[k:k + 250], Y[k:k + 250]) for k in range(0, 2000, 250)]
    shards = [dask.delayed(p) for p in parts]
    _close(srcgrad.dask.value_and_grad(logistic, W, shards), expected)
    bag = db.from_sequence(parts, npartitions=3)
    _close(srcgrad.dask.value_and_grad(logistic, W, bag), expected)


def test_minimize_with_the_distributed_gradient(client):
    Xd, yd = client.persist([da.from_array(X, chunks=500), da.from_array(Y, chunks=500)])
    fit = minimize(lambda w: srcgrad.dask.value_and_grad(logistic, w, Xd, yd), W, jac=True,
                   method="L-BFGS-B")
    local = minimize(srcgrad.value_and_grad(logistic), W, args=(X, Y), jac=True,
                     method="L-BFGS-B")
    assert fit.success and fit.nit > 2
    np.testing.assert_allclose(fit.x, local.x, rtol=1e-6, atol=1e-8)


def test_each_worker_compiles_once(client, expected):
    Xd, yd = da.from_array(X, chunks=200), da.from_array(Y, chunks=200)
    for _ in range(2):
        srcgrad.dask.value_and_grad(logistic, W, Xd, yd)
    times = srcgrad.dask.worker_times(client)
    assert len(times) == 2
    for report in times.values():
        assert report["gradients"] == 1  # one gradient object, built and compiled once
        assert report["calls"] > report["gradients"]
        assert report["first_calls_s"] > 0 and report["compute_s"] > 0


def test_bad_data_is_refused(client):
    with pytest.raises(ValueError, match="same chunks along axis 0"):
        srcgrad.dask.value_and_grad(logistic, W, da.from_array(X, chunks=500),
                                    da.from_array(Y, chunks=400))
    with pytest.raises(TypeError, match="dask arrays, a list of dask.delayed shards"):
        srcgrad.dask.value_and_grad(logistic, W, X, Y)
    with pytest.raises(TypeError, match="give the data"):
        srcgrad.dask.value_and_grad(logistic, W)
