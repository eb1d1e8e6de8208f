"""Rules for whole-array reductions (sum, mean, max, min, prod).

Parameters carry NumPy's names, so calls such as np.sum(a=x) bind the same way.
"""
import numpy as np

from ..runtime import extremum_share, fill_like
from . import defrule


@defrule(np.sum)
def sum_(g, ans, a):
    return fill_like(a, g)


@defrule(np.mean)
def mean(g, ans, a):
    return fill_like(a, g / np.size(a))


@defrule(np.max, np.amax)
def max_(g, ans, a):
    return g * extremum_share(a, ans)


@defrule(np.min, np.amin)
def min_(g, ans, a):
    return g * extremum_share(a, ans)


@defrule(np.prod, domain=(0.5, 2.0))
def prod(g, ans, a):
    return fill_like(a, g) * ans / a
