"""Test-session setup: one fresh generated-code cache per test run.

Within a run, gradients of the same function share one cached module and
numba's on-disk cache, so each function is compiled by numba once.
"""
import os
import tempfile

# A compiled form (backend/fused.py) that fails where the function runs is an error here,
# not a silent fallback (SRCGRAD_LOOPS=0 turns forms off, to compare).
os.environ.setdefault("SRCGRAD_LOOPS", "strict")

if "SRCGRAD_CACHE_DIR" not in os.environ:
    os.environ["SRCGRAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="srcgrad-test-cache-")
