"""Rules for functions that build or reshape matrices: diag, trace, tril/triu, kron,
atleast_1d/2d/3d, roll, and np.interp (piecewise linear in all three arguments).

All but np.interp are linear in their array argument (forward mode applies them to
the tangent, rules/forward_more.py). The helpers are in runtime/matrices.py and
runtime/ordering.py.
"""
import numpy as np

from ..runtime import diag_grad, interp_parts, kron_lhs_grad, kron_rhs_grad, reshape_like, roll_back
from .registry import defrule
from .samples import case as _case, draw as _draw


@defrule(np.diag, sample=(_case(3), _case(3, options=(1,)), _case(3, 3), _case(3, 4, options=(-1,)),
                          _case(4, 3, options=(1,))))
def diag(g, ans, v, k=0):
    return diag_grad(g, v, k)


@defrule(np.trace, sample=(_case(3, 3), _case(3, 4, options=(1,)), _case(4, 3, options=(-2,))))
def trace(g, ans, a, offset=0):
    return g * np.eye(a.shape[0], a.shape[1], offset, dtype=a.dtype)


@defrule(np.tril, sample=(_case(3, 3), _case(3, 4, options=(-1,))))
def tril(g, ans, m, k=0):
    return np.tril(g, k)


@defrule(np.triu, sample=(_case(3, 3), _case(4, 3, options=(1,))))
def triu(g, ans, m, k=0):
    return np.triu(g, k)


def _kron_vectors(rng):
    return _draw(rng, 2), _draw(rng, 3)


def _kron_matrices(rng):
    return _draw(rng, 2, 3), _draw(rng, 2, 2)


@defrule(np.kron, sample=(_kron_vectors, _kron_matrices))
def kron(g, ans, a, b):
    return kron_lhs_grad(g, a, b), kron_rhs_grad(g, a, b)


@defrule(np.atleast_1d, np.atleast_2d, np.atleast_3d, shapes=(((),), ((3,),), ((2, 3),)))
def atleast(g, ans, a):
    return reshape_like(g, a)


@defrule(np.roll, sample=(_case(5, options=(2,)), _case(5, options=(-1,)),
                          _case(3, 4, options=(1, 0)), _case(3, 4, options=(5,))))
def roll(g, ans, a, shift, axis=None):
    return roll_back(g, shift, axis), None


def _interp_points(rng):
    xp = np.array([0.0, 0.7, 1.5, 2.0, 3.2])
    x = np.array([-0.5, 0.2, 1.1, 1.9, 2.5, 3.0, 4.0])
    return x, xp, rng.normal(size=5)


def _interp_scalar(rng):
    return 1.3, np.array([0.0, 1.0, 2.5]), rng.normal(size=3)


@defrule(np.interp, sample=(_interp_points, _interp_scalar))
def interp(g, ans, x, xp, fp):
    parts = interp_parts(g, x, xp, fp)
    return parts[0], parts[1], parts[2]
