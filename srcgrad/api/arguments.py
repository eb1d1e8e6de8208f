"""The arguments of a derivative's call, as its generated code takes them.

- `bind_arguments`: the call bound like the user's function binds it; a wrong call
  is a TypeError saying which derivative of which function was called.
- `prepare_inputs` / `inputs_of`: the generated function's inputs: the
  parameters' values (those differentiated checked by `_check_differentiable`,
  0-d arrays as scalars, Variables as their values), then the data globals read
  now; complex values refused (`_reject_complex`); arrays the code writes into
  copied, so the caller's arrays are never modified.
- `_shaped_like`: a gradient shaped like its argument, in its float dtype.

float32 (and float16) values are computed in float64 (`_wide`): numba types Python
constants as float64, so compiled float32 code would mix precisions anyway, and one
compiled program serves every precision. Derivatives come back in their arguments'
dtypes and the value in the dtype NumPy's promotion of the float arguments gives
(`value_like`: float32 when they are all float32).
"""
from __future__ import annotations

import numpy as np

from ..errors import SrcgradError
from .variables import Variable


_F64 = np.dtype(np.float64)


def _check_differentiable(name: str, value):
    """Return `value` as something srcgrad can differentiate, or raise TypeError."""
    if type(value) is np.ndarray and value.dtype == _F64 and value.ndim:
        return np.ascontiguousarray(value)  # the common case, first
    kind = type(value).__name__
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, np.ndarray) and value.dtype == bool):
        raise TypeError(f"cannot differentiate with respect to argument {name!r}: it is a boolean ({kind})")
    if isinstance(value, (int, np.integer)) or (
            isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.integer)):
        what = f"an integer array (dtype {value.dtype})" if isinstance(value, np.ndarray) \
            else f"an integer ({kind})"
        raise TypeError(
            f"cannot differentiate with respect to argument {name!r}: it is {what}. Pass a "
            f"float (e.g. {name}=3.0 or an array of dtype float64), or leave {name!r} out of wrt.")
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating):
        return float(value) if value.ndim == 0 else np.ascontiguousarray(value, dtype=np.float64)
    raise TypeError(f"cannot differentiate with respect to argument {name!r} of type {kind}: "
                    "srcgrad differentiates floats and float64 NumPy arrays")


def _reject_complex(label: str, value) -> None:
    """Complex numbers are not supported yet: refuse them before generated code runs."""
    if isinstance(value, (list, tuple)):
        for item in value:
            _reject_complex(label, item)
    elif isinstance(value, (complex, np.complexfloating)) or (
            isinstance(value, np.ndarray) and value.dtype.kind == "c"):
        raise TypeError(f"{label} is complex ({type(value).__name__}"
                        f"{f', dtype {value.dtype}' if isinstance(value, np.ndarray) else ''}): "
                        "srcgrad does not support complex numbers yet; pass real values "
                        "(e.g. the real and imaginary parts as separate arguments)")


def bind_arguments(signature, args, kwargs, what: str):
    """`signature.bind` with the defaults applied; a wrong call is a TypeError that says
    which derivative of which function was called (`what`)."""
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{what}: {exc}") from None
    bound.apply_defaults()
    return bound


def prepare_inputs(program, signature, wrt, args, kwargs):
    """(bound arguments, the generated function's inputs): arguments as the user's function
    binds them, those in `wrt` checked, then the data globals; arrays the function writes
    into are copied (the caller's are never modified)."""
    bound = bind_arguments(signature, args, kwargs, f"the {program.compiled.describe}")
    return bound, inputs_of(program, dict(bound.arguments), wrt)


def inputs_of(program, values: dict, wrt, labels: dict | None = None) -> list:
    """The generated function's inputs for the values of its parameters (`wrt` checked,
    `labels` spelling a parameter in messages), then its data globals."""
    labels = labels or {}
    for name in wrt:
        values[name] = _check_differentiable(labels.get(name, name), values[name])
    inputs = [_wide(_plain(v)) for v in values.values()]
    inputs += [_wide(_plain(v)) for v in program.resolved.read_globals()]
    sources = program.resolved.global_sources
    spelled = [f"argument {labels.get(n, n)!r}" for n in values] + [
        f"the global {sources.get(n, (None, n))[1]!r}" for n in program.resolved.data_globals]
    for label, value in zip(spelled, inputs):
        _reject_complex(label, value)
    if program.mutated_inputs:
        names = list(values) + program.resolved.data_globals
        for k, name in enumerate(names):
            if name in program.mutated_inputs and isinstance(inputs[k], np.ndarray):
                inputs[k] = inputs[k].copy()
    return inputs


def _plain(value):
    """0-d arrays become scalars (NOTE [scalars] in runtime/__init__.py); a Variable its value."""
    if isinstance(value, Variable):
        return value.value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    return value


_NARROW = (np.dtype(np.float32), np.dtype(np.float16))


def _wide(value):
    """float32 and float16 values as float64: generated code computes in float64."""
    if isinstance(value, np.ndarray):
        return value.astype(np.float64) if value.dtype in _NARROW else value
    return float(value) if isinstance(value, (np.float32, np.float16)) else value


def narrow_dtype(values):
    """The dtype NumPy's promotion gives the float values among `values` (arrays and NumPy
    scalars; Python floats do not count), if narrower than float64; else None."""
    kinds = [v.dtype for v in values if isinstance(v, (np.ndarray, np.floating))
             and v.dtype.kind == "f"]
    narrow = np.result_type(*kinds) if kinds else None
    return narrow if narrow in _NARROW else None


def _shaped_like(grad, arg, name: str | None = None):
    """A derivative with its argument's shape and float dtype (float64 unless the argument
    is float32 or float16): a float for a Python float or float64 scalar. A derivative with
    another number of elements is an error naming the argument `name` (the caveat of
    analysis/shape_classes.py)."""
    if np.size(grad) != np.size(arg):
        who, y = (f"argument '{name}'", name) if name else ("an argument", "x")
        raise SrcgradError(
            f"srcgrad computed a derivative of shape {np.shape(grad)} for {who} of shape "
            f"{np.shape(arg)}: a value bound from it changed shape in a loop (for example "
            f"`y = {y}`, then `y = y * 0.5 + v` broadcasts it in the first iteration), which "
            f"srcgrad does not follow; give the value its loop shape before the loop "
            f"(`y = {y} + np.zeros_like(v)`)")
    if isinstance(arg, np.ndarray):
        dtype = arg.dtype if arg.dtype in _NARROW else np.float64
        return np.asarray(grad, dtype=dtype).reshape(arg.shape)
    if isinstance(arg, (np.float32, np.float16)):
        return type(arg)(grad)
    return float(grad)


def value_like(value, values):
    """The function's value in the dtype NumPy's promotion of the float `values` gives."""
    narrow = narrow_dtype(values)
    return _plain(value) if narrow is None or np.ndim(value) else narrow.type(value)
