"""Type tests the numba overloads share."""
from numba import types


def is_number(t) -> bool:
    return isinstance(t, (types.Number, types.Boolean))


def is_none(t) -> bool:
    return t is None or isinstance(t, (types.NoneType, types.Omitted))
