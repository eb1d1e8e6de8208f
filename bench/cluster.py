"""srcgrad.dask against one process: the gradient of a logistic loss on 10^7 rows (issue 19).

    python bench/cluster.py [--rows 10000000] [--features 8] [--repeat 7]

Starts a `distributed.LocalCluster` of 2 worker processes with 1 thread each and
keeps the data (float64, chunked along the rows) in their memory. One gradient is
`srcgrad.dask.value_and_grad(logistic, w, X, y)`: each chunk's value and gradient
computed where it lives by srcgrad's compiled gradient, summed in a tree. The
baseline is `srcgrad.value_and_grad(logistic)(w, X, y)` in this process on the same
data, one BLAS thread as on the workers (distributed sets the same for its workers).
Runs are interleaved and medians taken. Also measured: the round trip alone, the same
call on 2 chunks of 100 rows (pickling the gradient, building the graph, scheduling,
one task per chunk and the sum), and the workers' compile and compute times.
Prints one table; nothing is written. Not part of `python -m bench` (it needs the
[dask] extra and most of the machine).
"""
import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import srcgrad  # noqa: E402
import srcgrad.dask  # noqa: E402
from bench.report import fmt_ratio, fmt_time  # noqa: E402


def logistic(w, X, y):
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z)


def labels(X, truth, block_info=None):
    """Labels of the rows of one block of X under a logistic model, drawn from a random
    stream of the block's own: computed where the block is."""
    u = np.random.default_rng([19, block_info[0]["chunk-location"][0]]).random(X.shape[0])
    return (u < 1.0 / (1.0 + np.exp(-X @ truth))).astype(np.float64)


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main():
    import dask.array as da
    from distributed import Client, LocalCluster

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--features", type=int, default=8)
    parser.add_argument("--chunks", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=7)
    opts = parser.parse_args()
    n, d = opts.rows, opts.features
    w = np.linspace(-0.5, 0.5, d)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        X = da.random.default_rng(19).standard_normal((n, d), chunks=(-(-n // opts.chunks), d))
        y = X.map_blocks(labels, np.linspace(-1.0, 1.0, d), drop_axis=1, dtype=np.float64)
        X, y = client.persist([X, y])  # each y block on the worker of its X block
        Xl, yl = X.compute(), y.compute()  # the same numbers, in this process
        tiny = [da.from_array(np.ones((200, d)), chunks=100),
                da.from_array(np.ones(200), chunks=100)]
        local = srcgrad.value_and_grad(logistic)
        first_local, expected = _timed(lambda: local(w, Xl, yl))
        first_dask, got = _timed(lambda: srcgrad.dask.value_and_grad(logistic, w, X, y))
        assert abs(got[0] - expected[0]) <= 1e-10 * abs(expected[0])
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-9)
        single, dist, trip = [], [], []
        for _ in range(opts.repeat):  # interleaved
            single.append(_timed(lambda: local(w, Xl, yl))[0])
            dist.append(_timed(lambda: srcgrad.dask.value_and_grad(logistic, w, X, y))[0])
            trip.append(_timed(lambda: srcgrad.dask.value_and_grad(logistic, w, *tiny))[0])
        times = srcgrad.dask.worker_times(client)
    one, two, rt = (statistics.median(t) for t in (single, dist, trip))
    print(f"logistic loss, {n:,} rows x {d} features ({Xl.nbytes / 2**20:,.0f} MiB), "
          f"{opts.chunks} chunks, 2 worker processes x 1 thread; medians of {opts.repeat}")
    print(f"{'':34}{'time':>10}{'rows/s':>14}{'vs 1 process':>14}")
    print(f"{'one process':34}{fmt_time(one):>10}{n / one:>14,.3g}{'1x':>14}")
    print(f"{'srcgrad.dask, 2 workers':34}{fmt_time(two):>10}{n / two:>14,.3g}"
          f"{fmt_ratio(one / two):>14}")
    print(f"{'round trip (2 chunks of 100 rows)':34}{fmt_time(rt):>10}{'':>14}"
          f"{f'{rt / two:.1%} of one':>14}")
    print(f"first call: one process {fmt_time(first_local)}, srcgrad.dask {fmt_time(first_dask)}")
    for address, report in sorted(times.items()):
        print(f"worker {address}: built {fmt_time(report['build_s'])}, first call "
              f"(compiles) {fmt_time(report['first_calls_s'])}, {report['calls'] - 1} other "
              f"calls {fmt_time(report['compute_s'])} in all")


if __name__ == "__main__":
    main()
