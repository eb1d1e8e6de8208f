"""glibc's malloc thresholds set so that a gradient's tapes are reused memory, not fresh
mappings faulted in at every call.

A gradient allocates its tapes at every call (ode at n = 10,000 and 10 steps: four tapes
of 800 KB) and frees them at its end. With glibc's adaptive thresholds, arrays from 128 KB
are mapped afresh, or, once the threshold has risen, the heap's freed top is handed back
to the kernel (it exceeds twice the threshold) and the next call faults every page in
again: measured, ode's gradient took 5.3x its primal in a plain process against 3.4x with
memory reused. JAX's and PyTorch's allocators keep their memory for the same reason.

`steady()` runs once per process, when the first gradient numba will compile is made
(backend/compile.py): it sets
M_MMAP_THRESHOLD to 32 MiB (blocks below come from the heap) and M_TRIM_THRESHOLD to
64 MiB (freed heap memory up to that is kept), the values bench/measure.py times with.
It leaves the allocator alone where glibc is not the C library, where the user set any
MALLOC_*_ variable, and with SRCGRAD_MALLOC=system. Only speed and how much freed memory
the process keeps change: no value does.
"""
from __future__ import annotations

import ctypes
import os
import platform

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
MMAP, TRIM = 32 * 2 ** 20, 64 * 2 ** 20
_done = False


def steady() -> bool:
    """Set the thresholds (module doc) the first time; whether they were set."""
    global _done
    if _done:
        return False
    _done = True
    if os.environ.get("SRCGRAD_MALLOC", "").lower() == "system" \
            or any(k.startswith("MALLOC_") for k in os.environ) \
            or platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM))
