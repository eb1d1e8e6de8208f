"""Fit a logistic regression on data spread over a Dask cluster with srcgrad.dask.

    pip install -e ".[dask]" && python examples/distributed_fit.py [--rows 20000000]

Starts a LocalCluster of 2 worker processes, each allowed less memory than the whole
dataset, and makes the data on the workers in chunks, so no process holds all of it.
L-BFGS (scipy.optimize.minimize with jac=True) then fits the model with
`srcgrad.dask.value_and_grad(loss, w, X, y)`: every chunk's value and gradient is
computed by srcgrad's compiled gradient on the worker that holds the chunk, and the
partial sums are added on the workers. It prints the loss and the time per gradient
at each iteration, then fits the same data in this one process for comparison.
"""
import argparse
import time

import dask
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster
from scipy.optimize import minimize

import srcgrad
import srcgrad.dask


def loss(w, X, y):
    """The negative log-likelihood of labels y under a logistic model with weights w."""
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z)


def labels(X, truth, block_info=None):
    """Labels for the rows of one block of X under a logistic model with weights `truth`,
    drawn from a random stream of the block's own (made where the block is)."""
    u = np.random.default_rng([0, block_info[0]["chunk-location"][0]]).random(X.shape[0])
    return (u < 1.0 / (1.0 + np.exp(-X @ truth))).astype(np.float64)


def fit(value_and_grad, w0, title):
    """L-BFGS from w0, printing the loss and the time per gradient at each iteration."""
    seconds, last, iterations = [], [None], [0]

    def objective(w):
        start = time.perf_counter()
        value, grad = value_and_grad(w)
        seconds.append(time.perf_counter() - start)
        last[0] = value
        return value, grad

    def report(w):
        iterations[0] += 1
        print(f"  {title:12} iteration {iterations[0]:2}: loss {last[0]:.10e}, "
              f"{np.mean(seconds) * 1e3:7.1f} ms per gradient ({len(seconds)} gradients)")
        seconds.clear()
    start = time.perf_counter()
    result = minimize(objective, w0, jac=True, method="L-BFGS-B", callback=report,
                      options={"maxiter": 15})
    print(f"  {title}: {result.nit} iterations, {result.nfev} gradients, "
          f"{time.perf_counter() - start:.1f} s in all, loss {result.fun:.10e}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--features", type=int, default=8)
    opts = parser.parse_args()
    n, d = opts.rows, opts.features
    data_bytes = n * (d + 1) * 8
    # Per worker: less than the data (at the default size), enough for its half and itself.
    limit = max(int(0.9 * data_bytes), data_bytes // 2 + 600 * 2**20)
    # The data stays in the workers' memory: no spilling to disk at 60-70% of the limit.
    # And the workers keep glibc's adaptive malloc thresholds, as this process does (the
    # nanny's default MALLOC_TRIM_THRESHOLD_ fixes them, and large temporaries are then
    # mapped afresh at each allocation).
    with dask.config.set({"distributed.worker.memory.target": False,
                          "distributed.worker.memory.spill": False,
                          "distributed.worker.memory.pause": 0.95,
                          "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         memory_limit=limit, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        print(f"{n:,} rows x {d} features: {data_bytes / 2**30:.2f} GiB of data on 2 worker "
              f"processes with a memory limit of {limit / 2**30:.2f} GiB each")
        X = da.random.default_rng(0).standard_normal((n, d), chunks=(1_000_000, d))
        truth = np.linspace(-1.0, 1.0, d)
        y = X.map_blocks(labels, truth, drop_axis=1, dtype=np.float64)
        X, y = client.persist([X, y])
        w0 = np.zeros(d)
        distributed = fit(lambda w: srcgrad.dask.value_and_grad(loss, w, X, y), w0,
                          "srcgrad.dask")
        for worker, times in sorted(srcgrad.dask.worker_times(client).items()):
            print(f"  worker {worker}: first call (numba compiles) {times['first_calls_s']:.2f} s,"
                  f" {times['calls'] - 1} other calls {times['compute_s']:.2f} s")
        # The same data in this process, brought chunk by chunk (no worker could join them).
        Xl, yl = (np.concatenate(client.gather(client.compute(list(a.to_delayed().ravel()))))
                  for a in (X, y))
    local = srcgrad.value_and_grad(loss)
    single = fit(lambda w: local(w, Xl, yl), w0, "one process")
    print(f"largest difference between the two fits' weights: "
          f"{np.max(np.abs(distributed.x - single.x)):.2e}; true weights {truth.round(2)}, "
          f"fitted {distributed.x.round(2)}")


if __name__ == "__main__":
    main()
