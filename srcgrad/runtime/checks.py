"""Run-time checks generated code makes, and value snapshots."""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from ..errors import SrcgradError
from .adjoints import unbroadcast


# --- forbid_array_alias: `z op= v` rebinds z; NumPy would write into a shared array --------

def forbid_array_alias(z, other, message):
    """Raise if `z` is an array and `other` holds one (None: an unknown holder).

    Generated code calls it before `z = z op v` (the user's `z op= v`) where the
    old array of z may still be used through `other` (aliasing.py): NumPy would
    update that array in place, srcgrad makes a new one. A number is never shared.
    """
    if isinstance(z, np.ndarray) and _holds_array(other):
        raise SrcgradError(message)


def _holds_array(value) -> bool:
    if value is None or isinstance(value, np.ndarray):
        return True
    return isinstance(value, (list, tuple)) and any(_holds_array(v) for v in value)


def _may_hold_array(ty) -> bool:
    if isinstance(ty, (types.Array, types.NoneType, types.Omitted)):
        return True
    if isinstance(ty, types.List):
        return _may_hold_array(ty.dtype)
    if isinstance(ty, types.BaseTuple):
        return any(_may_hold_array(t) for t in ty.types)
    return False


@overload(forbid_array_alias)
def _forbid_array_alias(z, other, message):
    if not (isinstance(z, types.Array) and _may_hold_array(other)):
        return lambda z, other, message: None
    if isinstance(other, types.List):  # a list holds an array once it has elements
        def impl_list(z, other, message):
            if len(other) > 0:
                raise SrcgradError(message)
        return impl_list

    def impl(z, other, message):
        raise SrcgradError(message)
    return impl


# --- check_cotangent: a custom rule's cotangent has its argument's shape, or is summed to it -

def check_cotangent(ct, x, message):
    """`ct` if it has x's shape; summed over the axes x was broadcast along when it has the
    shape x broadcasts to (a rule returning `g * ...` for a scalar `limit`); else an error."""
    if np.shape(ct) == np.shape(x):
        return ct
    try:
        wide = np.broadcast_shapes(np.shape(x), np.shape(ct))
    except ValueError:
        wide = None
    if wide != np.shape(ct):
        raise SrcgradError(f"{message}: got shape {np.shape(ct)}, expected {np.shape(x)}")
    return unbroadcast(ct, x)


@overload(check_cotangent)
def _check_cotangent(ct, x, message):
    ct_array, x_array = isinstance(ct, types.Array), isinstance(x, types.Array)
    if not ct_array and not x_array:
        return lambda ct, x, message: ct
    if ct_array and not x_array:
        return lambda ct, x, message: np.sum(ct)  # a number broadcast against an array
    if not ct_array or ct.ndim < x.ndim:
        def impl(ct, x, message):
            raise SrcgradError(message + ": its rank differs from the argument's")
        return impl

    def impl(ct, x, message):
        if ct.shape == x.shape:
            return ct
        summed = unbroadcast(ct, x)
        if summed.shape != x.shape:
            raise SrcgradError(message + ": its shape differs from the argument's")
        return summed
    return impl

# --- snapshot: a value that later writes into its array cannot change ----------------

def snapshot(x):
    return x.copy() if isinstance(x, np.ndarray) else x


@overload(snapshot)
def _snapshot(x):
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    return lambda x: x
