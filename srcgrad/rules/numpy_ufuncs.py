"""Rules for elementwise NumPy functions and their `math` module twins."""
import math

import numpy as np

from ..runtime import select, unbroadcast
from . import defnondiff, defrule


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
    return g * ans * np.log(2.0)


@defrule(np.expm1, math.expm1)
def expm1(g, ans, x):
    return g * (ans + 1.0)


@defrule(np.log, math.log, domain=(0.2, 3.0))
def log(g, ans, x):
    return g / x


@defrule(np.log2, math.log2, domain=(0.2, 3.0))
def log2(g, ans, x):
    return g / (x * np.log(2.0))


@defrule(np.log10, math.log10, domain=(0.2, 3.0))
def log10(g, ans, x):
    return g / (x * np.log(10.0))


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
    return None, unbroadcast(select(condition, g, 0.0), x), unbroadcast(select(condition, 0.0, g), y)


defnondiff(
    np.sign, np.floor, np.ceil, np.trunc, np.rint, np.round, math.floor, math.ceil, math.trunc,
    np.isnan, np.isinf, np.isfinite, np.greater, np.less, np.equal, np.logical_and,
    np.logical_or, np.logical_not, np.shape, np.size, np.ndim,
    np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like, np.full,
    np.full_like, np.arange, np.linspace, np.eye, np.identity,
)
