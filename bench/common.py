"""Helpers shared by the problems, the runner and the GradBench adapter.

Nothing here imports JAX, PyTorch or autograd: the srcgrad side of every
problem (and the test smoke check) works with only srcgrad's own dependencies.
"""
from __future__ import annotations

import types

import numba
import numpy as np


def njit_with(func, *helpers):
    """`numba.njit(func)`, where `func` may call the plain Python `helpers`.

    numba only calls other compiled functions, so each helper is compiled too,
    in a private copy of `func`'s globals (the module itself is not touched).
    A recursive function passes itself as a helper: its copy then calls its
    own compiled version.
    """
    namespace = dict(func.__globals__)
    for helper in helpers:
        copy = types.FunctionType(helper.__code__, namespace, helper.__name__,
                                  helper.__defaults__, helper.__closure__)
        namespace[helper.__name__] = numba.njit(copy)
    if any(h is func for h in helpers):
        return namespace[func.__name__]
    copy = types.FunctionType(func.__code__, namespace, func.__name__,
                              func.__defaults__, func.__closure__)
    return numba.njit(copy)


def mismatch(x, y):
    """GradBench's (ADBench's) elementwise error |x - y| / max(1, |x| + |y|)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    return np.abs(x - y) / np.maximum(1.0, np.abs(x) + np.abs(y))


TOLERANCE = 1e-4


def fd_gradient(f, args, wrt, coords=None, h=1e-4):
    """Central finite differences (4-point stencil, error O(h^4)) of scalar `f(*args)`.

    Differentiates with respect to the arrays at positions `wrt`, flattened and
    concatenated in that order. `coords` (indices into that flat vector) limits
    the work to a subset; the others are NaN.
    """
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    sizes = [args[i].size for i in wrt]
    offsets = np.cumsum([0] + sizes)
    total = int(offsets[-1])
    out = np.full(total, np.nan)
    for c in (range(total) if coords is None else coords):
        k = int(np.searchsorted(offsets, c, side="right") - 1)
        flat = args[wrt[k]].reshape(-1)
        j = c - offsets[k]
        x0 = flat[j]
        step = h * max(1.0, abs(x0))
        vals = []
        for mult in (2.0, 1.0, -1.0, -2.0):
            flat[j] = x0 + mult * step
            vals.append(float(f(*args)))
        flat[j] = x0
        out[c] = (-vals[0] + 8.0 * vals[1] - 8.0 * vals[2] + vals[3]) / (12.0 * step)
    return out


def flat(*arrays):
    """Concatenate gradients (scalars or arrays of any shape) into one float64 vector."""
    return np.concatenate([np.asarray(a, dtype=np.float64).reshape(-1) for a in arrays])


def gradbench_stream(seed, sizes, want, draw):
    """Replay GradBench's input stream: `np.random.seed(seed)`, then one `draw(size)`
    per entry of `sizes` in order, returning the draw for `want`.

    GradBench's evals seed once and then generate every size in turn, so the
    input at one size depends on the sizes before it. A size not in the list
    gets a fresh draw right after seeding.
    """
    np.random.seed(seed)
    if want not in sizes:
        return draw(want)
    for size in sizes:
        value = draw(size)
        if size == want:
            return value
    raise AssertionError("unreachable")


_ONCE: dict = {}


def once(key, factory):
    """`factory()`, computed on the first call for `key` and kept for the process."""
    if key not in _ONCE:
        _ONCE[key] = factory()
    return _ONCE[key]
