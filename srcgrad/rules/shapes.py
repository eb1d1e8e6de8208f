"""Rules for functions that only rearrange elements (reshape, ravel, transpose, ...), and
np.diff, linear like them.

Each cotangent is the incoming one rearranged back to the argument's shape.
Shape, axes and axis arguments are options (they have defaults), never
differentiated. `x.reshape(3, 4)` and `x.transpose(1, 0)` are rewritten by
resolve.py into the tuple forms `np.reshape(x, (3, 4))`, `np.transpose(x, (1, 0))`.
"""
import numpy as np

from ..runtime import diff_grad, flatten_copy, reshape_like, untranspose
from .registry import METHODS, defrule


def _draw(rng, *shape):
    return rng.uniform(-2.0, 2.0, size=shape)


def _reshape_2d(rng):
    return _draw(rng, 2, 6), (3, 4)


def _reshape_minus_one(rng):
    return _draw(rng, 2, 3, 4), (-1, 4)


def _reshape_to_1d(rng):
    return _draw(rng, 3, 4), 12


@defrule(np.reshape, sample=(_reshape_2d, _reshape_minus_one, _reshape_to_1d))
def reshape(g, ans, a, shape=None):
    return reshape_like(g, a)


@defrule(np.ravel, flatten_copy, shapes=(((3,),), ((2, 3),), ((2, 3, 4),)))
def ravel(g, ans, a):
    return reshape_like(g, a)


def _transpose_axes(rng):
    return _draw(rng, 2, 3, 4), (2, 0, 1)


def _transpose_negative_axes(rng):
    return _draw(rng, 2, 3, 4), (-1, 0, -2)


def _transpose_2d(rng):
    return (_draw(rng, 2, 3),)


def _transpose_1d(rng):
    return (_draw(rng, 3),)


@defrule(np.transpose, sample=(_transpose_2d, _transpose_1d, _transpose_axes,
                               _transpose_negative_axes))
def transpose(g, ans, a, axes=None):
    return untranspose(g, a, axes)


def _swapaxes_2d(rng):
    return _draw(rng, 2, 3), 0, 1


def _swapaxes_3d(rng):
    return _draw(rng, 2, 3, 4), -1, 0


@defrule(np.swapaxes, sample=(_swapaxes_2d, _swapaxes_3d))
def swapaxes(g, ans, a, axis1=0, axis2=1):
    return np.swapaxes(g, axis1, axis2)


def _expand_front(rng):
    return _draw(rng, 3), 0


def _expand_back(rng):
    return _draw(rng, 2, 3), -1


def _expand_middle(rng):
    return _draw(rng, 2, 3), 1


@defrule(np.expand_dims, sample=(_expand_front, _expand_back, _expand_middle))
def expand_dims(g, ans, a, axis=0):
    return reshape_like(g, a)


def _squeeze_all(rng):
    return (_draw(rng, 1, 3, 1),)


def _squeeze_axis(rng):
    return _draw(rng, 2, 1, 3), 1


@defrule(np.squeeze, sample=(_squeeze_all, _squeeze_axis))
def squeeze(g, ans, a, axis=None):
    return reshape_like(g, a)


def _diff_once(rng):
    return (_draw(rng, 6),)


def _diff_twice_rows(rng):
    return _draw(rng, 3, 5), 2


def _diff_axis0(rng):
    return _draw(rng, 4, 3), 1, 0


@defrule(np.diff, sample=(_diff_once, _diff_twice_rows, _diff_axis0))
def diff(g, ans, a, n=1, axis=-1):  # linear: differences of neighbours, put back
    return diff_grad(g, a, n, axis)


METHODS.update({"reshape": np.reshape, "ravel": np.ravel, "flatten": flatten_copy,
                "transpose": np.transpose, "swapaxes": np.swapaxes, "squeeze": np.squeeze})
