"""Run settings shared by the runner and its worker processes."""
from __future__ import annotations

# Per mode: rounds of (primal, gradient) timed per size, the time after which
# no new round starts once min_runs are done, a size whose gradient call takes
# longer than slow_call seconds ends that tool's larger sizes, and the limit
# for one worker process (one problem x one tool, all sizes).
MODES = {
    "quick": {"min_runs": 3, "max_runs": 15, "budget": 0.4, "slow_call": 10.0,
              "worker_timeout": 150.0, "warm_runs": 1},
    "full": {"min_runs": 5, "max_runs": 50, "budget": 3.0, "slow_call": 60.0,
             "worker_timeout": 1800.0, "warm_runs": 3},
}

ONE_THREAD = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    "TF_CPP_MIN_LOG_LEVEL": "2",
}

# glibc: return blocks of 64 KiB and more to the kernel when freed (and keep that
# threshold fixed). The suite sets this only around its peak-memory measurement
# (measure.peak_growth); scripts that measure memory in a process of their own use it.
MALLOC = {"MALLOC_MMAP_THRESHOLD_": "65536"}


def apply_thread_env(env) -> None:
    """One thread per tool unless the caller chose otherwise."""
    for key, value in ONE_THREAD.items():
        env.setdefault(key, value)


def apply_user_python(env) -> None:
    """Python as a user's machine runs it: bytecode written and reused. Some machines (this
    suite's CI among them) set PYTHONDONTWRITEBYTECODE=1, which makes every process compile
    srcgrad's own modules from source again (about 0.15 s of its import) while the installed
    libraries import from the bytecode pip wrote; measuring processes drop it."""
    env.pop("PYTHONDONTWRITEBYTECODE", None)
