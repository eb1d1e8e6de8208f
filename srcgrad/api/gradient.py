"""`GradFunction`, what `grad(f)` returns, and `show`.

A `GradFunction` transforms the user's function once, when it is created
(so unsupported syntax is reported at once; a warm cache index may serve the
transformation of an earlier process, pipeline.build), and compiles on first
call. At each call it binds arguments like the user's function would, checks
the arguments being differentiated, and shapes each gradient like its
argument. A call with positional arguments of plain types takes a binder made
for this function (binding.py), which gives the same result; every other call,
and every call the binder hands back, takes the general path here, whose
messages say what is wrong with an argument.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from ..pipeline import build, transform
from .binding import SLOW, fast_call
from .pickling import reduce_call
from .programs import gradient_by_forward_mode
from ..errors import NonScalarOutputError
from ..frontend.parse import numba_function
from .variables import Variable


def _wrt_names(func, wrt) -> tuple[list[str], bool]:
    """`wrt` as parameter names, and whether the caller asked for a tuple."""
    if not inspect.isfunction(func):
        raise TypeError(f"srcgrad differentiates Python functions defined with def or lambda; "
                        f"got {type(func).__name__} {func!r}. Wrap the call in a def.")
    params = list(inspect.signature(func).parameters)
    many = isinstance(wrt, (tuple, list))
    items = list(wrt) if many else [wrt]
    if many and not items:
        raise ValueError("wrt=() names no argument; give a position, a name, or a tuple of them")
    names = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise TypeError(f"wrt must be a parameter position, a parameter name, or a tuple of "
                            f"them; got {item!r} ({type(item).__name__})")
        if isinstance(item, int):
            if not 0 <= item < len(params):
                raise ValueError(f"wrt={item} is out of range: {func.__qualname__} has "
                                 f"{len(params)} parameter(s) ({', '.join(params)})")
            item = params[item]
        elif item not in params:
            raise ValueError(f"wrt={item!r} names no parameter of {func.__qualname__} "
                             f"(its parameters: {', '.join(params)})")
        if item in names:
            raise ValueError(f"wrt names parameter {item!r} twice")
        names.append(item)
    return names, many


def numba_functions_too(transform):
    """`transform` (jvp, vjp, jacfwd, ...) taking a numba dispatcher (`@numba.njit`) for
    the Python function it compiles, whose source srcgrad differentiates."""
    @functools.wraps(transform)
    def taking(func, *args, **kwargs):
        return transform(numba_function(func) or func, *args, **kwargs)
    return taking


def _check_differentiable(name: str, value):
    """Return `value` as something srcgrad can differentiate, or raise TypeError."""
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
            isinstance(value, np.ndarray) and np.iscomplexobj(value)):
        raise TypeError(f"{label} is complex ({type(value).__name__}"
                        f"{f', dtype {value.dtype}' if isinstance(value, np.ndarray) else ''}): "
                        "srcgrad does not support complex numbers yet; pass real values "
                        "(e.g. the real and imaginary parts as separate arguments)")


def prepare_inputs(program, signature, wrt, args, kwargs):
    """(bound arguments, the generated function's inputs): arguments as the user's function
    binds them, those in `wrt` checked, then the data globals; arrays the function writes
    into are copied (the caller's are never modified)."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    values = dict(bound.arguments)
    for name in wrt:
        values[name] = _check_differentiable(name, values[name])
    inputs = [_plain(v) for v in values.values()]
    inputs += [_plain(v) for v in program.resolved.read_globals()]
    sources = program.resolved.global_sources
    labels = [f"argument {n!r}" for n in values] + [
        f"the global {sources.get(n, (None, n))[1]!r}" for n in program.resolved.data_globals]
    for label, value in zip(labels, inputs):
        _reject_complex(label, value)
    if program.mutated_inputs:
        names = list(values) + program.resolved.data_globals
        for k, name in enumerate(names):
            if name in program.mutated_inputs and isinstance(inputs[k], np.ndarray):
                inputs[k] = inputs[k].copy()
    return bound, inputs


def _plain(value):
    """0-d arrays become scalars (NOTE [scalars] in runtime/__init__.py); a Variable its value."""
    if isinstance(value, Variable):
        return value.value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    return value


def _shaped_like(grad, arg):
    if isinstance(arg, np.ndarray):
        return np.asarray(grad, dtype=np.float64).reshape(arg.shape)
    return float(grad)


class _Compiled(type):
    """Gradients are compiled by srcgrad already: numba refuses to jit one, naming its type,
    so the type's name says which order of decorators works."""

    def __repr__(cls):
        return (f"<class 'srcgrad.{cls.__name__}'>: a srcgrad gradient, which srcgrad compiles with "
                "numba itself; write @srcgrad.grad above @numba.njit, not below it")


class GradFunction(metaclass=_Compiled):
    """The callable `grad(f)` returns: same parameters as f, returns gradients."""

    def __init__(self, func, wrt=0, *, jit=True, with_value=False):
        func = numba_function(func) or func  # @numba.njit: differentiate the Python function
        self.wrt, self._many = _wrt_names(func, wrt)
        self._signature = inspect.signature(func)
        self._program = build(func, self.wrt, jit=jit)
        self._with_value = with_value
        functools.update_wrapper(self, func)
        self._fast = fast_call(self._program, func, self._signature, self.wrt, self._many,
                               with_value, self._non_scalar)

    def srcgrad_by_forward_mode(self):
        """What code that calls this gradient and is differentiated itself inlines."""
        return gradient_by_forward_mode(self)

    @property
    def source(self) -> str:
        """The whole generated module, as written to the cache."""
        return self._program.source

    @property
    def backend(self) -> str | None:
        """"numba" if the compiled code ran at the last call, "python" if not, None before."""
        return self._program.compiled.backend

    @property
    def fallback_reason(self) -> str | None:
        return self._program.compiled.fallback_reason

    def __call__(self, *args, **kwargs):
        if self._fast is not None and not kwargs:  # binding.py: plain positional calls
            result = self._fast(args)
            if result is not SLOW:
                return result
        bound, inputs = prepare_inputs(self._program, self._signature, self.wrt, args, kwargs)
        value, grads = self._program.compiled(*inputs)
        if np.ndim(value) != 0:
            self._non_scalar(value)
        grads = tuple(_shaped_like(g, bound.arguments[n]) for g, n in zip(grads, self.wrt))
        result = grads if self._many else grads[0]
        return (_plain(value), result) if self._with_value else result

    def _non_scalar(self, value):
        parsed = self._program.resolved.parsed
        raise NonScalarOutputError(
            f"{self.__wrapped__.__qualname__} returned an array of shape {np.shape(value)}; "
            "grad needs a scalar output. Reduce it to a scalar first (for example "
            "np.sum(y) or y[0]), or differentiate each output separately.",
            parsed.loc(parsed.tree.body[-1]))

    def __reduce__(self):
        """Pickles as the call that made it; f travels by value (pickling.py)."""
        return reduce_call(GradFunction, (self.__wrapped__, tuple(self.wrt) if self._many
                                          else self.wrt[0]),
                           {"jit": self._program.compiled.jit, "with_value": self._with_value},
                           seeds=[(self.__wrapped__, self.wrt, "reverse")])

    def __repr__(self):
        return f"<srcgrad gradient of {self.__wrapped__.__qualname__} wrt {', '.join(self.wrt)}>"


def show(func, wrt=0, mode="reverse") -> str:
    """Print the generated source for `func` and return it as a string.

    `mode` is "reverse" (the gradient, `f__grad`) or "forward" (the
    Jacobian-vector product, `f__jvp`).
    """
    if mode not in ("reverse", "forward"):
        raise ValueError(f"mode={mode!r} is not available: use mode='reverse' (gradients) or "
                         "mode='forward' (Jacobian-vector products)")
    func = numba_function(func) or func
    names, _ = _wrt_names(func, wrt)
    source = transform(func, names, mode)[2].source
    print(source)
    return source
