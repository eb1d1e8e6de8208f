"""Timing and memory measurement inside one worker process.

Peak memory is the growth of the process's resident set during one gradient
call: the kernel's high-water mark (VmHWM) is reset through
/proc/self/clear_refs just before the call and read after it, and the resident
size just before the call is subtracted. It counts every allocator (NumPy,
numba's runtime, XLA, PyTorch), unlike tracemalloc. For that call only, glibc
returns blocks of 64 KiB and more to the kernel when freed (`mallopt`), and
`malloc_trim` runs before it, so that each call's peak is seen afresh rather
than hidden in memory an earlier call freed. Small numbers (below about 1 MiB)
are at the resolution of this method.

Timings run with the allocator in its steady state instead (`steady_allocator`:
blocks up to 32 MiB are reused from the heap, freed heap memory up to 64 MiB is
kept: the values srcgrad/backend/allocator.py sets when a gradient is made), so
that they measure the code, not page faults of fresh mappings: with the 64 KiB threshold every array of 8,192 doubles or
more was mapped and faulted in afresh at each allocation.
"""
from __future__ import annotations

import ctypes
import gc
import re
import statistics
import time


def _status(field: str) -> int | None:
    try:
        with open("/proc/self/status") as handle:
            match = re.search(rf"^{field}:\s+(\d+) kB", handle.read(), re.M)
    except OSError:
        return None
    return int(match.group(1)) * 1024 if match else None


def _release_free_memory() -> None:
    """Collect garbage and hand freed heap memory back to the kernel (glibc's malloc_trim),
    so memory the call reuses from earlier calls shows up as growth again."""
    gc.collect()
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
_STEADY_MMAP, _STEADY_TRIM, _PEAK_MMAP = 32 * 2 ** 20, 64 * 2 ** 20, 64 * 2 ** 10


def _mallopt(param: int, value: int) -> None:
    try:
        ctypes.CDLL(None).mallopt(param, value)
    except (OSError, AttributeError):
        pass


def steady_allocator() -> None:
    """Fix glibc's thresholds where its adaptive ones settle: timings see reused memory."""
    _mallopt(_M_MMAP_THRESHOLD, _STEADY_MMAP)
    _mallopt(_M_TRIM_THRESHOLD, _STEADY_TRIM)


def peak_growth(call) -> float | None:
    """Bytes the resident set grew by at its peak during `call()`, or None if unknown."""
    _mallopt(_M_MMAP_THRESHOLD, _PEAK_MMAP)
    _mallopt(_M_TRIM_THRESHOLD, _PEAK_MMAP)
    try:
        return _peak_growth(call)
    finally:
        steady_allocator()


def _peak_growth(call) -> float | None:
    _release_free_memory()
    before = _status("VmRSS")
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        call()
        return None
    call()
    peak = _status("VmHWM")
    if before is None or peak is None:
        return None
    return max(0, peak - before)


def timed(call):
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def interleaved(primal, gradient, *, min_runs: int, max_runs: int, budget: float):
    """Median seconds of `primal()` and `gradient()`, run alternately.

    Alternating keeps a burst of load on the shared machine from landing on
    one of the two only. Stops after `max_runs` rounds, or once `budget`
    seconds have passed and at least `min_runs` rounds ran.
    """
    primal_times, gradient_times = [], []
    start = time.perf_counter()
    while len(gradient_times) < max_runs:
        if len(gradient_times) >= min_runs and time.perf_counter() - start > budget:
            break
        if primal is not None:
            primal_times.append(timed(primal)[0])
        gradient_times.append(timed(gradient)[0])
    median = statistics.median
    return (median(primal_times) if primal_times else None, median(gradient_times),
            len(gradient_times))
