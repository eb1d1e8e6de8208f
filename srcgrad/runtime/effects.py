"""Helpers for the Python around the math: printing, string formatting, random generators,
dtype conversion and arrays built from lists.

None of these carries a gradient (rules/everyday.py registers them so). The
numba twins of the text helpers run their Python form in object mode, so a
compiled gradient prints exactly what the function prints; `new_generator`
(np.random.default_rng) hands
a Generator made by NumPy to compiled code (numba draws from it natively).
"""
from __future__ import annotations

import numba
import numpy as np
from numba import objmode, types
from numba.core.errors import TypingError
from numba.extending import overload

from ._types import is_number as _is_number


def format_text(template, *values):
    """`template.format(*values)`: what f-strings and str.format become."""
    return template.format(*values)


def format_percent(template, values):
    """`template % values`."""
    return template % values


def print_values(sep, end, *values):
    """print(*values, sep=sep, end=end)."""
    print(*values, sep=sep, end=end, flush=True)


@overload(format_text)
def _format_text(template, *values):
    def impl(template, *values):
        with objmode(out="unicode_type"):
            out = template.format(*values)
        return out
    return impl


@overload(format_percent)
def _format_percent(template, values):
    def impl(template, values):
        with objmode(out="unicode_type"):
            out = template % values
        return out
    return impl


@overload(print_values)
def _print_values(sep, end, *values):
    def impl(sep, end, *values):
        with objmode():
            print_values(sep, end, *values)
    return impl


_GENERATOR = numba.typeof(np.random.default_rng(0))


def new_generator(seed=None):
    return np.random.default_rng(seed)


@overload(new_generator)
def _new_generator(seed=None):
    def impl(seed=None):
        with objmode(made=_GENERATOR):
            made = np.random.default_rng(seed)
        return made
    return impl


# --- x.astype(dtype) ------------------------------------------------------------------------

def as_type(x, dtype):
    return np.asarray(x).astype(dtype)


def as_type_grad(g, x, dtype):
    """The cotangent of x.astype(dtype): g for a float dtype, zero for an integer or bool one."""
    if not np.issubdtype(np.dtype(dtype), np.inexact):
        return 0.0 * g
    return g


def _dtype_of(dtype):
    if isinstance(dtype, types.Function) and dtype.typing_key is float:
        return np.dtype(np.float64)
    if isinstance(dtype, types.Function) and dtype.typing_key is int:
        return np.dtype(np.int64)
    if isinstance(dtype, types.NumberClass):
        return np.dtype(str(dtype.dtype))
    raise TypingError(f"srcgrad compiles x.astype(...) with float, int or a NumPy type, not {dtype}")


@overload(as_type)
def _as_type(x, dtype):
    target = _dtype_of(dtype)
    if _is_number(x):
        return lambda x, dtype: np.array(x).astype(target)
    return lambda x, dtype: x.astype(target)


@overload(as_type_grad)
def _as_type_grad(g, x, dtype):
    exact = not np.issubdtype(_dtype_of(dtype), np.inexact)
    return (lambda g, x, dtype: 0.0 * g) if exact else (lambda g, x, dtype: g)


# --- np.array(a_list): an array with one row per list item ----------------------------------

def empty_rows(items):
    """An uninitialised array shaped and typed like np.array(items)."""
    return np.empty_like(np.array(items))


@overload(empty_rows)
def _empty_rows(items):
    if not isinstance(items, types.List):
        return None
    item = items.dtype
    if isinstance(item, types.Array):
        empty, dtype = (0,) * (item.ndim + 1), item.dtype

        def impl(items):
            if len(items) == 0:
                return np.empty(empty, dtype)
            return np.empty((len(items),) + items[0].shape, dtype)
        return impl
    if _is_number(item):
        return lambda items: np.empty(len(items), item)
    return None


# --- sum(...) of array terms: the start value shaped for numba ------------------------------

def sum_probe():
    """False. Guards a copy of a sum's loops that never runs: it is there so that numba
    knows the type of the terms (the list it appends to, read by sum_zero) before the
    first term exists."""
    return False


def sum_zero(items):
    """0 in Python. Compiled, for array terms, zeros of the terms' rank and dtype with every
    length 1 (for number terms, 0): what tells sum_start the terms' type."""
    return 0


def sum_start(start, like):
    """The accumulator's first value in sum(items, start): `start` itself in Python.

    Compiled, a number start of array terms (`like` = sum_zero(terms) is an array)
    becomes an array of the terms' rank with every length 1 (`np.full((1,) * ndim,
    start)`), so the accumulator has one type; `start + e0` broadcasts to e0's
    shape, the values Python's sum adds up.
    """
    return start


def sum_check(total, start, count):
    """Nothing in Python. Compiled: a number start and array terms, none of them added,
    would leave the broadcast start; Python's sum returns the start itself, so say so."""


@overload(sum_probe)
def _sum_probe():
    return lambda: False


def _term_type(items):
    if isinstance(items, (types.List, types.UniTuple)):
        return items.dtype
    if isinstance(items, types.Array):
        return items.dtype if items.ndim == 1 else items.copy(ndim=items.ndim - 1, layout="A")
    return None


def _start_dtype(term, start):
    """NumPy's dtype of `start + term` for a Python number start (NEP 50: the start is weak)."""
    term, start = numba.np.numpy_support.as_dtype(term), numba.np.numpy_support.as_dtype(start)
    if start.kind == "c" and term.kind != "c":
        return np.result_type(term, np.complex64) if term.kind == "f" else np.dtype(np.complex128)
    if start.kind == "f" and term.kind in "biu":
        return np.dtype(np.float64)
    return np.dtype(np.int64) if term.kind == "b" else term


@overload(sum_zero)
def _sum_zero(items):
    term = _term_type(items)
    if not isinstance(term, types.Array):
        return lambda items: 0
    shape, dtype = (1,) * term.ndim, numba.np.numpy_support.as_dtype(term.dtype)
    return lambda items: np.zeros(shape, dtype)


@overload(sum_start)
def _sum_start(start, like):
    if not (isinstance(like, types.Array) and _is_number(start)):
        return lambda start, like: start
    shape, dtype = (1,) * like.ndim, _start_dtype(like.dtype, start)
    return lambda start, like: np.full(shape, start, dtype)


@overload(sum_check)
def _sum_check(total, start, count):
    if not (isinstance(total, types.Array) and _is_number(start)):
        return lambda total, start, count: None

    def impl(total, start, count):
        if count == 0:
            raise ValueError("srcgrad: sum() of no array terms returns its start value, a "
                             "number, where compiled code needs an array: pass an array "
                             "start, sum(..., np.zeros(shape))")
    return impl
