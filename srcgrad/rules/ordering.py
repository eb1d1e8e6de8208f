"""Rules for functions that select or order elements: sort, median, percentile, take,
take_along_axis, cumprod; argsort and argmax-like functions carry no gradient.

A selection's gradient goes to the elements NumPy selected (`np.sort`: the element of
each rank; `np.median`/`np.percentile`: the one or two ranks the linear method
interpolates between, weighted as it weights them). Helpers: runtime/ordering.py.
"""
import numpy as np

from ..runtime import (cumprod_grad, median_grad, percentile_parts, sort_grad, take_along_axis_grad,
                       take_grad)
from .registry import defnondiff, defrule
from .samples import case as _case, draw as _draw

defnondiff(np.argsort, np.argmax, np.argmin, np.searchsorted, np.nonzero, np.flatnonzero,
           np.argwhere, np.count_nonzero, np.unique)


@defrule(np.sort, sample=(_case(5), _case(3, 4), _case(3, 4, options=(0,)),
                          _case(2, 3, options=(None,))))
def sort(g, ans, a, axis=-1, kind=None):
    return sort_grad(g, a, axis)


@defrule(np.median, sample=(_case(5), _case(6), _case(3, 4, options=(1,)), _case(2, 3)))
def median(g, ans, a, axis=None):
    return median_grad(g, a, axis)


def _percentile(shape, q, *options):
    def sample(rng):
        return (_draw(rng, *shape), q, *options)
    sample.__name__ = f"{'x'.join(map(str, shape))}-q{q}" + "".join(f"-{o}" for o in options)
    return sample


@defrule(np.percentile, sample=(_percentile((7,), 30.0), _percentile((6,), 75.0),
                                _percentile((3, 5), 40.0, 1), _percentile((2, 3), 10.0)))
def percentile(g, ans, a, q, axis=None):
    parts = percentile_parts(g, a, q, axis)
    return parts[0], parts[1]


def _take_flat(rng):
    return _draw(rng, 2, 3), np.array([0, 4, 4, -1])


def _take_axis(rng):
    return _draw(rng, 3, 4), np.array([2, 0, 2]), 1


@defrule(np.take, sample=(_take_flat, _take_axis))
def take(g, ans, a, indices, axis=None):
    return take_grad(g, a, indices, axis), None


def _take_along_rows(rng):
    a = _draw(rng, 3, 4)
    return a, np.argsort(a, axis=1)[:, :2], 1


def _take_along_vector(rng):
    return _draw(rng, 5), np.array([4, 1, 1, 0]), -1


@defrule(np.take_along_axis, sample=(_take_along_rows, _take_along_vector))
def take_along_axis(g, ans, arr, indices, axis=-1):
    return take_along_axis_grad(g, arr, indices, axis), None


@defrule(np.cumprod, sample=(_case(5), _case(2, 3), _case(3, 4, options=(0,)),
                             _case(2, 3, 2, options=(-1,))))
def cumprod(g, ans, a, axis=None):
    return cumprod_grad(g, a, axis)
