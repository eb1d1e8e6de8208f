"""Shapes of what the derivative operators take and return.

- `like(value, template, what)`: a tangent, cotangent or direction checked to have its
  primal's shape (ValueError naming `what` otherwise), as a float or a float64 copy.
- `shaped(grad, arg)`: a derivative shaped like its argument (a float for a scalar).
- `basis(shape)`: the unit vectors of a shape, in C order.
- `tree(value)`: 0-d arrays to floats, through tuples.
"""
from __future__ import annotations

import numpy as np

from .gradient import _check_differentiable, _plain, _shaped_like


def is_float(value) -> bool:
    try:
        _check_differentiable("x", value)
    except TypeError:
        return False
    return True


def tree(value):
    """0-d arrays to floats, through tuples."""
    if isinstance(value, tuple):
        return tuple(tree(v) for v in value)
    return float(value) if isinstance(value, np.floating) else _plain(value)


def like(value, template, what: str):
    """`value` as a float or float64 array of `template`'s shape, or ValueError."""
    if np.shape(value) != np.shape(template):
        raise ValueError(f"{what} has shape {np.shape(value)}, but it must have the shape "
                         f"{np.shape(template)} of the value it goes with")
    if np.ndim(template) == 0:
        return float(value)
    return np.array(value, dtype=np.float64)  # a copy: forward code may write into it


def shaped(grad, arg):
    """A derivative shaped like its argument: a float for a scalar, else an array of the
    argument's shape and float dtype (float32 stays float32, as in `_shaped_like`)."""
    if np.ndim(arg) == 0:
        return float(grad)
    return _shaped_like(grad, arg) if isinstance(arg, np.ndarray) else np.asarray(
        grad, dtype=np.float64).reshape(np.shape(arg))


def basis(shape):
    """Unit vectors e_k of `shape` (floats for scalars), in C order."""
    size = int(np.prod(shape))
    for k in range(size):
        e = np.zeros(size)
        e[k] = 1.0
        yield float(e[0]) if shape == () else e.reshape(shape)


def zeros_of(value):
    """A zero tangent of `value`'s shape."""
    return np.zeros(np.shape(value)) if np.ndim(value) else 0.0
