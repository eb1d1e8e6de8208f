"""Helpers for calls: cutting a gradient path, and linking a recursive call's partials."""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from ..errors import SrcgradError

_NOT_SCALAR = ("srcgrad differentiates a recursive function only if it returns a scalar "
               "(its gradient is computed once per call and scaled by the caller's cotangent)")


def stop_gradient(x):
    """`x` itself, as a constant: no gradient flows back through it (like jax.lax.stop_gradient)."""
    return x


@overload(stop_gradient)
def _stop_gradient(x):
    return lambda x: x


def linked(value, partial, arg):
    """`value`, whose derivative with respect to `arg` is `partial`.

    Generated code calls a recursive function through its joint gradient
    function `f__grad_all`, which returns the value and every partial
    derivative at once; `linked` ties the value to each argument so the
    backward sweep adds `g * partial` to the argument's adjoint (calls.py).
    """
    if np.ndim(value) != 0:
        raise SrcgradError(_NOT_SCALAR)
    return value


@overload(linked)
def _linked(value, partial, arg):
    if isinstance(value, types.Array):
        def impl(value, partial, arg):
            raise SrcgradError(_NOT_SCALAR)
        return impl
    return lambda value, partial, arg: value
