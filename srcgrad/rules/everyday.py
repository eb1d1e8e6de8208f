"""Rules for the Python around the math: printing and formatting, random generators,
dtype conversion and arrays built from lists (helpers in runtime/effects.py).

Only `x.astype(dtype)` (to a float dtype: g; to an integer or bool one: zero)
and the start value of a sum carry a gradient; everything else here makes text,
constants or uninitialised arrays.
"""
import numpy as np

from ..runtime import (as_type, as_type_grad, empty_rows, format_percent, format_text,
                       new_generator, print_values, sum_check, sum_probe, sum_start, sum_zero,
                       unbroadcast)
from .registry import METHODS, defnondiff, defrule

defnondiff(format_text, format_percent, print_values, new_generator, empty_rows, sum_probe,
           sum_zero, sum_check)


def _to_float(rng):
    return rng.uniform(-2.0, 2.0, size=(2, 3)), float


def _to_int(rng):
    return rng.uniform(-2.0, 2.0, size=(3,)), np.int64


def _to_float64(rng):
    return rng.uniform(-2.0, 2.0, size=(3,)), np.float64


@defrule(as_type, sample=(_to_float, _to_int, _to_float64))
def astype(g, ans, x, dtype):
    return as_type_grad(g, x, dtype), None


METHODS.update({"astype": as_type})


def _start_of_rows(rng):
    return float(rng.uniform(-2.0, 2.0)), np.zeros((1,))


def _array_start(rng):
    return rng.uniform(-2.0, 2.0, size=(2, 3)), 0


# sum(items, start) begins at start (broadcast to the terms' rank when compiled)
@defrule(sum_start, sample=(_start_of_rows, _array_start))
def sum_start_vjp(g, ans, start, like=None):
    return unbroadcast(g, start)
