"""Helpers forward-mode rules call: sums that undo nothing, they reduce tangents."""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from ._types import is_none


def reduce_sum(x, axis, keepdims):
    """np.sum(x, axis=axis, keepdims=keepdims), in a form numba compiles when it can."""
    return np.sum(x, axis=axis, keepdims=keepdims)


@overload(reduce_sum)
def _reduce_sum(x, axis, keepdims):
    if isinstance(keepdims, types.BooleanLiteral) and keepdims.literal_value:
        return lambda x, axis, keepdims: np.sum(x, axis=axis, keepdims=True)  # reductions.py
    if isinstance(keepdims, types.Boolean) and not isinstance(keepdims, types.BooleanLiteral):
        return None  # numba asks again with the constant
    if is_none(axis):
        return lambda x, axis, keepdims: np.sum(x)
    return lambda x, axis, keepdims: np.sum(x, axis=axis)


def matrix_inner(p, q):
    """The sum of p * q over the last two axes (one number per matrix of a stack)."""
    return np.sum(p * q, axis=(-2, -1))


@overload(matrix_inner)
def _matrix_inner(p, q):
    if isinstance(p, types.Array) and p.ndim == 2:
        return lambda p, q: np.sum(p * q)
    return None  # stacks of matrices: run as Python


def solve_product(a, x, b):
    """a @ x where x = np.linalg.solve(., b): b (and x) are vectors when b is 1-d (NumPy 2)."""
    if np.ndim(b) == 1:
        return (a @ x[..., None])[..., 0]
    return a @ x


@overload(solve_product)
def _solve_product(a, x, b):
    return lambda a, x, b: a @ x  # numba solves single matrices: a @ x is right for both


def solve_like(a, r, b):
    """np.linalg.solve(a, r), with r read as vectors when b was a vector (1-d)."""
    if np.ndim(b) == 1 and np.ndim(r) > 1:
        return np.linalg.solve(a, r[..., None])[..., 0]
    return np.linalg.solve(a, r)


@overload(solve_like)
def _solve_like(a, r, b):
    return lambda a, r, b: np.linalg.solve(a, r)  # numba: single matrices, r shaped like b


def unit_like(x, k):
    """1.0 for a number; for an array, zeros of its shape with a one at flat index k."""
    if np.ndim(x) == 0:
        return 1.0
    e = np.zeros(np.shape(x))
    e.flat[k] = 1.0
    return e


@overload(unit_like)
def _unit_like(x, k):
    if isinstance(x, types.Array):
        def impl(x, k):
            e = np.zeros(x.shape)
            e.reshape(e.size)[k] = 1.0
            return e
        return impl
    return lambda x, k: 1.0
