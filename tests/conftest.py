"""Test-session setup: one fresh generated-code cache per test run.

Within a run, gradients of the same function share one cached module and
numba's on-disk cache, so each function is compiled by numba once.
"""
import os
import tempfile

if "SRCGRAD_CACHE_DIR" not in os.environ:
    os.environ["SRCGRAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="srcgrad-test-cache-")
