"""The tape: restoring recorded values, tapes preallocated by trip count, loop bounds."""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from ..errors import SrcgradError
from .pages import on_huge_pages


# --- restore: undo one recorded assignment (the tape holds every value assigned) -----

def restore(tape, x):
    """Drop the newest value on `tape`; return the one before it (or `x` if none)."""
    tape.pop()
    return tape[-1] if tape else x


@overload(restore)
def _restore(tape, x):
    def impl(tape, x):
        tape.pop()
        if len(tape) > 0:
            return tape[-1]
        return x
    return impl

# --- restore_at: restore from a preallocated tape (the value of iteration k - 1) ---------

def restore_at(tape, k, x):
    """The value recorded at iteration k - 1, or `x` (nothing before) when k is 0."""
    return tape[k - 1] if k > 0 else x


@overload(restore_at)
def _restore_at(tape, k, x):
    def impl(tape, k, x):
        if k > 0:
            return tape[k - 1]
        return x
    return impl

# --- tape_array: a preallocated tape of n values like x (a loop with a known trip count) -

def tape_array(x, n):
    if isinstance(x, np.ndarray) and x.dtype == np.float64:
        return np.empty((n,) + x.shape, dtype=x.dtype)
    # Python numbers keep their type (an int may become float); so do arrays of other
    # dtypes, each row an array of its own: a state that starts as `np.arange(n)` holds
    # floats from its first update on, which an int64 tape would truncate.
    return np.empty(n, dtype=object)


@overload(tape_array)
def _tape_array(x, n):
    if isinstance(x, types.Array):
        return _new_tape(x.dtype)
    if isinstance(x, types.Boolean):
        return lambda x, n: np.empty(n, np.bool_)
    if isinstance(x, types.Number):
        # A name first bound to an int (`s = 0`) may later hold floats: numba types
        # each binding separately, so the tape takes the wider type.
        return lambda x, n: np.empty(n, np.float64)
    return None


def _new_tape(dtype):
    """n rows like the array x, large ones on huge pages (pages.py)."""
    def impl(x, n):
        tape = np.empty((n,) + x.shape, dtype)
        on_huge_pages(tape)
        return tape
    return impl

# --- tape_like: a preallocated tape of n values of exactly x's type (one site per loop) --

def tape_like(x, n):
    if isinstance(x, np.ndarray):
        return tape_array(x, n)
    return [x] * n  # numbers keep their type; tuples and the like are held as they are


@overload(tape_like)
def _tape_like(x, n):
    if isinstance(x, types.Array):
        return _new_tape(x.dtype)
    if isinstance(x, (types.Number, types.Boolean)):
        dtype = x
        return lambda x, n: np.empty(n, dtype)
    return lambda x, n: [x] * n  # tuples (a recursive call's value and partials)

# --- record_at: put an iteration's value on a preallocated tape ---------------------------

_RESHAPED = ("srcgrad cannot differentiate this loop: a value it records changes shape from "
             "one iteration to the next (for example an array that grows in a loop); "
             "srcgrad differentiates loops whose arrays keep their shape")


def record_at(tape, k, x):
    if isinstance(tape, np.ndarray) and tape.dtype == object:  # rows of their own (above)
        tape[k] = np.array(x, copy=True) if isinstance(x, np.ndarray) else x
        return
    if isinstance(tape, np.ndarray) and tape.shape[1:] != np.shape(x):
        raise SrcgradError(_RESHAPED)
    tape[k] = x


@overload(record_at)
def _record_at(tape, k, x):
    if isinstance(tape, types.Array) and isinstance(x, types.Array):
        # Element by element: `tape[k] = x` would make numba compile its message for a
        # shape mismatch (str and join of tuples), about 1.4 s of a new process.
        if x.ndim == 1 and tape.ndim == 2:
            # A row by index: numba compiles this in a tenth of the time of the flat
            # iteration below (0.03 s against 0.35 s in a new process).
            def row(tape, k, x):
                n = x.shape[0]
                if tape.shape[1] != n:
                    raise SrcgradError(_RESHAPED)
                for j in range(n):
                    tape[k, j] = x[j]
            return row

        def impl(tape, k, x):
            if tape.shape[1:] != x.shape:
                raise SrcgradError(_RESHAPED)
            row = tape[k].reshape(x.size)
            for j, v in enumerate(x.flat):
                row[j] = v
        return impl

    def plain(tape, k, x):
        tape[k] = x
    return plain

# --- trip_count: len(range(start, stop, step)) ------------------------------------------

def trip_count(start, stop, step):
    return len(range(start, stop, step))


@overload(trip_count)
def _trip_count(start, stop, step):
    def impl(start, stop, step):
        n = (stop - start + step - (1 if step > 0 else -1)) // step
        return n if n > 0 else 0
    return impl

# --- range_last: the last value of range(start, stop, step), or start - step if empty -

def range_last(start, stop, step):
    n = len(range(start, stop, step))
    return start + (n - 1) * step


@overload(range_last)
def _range_last(start, stop, step):
    def impl(start, stop, step):
        n = (stop - start + step - (1 if step > 0 else -1)) // step
        if n < 0:
            n = 0
        return start + (n - 1) * step
    return impl
