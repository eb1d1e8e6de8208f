"""Run-time checks generated code makes, and value snapshots."""
from __future__ import annotations

import numpy as np
from numba import literally, types
from numba.extending import overload

from ..errors import SrcgradError


# --- forbid_array_alias: `z = x; z += y` is only safe when z is not an array -----------

def forbid_array_alias(z, message):
    """Raise if `z` is an array: NumPy would update it in place, and with it what it aliases."""
    if isinstance(z, np.ndarray):
        raise SrcgradError(message)


@overload(forbid_array_alias)
def _forbid_array_alias(z, message):
    if isinstance(z, types.Array):
        if not isinstance(message, types.StringLiteral):
            return lambda z, message: literally(message)  # retype with the text as a constant
        text = message.literal_value

        def impl(z, message):
            raise SrcgradError(text)
        return impl
    return lambda z, message: None

# --- check_cotangent: a custom rule's cotangent must have its argument's shape ----------

def check_cotangent(ct, x, message):
    if np.shape(ct) != np.shape(x):
        raise SrcgradError(f"{message}: got shape {np.shape(ct)}, expected {np.shape(x)}")
    return ct


@overload(check_cotangent)
def _check_cotangent(ct, x, message):
    if not isinstance(message, types.StringLiteral):
        return lambda ct, x, message: literally(message)
    text = message.literal_value
    ct_array, x_array = isinstance(ct, types.Array), isinstance(x, types.Array)
    if not ct_array and not x_array:
        return lambda ct, x, message: ct
    if ct_array != x_array or ct.ndim != x.ndim:
        def impl(ct, x, message):
            raise SrcgradError(text + ": its rank differs from the argument's")
        return impl

    def impl(ct, x, message):
        if ct.shape != x.shape:
            raise SrcgradError(text + ": its shape differs from the argument's")
        return ct
    return impl

# --- snapshot: a value that later writes into its array cannot change ----------------

def snapshot(x):
    return x.copy() if isinstance(x, np.ndarray) else x


@overload(snapshot)
def _snapshot(x):
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    return lambda x: x
