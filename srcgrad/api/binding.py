"""The fast path of a `GradFunction` call: positional arguments of plain types.

`fast_call(...)` returns a function of the call's positional arguments that
either gives exactly what the general path (`gradient.prepare_inputs`, then
shaping) would, or returns `SLOW` before running any generated code, when
the call is not one it handles. It handles calls where
- the function has no `*args`, `**kwargs` or keyword-only parameters, and the
  call passes positional arguments only (missing trailing ones take their
  defaults, the same objects `inspect.Signature.bind` would use);
- every argument differentiated is a `float`, a `np.float64` (passed on as a
  float) or a C-contiguous float64 array with at least one dimension (passed
  on as it is: `np.ascontiguousarray` would return it unchanged);
- every other argument and every data global is an int, float, bool or NumPy
  scalar of those kinds (not float32), or a float64, integer or boolean array
  with at least one dimension (passed on as it is, as `_plain` would); a data
  global standing for an attribute chain (`CFG.lam`) is read along it.

Anything else (keywords, Variables, 0-d arrays, lists, tuples, complex values, float32,
integers or booleans to differentiate, a data global that is missing or in an
empty closure cell) goes the general way, which gives the error messages.
Data globals are read afresh at every call, from the module dictionary or
closure cell `Resolved.read_globals` reads; arrays the function writes into
are copied. After the call, a scalar value and gradients that already have
their argument's shape and dtype are returned as they are, anything else is
converted as `gradient._shaped_like` does; `finish_error(value)` is called
for a value that is not a scalar (it raises).
"""
from __future__ import annotations

import inspect

import numpy as np

from ..frontend.resolve import attribute_global, free_value
from .arguments import _shaped_like

SLOW = object()  # "this call takes the general path"
_F64 = np.dtype(np.float64)
_SCALARS = frozenset({float, int, bool, np.float64, np.int64, np.int32, np.intp, np.bool_,
                      np.uint64, np.uint32})  # float32 values take the general path (widened)
_EMPTY = object()


def readers(resolved, root):
    """(globals dict or None, name or closure cell) for each data global, as `_lookup` reads."""
    found = []
    for name in resolved.data_globals:
        func, inner = resolved.global_sources.get(name, (root, name))
        code = func.__code__
        if inner in code.co_freevars and func.__closure__:
            found.append((None, func.__closure__[code.co_freevars.index(inner)]))
        elif inner in func.__globals__ or attribute_global(func, inner.split("__")) is None:
            found.append((func.__globals__, inner))
        else:
            found.append((None, _Attributes(func, inner)))  # CFG__lam stands for CFG.lam
    return found


class _Attributes:
    """A data global standing for an attribute chain (`resolve.attribute_global`), read like
    a closure cell: `cell_contents` is the chain's value now (ValueError if it is gone)."""

    def __init__(self, func, name):
        self.root, *self.attrs = name.split("__")
        self.func = func

    @property
    def cell_contents(self):
        found, value = free_value(self.func, self.root)
        try:
            for attr in self.attrs:
                value = getattr(value, attr)
        except AttributeError:
            found = False
        if not found:
            raise ValueError(self.root)
        return value


def _positional_params(signature):
    """(parameter count, required count, default values) or None if the fast path cannot bind."""
    params = list(signature.parameters.values())
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
        return None
    required = sum(p.default is inspect.Parameter.empty for p in params)
    defaults = tuple(p.default for p in params[required:])
    if any(p.default is inspect.Parameter.empty for p in params[required:]):
        return None
    return len(params), required, defaults


def _binder(wrt_pos, other_pos, readers, copied):
    """bind(args) -> the generated function's inputs for a call's arguments, or SLOW."""
    ndarray, scalars, f64 = np.ndarray, _SCALARS, _F64

    def other_ok(v):
        t = type(v)
        return t in scalars or (t is ndarray and v.ndim != 0 and (v.dtype == f64 or
                                                                  v.dtype.kind in "biu"))

    def bind(args):
        inputs = list(args)
        for k in wrt_pos:
            v = inputs[k]
            t = type(v)
            if t is float:
                continue
            if t is ndarray:
                if v.ndim != 0 and v.dtype == f64 and v.flags.c_contiguous:
                    continue
                return SLOW
            if t is np.float64:
                inputs[k] = float(v)
                continue
            return SLOW
        for k in other_pos:
            if not other_ok(inputs[k]):
                return SLOW
        for where, key in readers:
            if where is None:
                try:
                    v = key.cell_contents
                except ValueError:
                    return SLOW
            else:
                v = where.get(key, _EMPTY)
            if not other_ok(v):
                return SLOW
            inputs.append(v)
        for k in copied:
            if type(inputs[k]) is ndarray:
                inputs[k] = inputs[k].copy()
        return inputs

    return bind


def fast_call(program, root, signature, wrt, many, with_value, finish_error):
    """The fast call for `program` (see the module docstring), or None if it cannot have one."""
    shape = _positional_params(signature)
    if shape is None:
        return None
    count, required, defaults = shape
    names = list(signature.parameters)
    wrt_pos = tuple(names.index(n) for n in wrt)
    other_pos = tuple(k for k in range(count) if k not in wrt_pos)
    sources = readers(program.resolved, root)
    every = names + list(program.resolved.data_globals)
    copied = tuple(k for k, n in enumerate(every) if n in program.mutated_inputs)
    compiled = program.compiled
    bind = _binder(wrt_pos, other_pos, sources, copied)
    ndarray, f64 = np.ndarray, _F64

    def call(args):
        n = len(args)
        if n != count:
            if n < required or n > count:
                return SLOW
            args = args + defaults[n - required:]
        inputs = bind(args)
        if inputs is SLOW:
            return SLOW
        value, grads = compiled(*inputs)
        if type(value) is not float:
            if np.ndim(value) != 0:
                finish_error(value)
            value = value.item() if isinstance(value, ndarray) else value
        out = []
        for k, g in zip(wrt_pos, grads):
            arg = args[k]
            if type(arg) is ndarray:
                if not (type(g) is ndarray and g.dtype == f64 and g.shape == arg.shape):
                    g = _shaped_like(g, arg, names[k])
            elif type(g) is not float:
                g = _shaped_like(g, arg, names[k])
            out.append(g)
        result = tuple(out) if many else out[0]
        return (value, result) if with_value else result
    return call
