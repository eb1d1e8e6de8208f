"""Rules for reductions (sum, mean, max, min, prod, var, std), whole-array or along one axis.

Parameters carry NumPy's names, so calls such as np.sum(a=x) bind the same way.
`axis` (None or an int, negative allowed) and the keyword-only `keepdims`
(keyword-only as in NumPy, whose third positional parameter is dtype or out) are options: the
cotangent is put back to `a`'s shape by `expand_to`, which re-inserts the
reduced axis and broadcasts.
"""
import numpy as np

from ..runtime import axis_extremum_share, expand_to, prod_others
from .registry import METHODS, defrule


def _whole(rng):
    return (rng.uniform(0.5, 2.0, size=(2, 3)),)


def _vector(rng):
    return (rng.uniform(0.5, 2.0, size=(4,)),)


def _axis0(rng):
    return rng.uniform(0.5, 2.0, size=(3, 4)), 0


def _axis_neg(rng):
    return rng.uniform(0.5, 2.0, size=(2, 3, 4)), -1


def _vector_axis0(rng):
    return rng.uniform(0.5, 2.0, size=(5,)), 0


def _scalar(rng):
    return (float(rng.uniform(0.5, 2.0)),)


REDUCTION_SAMPLES = (_scalar, _vector, _whole, _axis0, _axis_neg, _vector_axis0)


@defrule(np.sum, sample=REDUCTION_SAMPLES)
def sum_(g, ans, a, axis=None, *, keepdims=False):
    return expand_to(g, a, axis, keepdims)


@defrule(np.mean, sample=REDUCTION_SAMPLES)
def mean(g, ans, a, axis=None, *, keepdims=False):
    return expand_to(g, a, axis, keepdims) * (np.size(ans) / np.size(a))


@defrule(np.max, np.amax, sample=REDUCTION_SAMPLES)
def max_(g, ans, a, axis=None, *, keepdims=False):
    return expand_to(g, a, axis, keepdims) * axis_extremum_share(a, ans, axis, keepdims)


@defrule(np.min, np.amin, sample=REDUCTION_SAMPLES)
def min_(g, ans, a, axis=None, *, keepdims=False):
    return expand_to(g, a, axis, keepdims) * axis_extremum_share(a, ans, axis, keepdims)


@defrule(np.prod, sample=REDUCTION_SAMPLES)
def prod(g, ans, a, axis=None, *, keepdims=False):
    return expand_to(g, a, axis, keepdims) * prod_others(a, axis)


def _spread_axis0(rng):
    return rng.uniform(0.5, 2.0, size=(4, 3)), 0


def _spread_ddof(rng):  # axis None, one degree of freedom less (np.var(x, ddof=1))
    return rng.uniform(0.5, 2.0, size=(5,)), None, None, None, 1


@defrule(np.var, sample=(_vector, _whole, _spread_axis0, _axis_neg, _spread_ddof))
def var(g, ans, a, axis=None, dtype=None, out=None, ddof=0, *, keepdims=False):
    centred = a - np.mean(a, axis=axis, keepdims=True)
    return expand_to(g, a, axis, keepdims) * centred * (2.0 / (np.size(a) / np.size(ans) - ddof))


@defrule(np.std, sample=(_vector, _whole, _spread_axis0, _axis_neg, _spread_ddof))
def std(g, ans, a, axis=None, dtype=None, out=None, ddof=0, *, keepdims=False):
    centred = a - np.mean(a, axis=axis, keepdims=True)
    return expand_to(g / ans, a, axis, keepdims) * centred / (np.size(a) / np.size(ans) - ddof)


METHODS.update({"var": np.var, "std": np.std})
