"""Rules for special functions: scipy.special (erf, gammaln, digamma, expit, xlogy,
logsumexp), math.lgamma and math.erf, and np.logaddexp.reduce.

Generated code calls runtime/special.py's helpers in place of scipy.special's
ufuncs (`replace`): numba compiles those, and without jit they call SciPy, so
the values are SciPy's either way.
"""
import math

import numpy as np

from ..runtime import (expand_to, logaddexp_reduce, math_digamma, special_digamma, special_erf,
                       special_expit, special_gammaln, special_logsumexp, special_tetragamma,
                       special_trigamma, special_xlogy, unbroadcast, xlogy_dx)
from .registry import BINARY, defrule, replace, replace_later

for _spelled, _helper in (("erf", special_erf), ("gammaln", special_gammaln),
                          ("digamma", special_digamma), ("psi", special_digamma),
                          ("expit", special_expit), ("xlogy", special_xlogy),
                          ("logsumexp", special_logsumexp)):
    replace_later("scipy.special", _spelled, _helper, "special")
replace(np.logaddexp.reduce, logaddexp_reduce, "np.logaddexp.reduce", "special")


@defrule(special_erf, math.erf)
def erf(g, ans, x):
    return g * (2.0 / math.sqrt(math.pi)) * np.exp(-x * x)


@defrule(special_gammaln, math.lgamma, domain=(0.3, 4.0))
def gammaln(g, ans, x):
    return g * special_digamma(x)


@defrule(special_digamma, domain=(0.3, 4.0))
def digamma(g, ans, x):
    return g * special_trigamma(x)


@defrule(math_digamma, domain=(0.3, 4.0), shapes=(((),),))
def math_digamma_vjp(g, ans, x):  # math.lgamma's derivative, for higher derivatives
    return g * special_trigamma(x)


@defrule(special_trigamma, domain=(0.3, 4.0))
def trigamma(g, ans, x):  # digamma's second derivative, for third ones through gammaln
    return g * special_tetragamma(x)


@defrule(special_expit)
def expit(g, ans, x):
    return g * ans * (1.0 - ans)


@defrule(special_xlogy, domain=(0.3, 2.0), shapes=BINARY)
def xlogy(g, ans, x, y):
    return unbroadcast(g * xlogy_dx(x, y), x), unbroadcast(g * x / y, y)


@defrule(xlogy_dx, domain=(0.3, 2.0), shapes=BINARY)
def xlogy_dx_vjp(g, ans, x, y):  # log(y): flat in x
    return None, unbroadcast(g / y, y)


def _lse(shape, *options):
    def sample(rng):
        return (rng.normal(size=shape), *options)
    sample.__name__ = "x".join(map(str, shape)) + "".join(f"-{o}" for o in options)
    return sample


@defrule(special_logsumexp, sample=(_lse((5,)), _lse((3, 4)), _lse((3, 4), 1), _lse((2, 3), 0, True)))
def logsumexp(g, ans, a, axis=None, keepdims=False):
    return expand_to(g, a, axis, keepdims) * np.exp(a - expand_to(ans, a, axis, keepdims))


@defrule(logaddexp_reduce, sample=(_lse((5,)), _lse((3, 4)), _lse((3, 4), 1)))
def logaddexp_reduce_vjp(g, ans, a, axis=0):
    return expand_to(g, a, axis, False) * np.exp(a - expand_to(ans, a, axis, False))
