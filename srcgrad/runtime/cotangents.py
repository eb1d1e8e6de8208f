"""Pieces of derivative rules: masks, tie sharing, matmul cotangents."""
from __future__ import annotations

import numpy as np
from numba.extending import overload

from ._types import is_number as _is_number
from .dtypes import as_float
from .adjoints import unbroadcast


# --- select_where: np.where that also takes three scalars ------------------------------

def select_where(c, a, b):
    out = np.where(c, a, b)
    return float(out) if out.ndim == 0 else out


@overload(select_where)
def _select_where(c, a, b):
    if _is_number(c) and _is_number(a) and _is_number(b):
        return lambda c, a, b: float(a) if c else float(b)
    return lambda c, a, b: np.where(c, a, b)

# --- tie_share: the share of d max(x, other) / dx at x (ties split in half) -------------

def tie_share(x, ans, other):
    return select_where(x == ans, select_where(x == other, 0.5, 1.0), 0.0)


@overload(tie_share)
def _tie_share(x, ans, other):
    return lambda x, ans, other: select_where(x == ans, select_where(x == other, 0.5, 1.0), 0.0)

# --- extremum_share: d max(x) / dx, split evenly between tied maxima ---------------------

def extremum_share(x, ans):
    hits = as_float(x == ans, x)
    return hits / hits.sum() if hits.ndim else 1.0


@overload(extremum_share)
def _extremum_share(x, ans):
    if _is_number(x):
        return lambda x, ans: 1.0

    def impl(x, ans):
        hits = (x == ans) * 1.0
        return hits / np.sum(hits)
    return impl

# --- log_or_zero: log(x) where x > 0, else 0 (the exponent's share in x ** y) -----------

def log_or_zero(x):
    return select_where(x > 0, np.log(np.where(np.asarray(x) > 0, x, 1.0)), 0.0)


@overload(log_or_zero)
def _log_or_zero(x):
    if _is_number(x):
        return lambda x: np.log(x) if x > 0 else 0.0
    return lambda x: np.where(x > 0, np.log(np.where(x > 0, x, 1.0)), 0.0)

# --- power_slope: c * d x ** y / dx, 0 where c * y == 0 (x ** 0 is 1 also at x = 0) ----
# The power is taken with a float exponent (inf, not ZeroDivisionError, at x = 0 and y < 1).

def power_slope(x, y, c):
    if np.ndim(x) == 0 and np.ndim(y) == 0 and np.ndim(c) == 0:
        return 0.0 if c * y == 0 else float(c * y * np.power(x, y - 1.0))
    with np.errstate(divide="ignore", invalid="ignore"):  # the entries c * y == 0 drops
        cy = np.multiply(c, y)
        return select_where(cy == 0, 0.0, cy * np.power(x, np.subtract(y, 1.0)))


@overload(power_slope)
def _power_slope(x, y, c):
    if _is_number(x) and _is_number(y) and _is_number(c):
        return lambda x, y, c: 0.0 if c * y == 0 else c * y * x ** (y - 1.0)
    if _is_number(y) and _is_number(c):
        return lambda x, y, c: c * y * x ** (y - 1.0) if c * y != 0 else np.zeros(x.shape)
    return lambda x, y, c: np.where(c * y == 0, 0.0, c * y * x ** (y - 1.0))

# --- matmul: cotangents of a @ b for 1-d and 2-d operands, and stacks of matrices -------

def matmul_lhs_grad(g, a, b):
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 0 or b_nd == 0:
        return unbroadcast(g * b, a)
    if a_nd > 2 or b_nd > 2:
        a_m, b_m, g_m = _as_stacks(g, a, b)
        return unbroadcast(g_m @ np.swapaxes(b_m, -1, -2), a_m).reshape(np.shape(a))
    if b_nd == 1:
        return np.outer(g, b) if a_nd == 2 else g * b
    return g @ b.T if a_nd == 2 else b @ g


def matmul_rhs_grad(g, a, b):
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 0 or b_nd == 0:
        return unbroadcast(g * a, b)
    if a_nd > 2 or b_nd > 2:
        a_m, b_m, g_m = _as_stacks(g, a, b)
        return unbroadcast(np.swapaxes(a_m, -1, -2) @ g_m, b_m).reshape(np.shape(b))
    if a_nd == 1:
        return np.outer(a, g) if b_nd == 2 else g * a
    return a.T @ g


def _as_stacks(g, a, b):
    """NumPy's matmul of stacks of matrices with the 1-d operands as matrices: a vector `a`
    a row (1, k), a vector `b` a column (k, 1), and `g` with the axes they dropped."""
    a_m = np.asarray(a)[None, :] if np.ndim(a) == 1 else np.asarray(a)
    b_m = np.asarray(b)[:, None] if np.ndim(b) == 1 else np.asarray(b)
    g_m = np.asarray(g, dtype=float)
    if np.ndim(a) == 1:
        g_m = np.expand_dims(g_m, -2)
    if np.ndim(b) == 1:
        g_m = np.expand_dims(g_m, -1)
    return a_m, b_m, g_m


@overload(matmul_lhs_grad)
def _matmul_lhs_grad(g, a, b):
    if _is_number(a) or _is_number(b):
        return lambda g, a, b: unbroadcast(g * b, a)
    if b.ndim == 1:
        if a.ndim == 2:
            return lambda g, a, b: np.outer(g, b)
        return lambda g, a, b: g * b
    if a.ndim == 2:
        return lambda g, a, b: g @ b.T
    return lambda g, a, b: b @ g


@overload(matmul_rhs_grad)
def _matmul_rhs_grad(g, a, b):
    if _is_number(a) or _is_number(b):
        return lambda g, a, b: unbroadcast(g * a, b)
    if a.ndim == 1:
        if b.ndim == 2:
            return lambda g, a, b: np.outer(a, g)
        return lambda g, a, b: g * a
    if b.ndim == 1:
        return lambda g, a, b: g @ a  # a.T @ g without the transpose
    return lambda g, a, b: a.T @ g
