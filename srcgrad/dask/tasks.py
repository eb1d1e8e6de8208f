"""What runs on Dask's workers for `srcgrad.dask.value_and_grad`: one shard's value and
gradient, the sum of partial results, and each worker process's timings.

A shard's task receives the gradient as bytes pickled once per call in the client
(api/pickling.py): unpickling the same bytes again in a process returns the object
made the first time, so each worker process builds and compiles a gradient once.
`times()` says, for this process, how long making gradients took (`build_s`), how
long the first call of each took (`first_calls_s`: numba compiling, or loading its
cache, plus one shard's work) and how long the other calls took (`compute_s`).
"""
from __future__ import annotations

import os
import pickle
import threading
import time

import numpy as np

_TIMES = {"build_s": 0.0, "first_calls_s": 0.0, "compute_s": 0.0, "gradients": 0,
          "calls": 0}
_CALLED: set = set()  # ids of gradients this process has called
_LOCK = threading.Lock()


def _gradient(payload: bytes):
    start = time.perf_counter()
    gradient = pickle.loads(payload)
    with _LOCK:
        if id(gradient) not in _CALLED:
            _TIMES["build_s"] += time.perf_counter() - start
    return gradient


def _timed(gradient, params, shard: tuple):
    start = time.perf_counter()
    value, grad = gradient(params, *shard)
    spent = time.perf_counter() - start
    with _LOCK:
        first = id(gradient) not in _CALLED
        _CALLED.add(id(gradient))
        _TIMES["first_calls_s" if first else "compute_s"] += spent
        _TIMES["gradients"] += first
        _TIMES["calls"] += 1
    return value, grad


def shard_value_and_grad(payload: bytes, params, *shard):
    """(value, gradient) of one shard given as separate arguments (array blocks)."""
    return _timed(_gradient(payload), params, shard)


def partition_value_and_grad(payload: bytes, params, shards):
    """The sum of (value, gradient) over a sequence of shards (a delayed list, a bag's
    partition); each shard is a tuple of arguments or one argument."""
    gradient = _gradient(payload)
    parts = [_timed(gradient, params, s if isinstance(s, tuple) else (s,)) for s in shards]
    if not parts:
        return 0.0, np.zeros_like(np.asarray(params, dtype=np.float64))
    return add(*parts)


def add(*parts):
    """The sum of (value, gradient) pairs."""
    value = sum(v for v, _ in parts)
    grad = parts[0][1]
    for _, g in parts[1:]:
        grad = grad + g
    return value, grad


def times() -> dict:
    """This process's timings (see the module docstring), with its process id."""
    with _LOCK:
        return {**_TIMES, "pid": os.getpid()}
