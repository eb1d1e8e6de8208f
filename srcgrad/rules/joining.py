"""Rules for functions that build one array from several values (concatenate, stack, array).

Their first argument is a sequence, which the user writes as a list or tuple
display: `np.concatenate([a, b * 2.0])`. normalize.py keeps the display inline
as the call's argument (as a tuple, which numba needs) with an atom for each
element, so the rule's sequence parameter receives the display. Its
cotangent is a value whose item k is element k's cotangent (a tuple of
slabs, or for np.array the cotangent array itself), and the reverse pass
gives item k to element k. A nested display is allowed for np.array only
(`np.array([[a, b], [c, d]])`): item [i][j] goes to its element.
"""
import numpy as np

from ..runtime import concatenate_grad, hstack_grad, stack_grad, vstack_grad
from .registry import defrule

# Spelled callees whose first argument is kept as a display, and those that may nest displays.
SEQUENCE_CALLS = frozenset({"np.concatenate", "np.stack", "np.hstack", "np.vstack",
                            "np.array", "np.asarray"})
NESTED_DISPLAYS = frozenset({"np.array", "np.asarray"})


def _draw(rng, *shape):
    return rng.uniform(-2.0, 2.0, size=shape)


def _concatenate_1d(rng):
    return ((_draw(rng, 2), _draw(rng, 3)),)


def _concatenate_axis1(rng):
    return (_draw(rng, 2, 3), _draw(rng, 2, 1), _draw(rng, 2, 2)), 1


def _concatenate_flat(rng):
    return (_draw(rng, 2, 2), _draw(rng, 3)), None


@defrule(np.concatenate, sample=(_concatenate_1d, _concatenate_axis1, _concatenate_flat))
def concatenate(g, ans, arrays, axis=0):
    return concatenate_grad(g, arrays, axis)


def _stack_vectors(rng):
    return ((_draw(rng, 3), _draw(rng, 3)),)


def _stack_last_axis(rng):
    return (_draw(rng, 2, 3), _draw(rng, 2, 3), _draw(rng, 2, 3)), -1


def _stack_scalars(rng):
    return ((float(rng.uniform(-2.0, 2.0)), float(rng.uniform(-2.0, 2.0))),)


@defrule(np.stack, sample=(_stack_vectors, _stack_last_axis, _stack_scalars))
def stack(g, ans, arrays, axis=0):
    return stack_grad(g, arrays, axis)


def _hstack_vectors(rng):
    return ((_draw(rng, 2), float(rng.uniform(-2.0, 2.0)), _draw(rng, 3)),)


def _hstack_matrices(rng):
    return ((_draw(rng, 2, 1), _draw(rng, 2, 3)),)


@defrule(np.hstack, sample=(_hstack_vectors, _hstack_matrices))
def hstack(g, ans, tup):
    return hstack_grad(g, tup)


def _vstack_vectors(rng):
    return ((_draw(rng, 3), _draw(rng, 3)),)


def _vstack_mixed(rng):
    return ((_draw(rng, 2, 3), _draw(rng, 3)),)


@defrule(np.vstack, sample=(_vstack_vectors, _vstack_mixed))
def vstack(g, ans, tup):
    return vstack_grad(g, tup)


def _array_scalars(rng):
    return (tuple(float(v) for v in rng.uniform(-2.0, 2.0, size=3)),)


def _array_rows(rng):
    return ((_draw(rng, 2), _draw(rng, 2)),)


@defrule(np.array, np.asarray, sample=(_array_scalars, _array_rows))
def array(g, ans, object, dtype=None):
    return g
