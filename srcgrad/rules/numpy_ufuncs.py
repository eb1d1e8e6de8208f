"""Rules for elementwise NumPy functions and their `math` module twins."""
import math

import numpy as np

from ..runtime import cumsum_grad, clip_mask, select_where, unbroadcast
from .registry import BINARY, METHODS, defnondiff, defrule


@defrule(np.sin, math.sin)
def sin(g, ans, x):
    return g * np.cos(x)


@defrule(np.cos, math.cos)
def cos(g, ans, x):
    return -g * np.sin(x)


@defrule(np.tan, math.tan, domain=(-1.2, 1.2))
def tan(g, ans, x):
    return g * (1.0 + ans * ans)


@defrule(np.arcsin, math.asin, domain=(-0.9, 0.9))
def arcsin(g, ans, x):
    return g / np.sqrt(1.0 - x * x)


@defrule(np.arccos, math.acos, domain=(-0.9, 0.9))
def arccos(g, ans, x):
    return -g / np.sqrt(1.0 - x * x)


@defrule(np.arctan, math.atan)
def arctan(g, ans, x):
    return g / (1.0 + x * x)


@defrule(np.sinh, math.sinh)
def sinh(g, ans, x):
    return g * np.cosh(x)


@defrule(np.cosh, math.cosh)
def cosh(g, ans, x):
    return g * np.sinh(x)


@defrule(np.tanh, math.tanh)
def tanh(g, ans, x):
    return g * (1.0 - ans * ans)


@defrule(np.exp, math.exp)
def exp(g, ans, x):
    return g * ans


@defrule(np.exp2)
def exp2(g, ans, x):
    return g * ans * math.log(2.0)


@defrule(np.expm1, math.expm1)
def expm1(g, ans, x):
    return g * (ans + 1.0)


@defrule(np.log, math.log, domain=(0.2, 3.0))
def log(g, ans, x):
    return g / x


@defrule(np.log2, math.log2, domain=(0.2, 3.0))
def log2(g, ans, x):
    return g / (x * math.log(2.0))


@defrule(np.log10, math.log10, domain=(0.2, 3.0))
def log10(g, ans, x):
    return g / (x * math.log(10.0))


@defrule(np.log1p, math.log1p, domain=(-0.5, 3.0))
def log1p(g, ans, x):
    return g / (1.0 + x)


@defrule(np.sqrt, math.sqrt, domain=(0.2, 3.0))
def sqrt(g, ans, x):
    return g * 0.5 / ans


@defrule(np.cbrt, domain=(0.2, 3.0))
def cbrt(g, ans, x):
    return g / (3.0 * ans * ans)


@defrule(np.square)
def square(g, ans, x):
    return g * 2.0 * x


@defrule(np.reciprocal, domain=(0.5, 2.0))
def reciprocal(g, ans, x):
    return -g * ans * ans


@defrule(np.abs, np.absolute, np.fabs, math.fabs, abs)
def absolute(g, ans, x):
    return g * np.sign(x)


def _where_sample(rng):
    return rng.random((2, 3)) > 0.5, rng.normal(size=(2, 3)), rng.normal(size=(3,))


@defrule(np.where, sample=_where_sample)
def where(g, ans, condition, x, y):
    return (None, unbroadcast(select_where(condition, g, 0.0), x),
            unbroadcast(select_where(condition, 0.0, g), y))


defnondiff(
    np.sign, np.floor, np.ceil, np.trunc, np.rint, np.round, math.floor, math.ceil, math.trunc,
    np.isnan, np.isinf, np.isfinite, np.greater, np.less, np.equal, np.logical_and,
    np.logical_or, np.logical_not, np.shape, np.size, np.ndim,
    np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like, np.full,
    np.full_like, np.arange, np.linspace, np.eye, np.identity,
)


# --- cumulative sums, clipping, and two-argument functions ------------------------------

def _cumsum_flat(rng):
    return (rng.uniform(-2.0, 2.0, size=(2, 3)),)


def _cumsum_axis0(rng):
    return rng.uniform(-2.0, 2.0, size=(3, 4)), 0


def _cumsum_axis_neg(rng):
    return rng.uniform(-2.0, 2.0, size=(2, 3, 4)), -2


def _cumsum_scalar(rng):
    return (float(rng.uniform(-2.0, 2.0)),)


@defrule(np.cumsum, sample=(_cumsum_scalar, _cumsum_flat, _cumsum_axis0, _cumsum_axis_neg))
def cumsum(g, ans, a, axis=None):
    return cumsum_grad(g, a, axis)


def _clip_scalar_bounds(rng):
    return rng.uniform(-2.0, 2.0, size=(3, 4)), -0.7, 0.9


def _clip_array_bounds(rng):
    return (rng.uniform(-2.0, 2.0, size=(3, 4)), rng.uniform(-1.5, -0.5, size=(3, 1)),
            rng.uniform(0.5, 1.5, size=(4,)))


def _clip_scalars(rng):
    return float(rng.uniform(-2.0, 2.0)), -0.5, 0.5


def _clip_crossed_bounds(rng):  # a_min > a_max: NumPy gives a_max everywhere
    return rng.uniform(-2.0, 2.0, size=(3,)), rng.uniform(0.5, 1.0, size=(3,)), -0.3


@defrule(np.clip, sample=(_clip_scalar_bounds, _clip_array_bounds, _clip_scalars,
                          _clip_crossed_bounds))
def clip(g, ans, a, a_min, a_max):
    # NumPy's minimum(maximum(a, a_min), a_max): the argument where it lies strictly between
    # the bounds, a_min where a <= a_min < a_max, a_max elsewhere (everywhere when the
    # bounds cross, a_min >= a_max)
    return (unbroadcast(g * clip_mask(a, a_min, a_max), a),
            unbroadcast(g * ((1.0 - clip_mask(a, a_min, None)) * clip_mask(a_min, None, a_max)),
                        a_min),
            unbroadcast(g * (1.0 - clip_mask(a, None, a_max) * clip_mask(a_max, a_min, None)),
                        a_max))


@defrule(np.logaddexp, shapes=BINARY)
def logaddexp(g, ans, x1, x2):
    return unbroadcast(g * np.exp(x1 - ans), x1), unbroadcast(g * np.exp(x2 - ans), x2)


@defrule(np.hypot, math.hypot, domain=(0.3, 2.0), shapes=BINARY)
def hypot(g, ans, x1, x2):
    return unbroadcast(g * x1 / ans, x1), unbroadcast(g * x2 / ans, x2)


@defrule(np.arctan2, math.atan2, domain=(0.3, 2.0), shapes=BINARY)
def arctan2(g, ans, x1, x2):
    r2 = x1 * x1 + x2 * x2
    return unbroadcast(g * x2 / r2, x1), unbroadcast(-g * x1 / r2, x2)


METHODS.update({"cumsum": np.cumsum, "clip": np.clip})
