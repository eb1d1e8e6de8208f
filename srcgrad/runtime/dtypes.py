"""The dtype of a cotangent, for the plain-NumPy helpers: an argument's own float dtype.

A cotangent (or tangent) of a float32 array is a float32 array, as JAX has it, so a
rule called on float32 values returns float32 (autograd regressed on exactly this);
anything else (scalars, integer or boolean arrays, lists) gets float64. Generated code
runs on float64 values (api/arguments.py widens float32 inputs), so the numba twins
need no such care.
"""
from __future__ import annotations

import numpy as np


def float_dtype(x):
    """x's dtype if it is a float array, else float64."""
    dtype = getattr(x, "dtype", None)
    return dtype if dtype is not None and dtype.kind == "f" and np.ndim(x) else np.dtype(
        np.float64)


def as_float(c, x):
    """`c` as an array of `x`'s float dtype (no copy when it has it already)."""
    return np.asarray(c).astype(float_dtype(x), copy=False)
