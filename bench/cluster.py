"""srcgrad.dask against one process: the gradient of a logistic loss on 10^7 rows (issue 19).

    python bench/cluster.py [--rows 10000000] [--features 8] [--repeat 9]

A Dask scheduler and 2 `dask worker` processes with 1 thread each, the workers
started in sessions of their own, as services would be (Linux's autogroup scheduler
shares the CPU between sessions, so workers started as children of this process would
share one session's share with it on a busy machine), and without a nanny, whose
`MALLOC_TRIM_THRESHOLD_=65536` would fix glibc's malloc thresholds (large temporaries
are then mapped afresh at each allocation) where the one-process baseline keeps the
adaptive ones. The data (float64, chunked along
the rows, each label block made where its block of X is) stays in the workers'
memory. One gradient is `srcgrad.dask.value_and_grad(logistic, w, X, y)`: each
chunk's value and gradient computed where it lives by srcgrad's compiled gradient,
summed in a tree. The baseline is `srcgrad.value_and_grad(logistic)(w, X, y)` in this
process on the same data, one BLAS thread as on the workers. Runs are interleaved
and medians taken. Also measured: the round trip alone, the same call on 2 chunks of
100 rows (pickling the gradient, building the graph, scheduling, a task per chunk and
the sum); the workers' compile and compute times; and, as the ceiling the machine
gives at the moment, two plain processes (sessions of their own, no Dask) each timing
the gradient on half the rows at the same time. Prints one table; nothing is written.
Not part of `python -m bench` (it needs the [dask] extra and the machine).
"""
import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import logging  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
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


def _workers(address: str, count: int) -> list:
    """`count` worker processes of the scheduler at `address`, each in a new session."""
    command = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
               "--no-nanny", "--no-dashboard", "--memory-limit", "0"]
    return [subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL) for _ in range(count)]


def _alone(n: int, d: int, repeat: int, start_at: float) -> float:
    """The median time of the gradient on n rows in this process, timed from `start_at`."""
    rng = np.random.default_rng(n)
    X, y, w = rng.standard_normal((n, d)), (rng.random(n) < 0.5) * 1.0, np.zeros(d)
    local = srcgrad.value_and_grad(logistic)
    local(w, X[:10], y[:10])
    time.sleep(max(0.0, start_at - time.time()))
    return statistics.median(_timed(lambda: local(w, X, y))[0] for _ in range(repeat))


def _pair(n: int, d: int, repeat: int) -> float:
    """Per-gradient time of two plain processes timing n rows each at once (the slower)."""
    start_at = time.time() + 15.0
    command = [sys.executable, __file__, "--alone", str(n), "--features", str(d),
               "--repeat", str(repeat), "--start-at", str(start_at)]
    runs = [subprocess.Popen(command, start_new_session=True, stdout=subprocess.PIPE, text=True)
            for _ in range(2)]
    return max(float(run.communicate(timeout=600)[0].split()[-1]) for run in runs)


def _measure(client, n: int, d: int, chunks: int, repeat: int) -> dict:
    import dask.array as da
    w = np.linspace(-0.5, 0.5, d)
    X = da.random.default_rng(19).standard_normal((n, d), chunks=(-(-n // chunks), d))
    y = X.map_blocks(labels, np.linspace(-1.0, 1.0, d), drop_axis=1, dtype=np.float64)
    X, y = client.persist([X, y])  # each y block on the worker of its X block
    Xl, yl = X.compute(), y.compute()  # the same numbers, in this process
    tiny = [da.from_array(np.ones((200, d)), chunks=100), da.from_array(np.ones(200), chunks=100)]
    local = srcgrad.value_and_grad(logistic)
    first_local, expected = _timed(lambda: local(w, Xl, yl))
    first_dask, got = _timed(lambda: srcgrad.dask.value_and_grad(logistic, w, X, y))
    assert abs(got[0] - expected[0]) <= 1e-10 * abs(expected[0])
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-9)
    single, dist, trip = [], [], []
    for _ in range(repeat):  # interleaved
        single.append(_timed(lambda: local(w, Xl, yl))[0])
        dist.append(_timed(lambda: srcgrad.dask.value_and_grad(logistic, w, X, y))[0])
        trip.append(_timed(lambda: srcgrad.dask.value_and_grad(logistic, w, *tiny))[0])
    return {"one": statistics.median(single), "two": statistics.median(dist),
            "trip": statistics.median(trip), "first_local": first_local,
            "first_dask": first_dask, "mib": Xl.nbytes / 2**20,
            "workers": srcgrad.dask.worker_times(client)}


def _report(r: dict, n: int, d: int, chunks: int, repeat: int) -> None:
    one, two, trip = r["one"], r["two"], r["trip"]
    print(f"logistic loss, {n:,} rows x {d} features ({r['mib']:,.0f} MiB), {chunks} chunks, "
          f"2 worker processes x 1 thread; medians of {repeat}")
    print(f"{'':34}{'time':>10}{'rows/s':>14}{'vs 1 process':>14}")
    print(f"{'one process':34}{fmt_time(one):>10}{n / one:>14,.3g}{'1x':>14}")
    print(f"{'srcgrad.dask, 2 workers':34}{fmt_time(two):>10}{n / two:>14,.3g}"
          f"{fmt_ratio(one / two):>14}")
    print(f"{'round trip (2 chunks of 100 rows)':34}{fmt_time(trip):>10}{'':>14}"
          f"{f'{trip / two:.1%} of one':>14}")
    print(f"{'2 plain processes, half each':34}{fmt_time(r['pair']):>10}{n / r['pair']:>14,.3g}"
          f"{fmt_ratio(one / r['pair']):>14}   (the machine's ceiling now)")
    print(f"first call: one process {fmt_time(r['first_local'])}, srcgrad.dask "
          f"{fmt_time(r['first_dask'])}")
    for address, times in sorted(r["workers"].items()):
        print(f"worker {address}: built {fmt_time(times['build_s'])}, first call "
              f"(compiles) {fmt_time(times['first_calls_s'])}, {times['calls'] - 1} other "
              f"calls {fmt_time(times['compute_s'])} in all")


def main():
    from distributed import Client, LocalCluster

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--features", type=int, default=8)
    parser.add_argument("--chunks", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--alone", type=int, help=argparse.SUPPRESS)  # _pair's processes
    parser.add_argument("--start-at", type=float, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.alone:
        print(_alone(opts.alone, opts.features, opts.repeat, opts.start_at))
        return
    sizes = (opts.rows, opts.features, opts.chunks, opts.repeat)
    with LocalCluster(n_workers=0, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        workers = _workers(cluster.scheduler_address, 2)
        try:
            client.wait_for_workers(2, timeout=120)
            results = _measure(client, *sizes)
        finally:
            for worker in workers:
                worker.terminate()
                worker.wait(timeout=60)
    results["pair"] = _pair(opts.rows // 2, opts.features, opts.repeat)
    _report(results, *sizes)


if __name__ == "__main__":
    main()
