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
import types

import numpy as np

from .memory import parse_memory_limit
from ..pipeline import build, transform
from .binding import SLOW, fast_call
from . import structured
from .pickling import reduce_call
from .programs import gradient_by_forward_mode
from ..errors import NonScalarOutputError
from ..frontend.parse import numba_function
from .arguments import (_check_differentiable, _plain, _reject_complex, _shaped_like,  # noqa: F401
                        bind_arguments, inputs_of, prepare_inputs, value_like)


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


class _Compiled(type):
    """Gradients are compiled by srcgrad already: numba refuses to jit one, naming its type,
    so the type's name says which order of decorators works."""

    def __repr__(cls):
        return (f"<class 'srcgrad.{cls.__name__}'>: a srcgrad gradient, which srcgrad compiles with "
                "numba itself; write @srcgrad.grad above @numba.njit, not below it")


class GradFunction(metaclass=_Compiled):
    """The callable `grad(f)` returns: same parameters as f, returns gradients."""

    def __init__(self, func, wrt=0, *, jit=True, with_value=False, memory_limit=None):
        func = numba_function(func) or func  # @numba.njit: differentiate the Python function
        func, self._self, wrt = structured.unbind(func, wrt)  # a bound method: its instance
        self.wrt, self._many = _wrt_names(func, wrt)
        self._signature = inspect.signature(func)
        self._memory_limit = parse_memory_limit(memory_limit)
        self._program = structured.eager_build(func, self.wrt, jit,  # None: structures only
                                               self._memory_limit)
        self._structured = structured.calls_of(func, "reverse", jit)
        self._last = self._program
        self._with_value = with_value
        functools.update_wrapper(self, func)
        self._fast = None if self._program is None or self._self is not None else fast_call(
            self._program, func, self._signature, self.wrt, self._many, with_value,
            self._non_scalar)

    def srcgrad_by_forward_mode(self):
        """What code that calls this gradient and is differentiated itself inlines."""
        return gradient_by_forward_mode(self)

    @property
    def source(self) -> str | None:
        """The whole generated module (of the last call's structures), as written to the
        cache; None for a function built at its first call, before it."""
        return None if self._last is None else self._last.source

    @property
    def compiled_source(self) -> str | None:
        """The compiled form numba ran at the last call: the generated function with its
        runs of elementwise statements as loops, made for that call's argument kinds
        (backend/fused.py); None before a compiled call or when there is none."""
        compiled = None if self._last is None else self._last.compiled
        form = getattr(compiled, "form", None)
        if form is None or form.state != "on" or form.path is None:
            return None
        with open(form.path) as handle:
            return handle.read()

    @property
    def backend(self) -> str | None:
        """"numba" if the compiled code ran at the last call, "python" if not, None before."""
        return None if self._last is None else self._last.compiled.backend

    @property
    def fallback_reason(self) -> str | None:
        return None if self._last is None else self._last.compiled.fallback_reason

    def __call__(self, *args, **kwargs):
        if self._self is not None:
            args = (self._self, *args)
        if self._fast is not None and not kwargs:  # binding.py: plain positional calls
            self._last = self._program
            result = self._fast(args)
            if result is not SLOW:
                return result
        what = f"the gradient of {self.__wrapped__.__qualname__} with respect to " \
               f"{', '.join(self.wrt)}"
        arguments = bind_arguments(self._signature, args, kwargs, what).arguments
        if self._structured.applies(arguments, self.wrt):  # pytrees or objects (structured.py)
            layout = self._structured.layout(arguments, self.wrt)
            program, inputs = layout.program, layout.inputs(arguments)
        else:
            program = self._program or build(self.__wrapped__, self.wrt,
                                             jit=self._structured.jit,
                                             memory_limit=self._memory_limit)
            layout, inputs = None, inputs_of(program, dict(arguments), self.wrt)
        self._last = program
        value, grads = program.compiled(*inputs)
        if np.ndim(value) != 0:
            self._non_scalar(value, program)
        if layout is None:
            grads = tuple(_shaped_like(g, arguments[n], n) for g, n in zip(grads, self.wrt))
        else:
            grads = layout.derivatives(arguments, dict(zip(layout.flat_wrt, grads)))
        result = grads if self._many else grads[0]
        if not self._with_value:
            return result
        values = layout.values(arguments).values() if layout else arguments.values()
        return value_like(value, [*values, *program.resolved.read_globals()]), result

    def tape_report(self, *args, **kwargs):
        """What the gradient at these arguments will record, per site of the user's code,
        counted by running its forward sweep once as Python, recording nothing
        (tape_report.py); print it for a table."""
        from .tape_report import tape_report
        return tape_report(self, args, kwargs)

    def _non_scalar(self, value, program=None):
        parsed = (program or self._program).resolved.parsed
        raise NonScalarOutputError(
            f"{self.__wrapped__.__qualname__} returned an array of shape {np.shape(value)}; "
            "grad needs a scalar output. Reduce it to a scalar first (for example "
            "np.sum(y) or y[0]), or differentiate each output separately.",
            parsed.loc(parsed.tree.body[-1]))

    def __reduce__(self):
        """Pickles as the call that made it; f (a bound method's instance too) travels by
        value (pickling.py)."""
        func = self.__wrapped__ if self._self is None else types.MethodType(self.__wrapped__,
                                                                            self._self)
        return reduce_call(GradFunction, (func, tuple(self.wrt) if self._many
                                          else self.wrt[0]),
                           {"jit": self._structured.jit, "with_value": self._with_value,
                            "memory_limit": self._memory_limit},
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
