"""The user's derivative operators: `grad` and `value_and_grad`, and JAX's family
over srcgrad's generated code.

- `grad(f)` is a `GradFunction` (gradient.py); `grad` of a gradient is a
  `NestedGrad` (second_order.py).
- `jvp` runs the forward-mode transformation (`f__jvp`), `vjp` the reverse
  mode seeded by a cotangent (`f__vjp`, plus `f__value` for the value).
- `jacfwd` is one `jvp` per input element, `jacrev` one `vjp` per output
  element; with `sparse=True`, one per color of the detected sparsity pattern
  (sparsity.py), returned as a scipy.sparse matrix.
- `hvp` and `hessian` are reverse over forward (second_order.py): one Hessian-vector
  product per column. `jacfwd`/`jacrev` of a gradient or of a Jacobian is the
  second derivative (`second_order.second_derivative`).

Each (function, wrt, mode, jit) is transformed once per process (programs.py).
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from ..runtime import decomposition_curvature
from .gradient import GradFunction, _plain, _wrt_names, numba_functions_too, prepare_inputs
from .pickling import reduce_call, travels
from .programs import cached_program
from .second_order import (HessianVectorProduct, NestedGrad, hessian_function,
                           reverse_over_forward, second_derivative)
from .shaping import basis, is_float, like, shaped, tree, zeros_of
from . import pytree_derivatives, sparsity
from .arguments import bind_arguments
from .structured import applies, calls_of, differentiated

def _positional(func, primals, what: str):
    if not isinstance(primals, tuple):
        raise TypeError(f"{what} must be a tuple of the function's arguments (as in JAX), "
                        f"got {type(primals).__name__}")
    params = list(inspect.signature(func).parameters)
    if len(primals) > len(params):
        raise TypeError(f"{func.__qualname__} takes {len(params)} arguments; got "
                        f"{len(primals)} primals")
    return params


@numba_functions_too
def jvp(func, primals, tangents, *, jit=True):
    """`(func(*primals), J @ tangents)`: the Jacobian-vector product, by forward mode.

    `primals` and `tangents` are tuples with one entry per positional argument;
    a tangent has its primal's shape. Integer arguments are not differentiated
    (their tangents are ignored).
    """
    params = _positional(func, primals, "primals")
    if not isinstance(tangents, tuple) or len(tangents) != len(primals):
        raise TypeError("tangents must be a tuple with one tangent per primal")
    if _structured(func, params, primals):  # pytrees or objects: pytree_derivatives.py
        return pytree_derivatives.jvp(func, dict(zip(params, primals)),
                                      dict(zip(params, tangents)), jit)
    wrt = [params[k] for k, p in enumerate(primals) if is_float(p)]
    program = cached_program(func, wrt, "forward", jit)
    _, inputs = prepare_inputs(program, inspect.signature(func), wrt, primals, {})
    tans = [like(tangents[params.index(w)], primals[params.index(w)], f"the tangent of {w!r}")
            for w in wrt]
    out, tangent_out = program.compiled(*inputs, *tans)
    return tree(out), tree(tangent_out)


@numba_functions_too
@travels
def vjp(func, *primals, jit=True):
    """`(func(*primals), vjp_fn)`; `vjp_fn(cotangent)` returns one cotangent per primal.

    `vjp_fn` may be called any number of times; integer arguments get `None`.
    """
    params = _positional(func, primals, "primals")
    if _structured(func, params, primals):  # pytrees or objects: pytree_derivatives.py
        return pytree_derivatives.vjp(func, dict(zip(params, primals)), jit)
    wrt = [params[k] for k, p in enumerate(primals) if is_float(p)]
    program = cached_program(func, wrt, "vjp", jit)
    signature = inspect.signature(func)
    _, inputs = prepare_inputs(program, signature, wrt, primals, {})
    out = tree(program.compiled.call_helper(_value_name(program), *inputs))

    def vjp_fn(cotangent):
        if isinstance(out, tuple):
            raise TypeError(f"{func.__qualname__} returns a tuple; srcgrad.vjp differentiates "
                            "functions returning one value")
        ct = like(cotangent, out, "the cotangent")
        _, fresh = prepare_inputs(program, signature, wrt, primals, {})
        _, grads = program.compiled(*fresh, ct)
        by_name = dict(zip(wrt, grads))
        return tuple(shaped(by_name[params[k]], p) if params[k] in by_name else None
                     for k, p in enumerate(primals))
    return out, vjp_fn


def _structured(func, params, primals) -> bool:
    arguments = dict(zip(params, primals))
    return applies(arguments, differentiated(arguments))


def _value_name(program) -> str:
    """The primal `f__value` the vjp module holds beside `f__vjp`."""
    return f"{program.resolved.tree.name}__value"


def _forward_columns(func, signature, names, name, bound, args, kwargs, jit):
    program = cached_program(func, names, "forward", jit)
    x = bound.arguments[name]
    columns, out = [], None
    for e in basis(np.shape(x)):
        _, inputs = prepare_inputs(program, signature, names, args, kwargs)
        tans = [e if n == name else zeros_of(bound.arguments[n]) for n in names]
        out, tangent = program.compiled(*inputs, *tans)
        columns.append(tangent)
    if not columns:
        return np.zeros(np.shape(x))
    if isinstance(out, tuple):  # a Jacobian per output, as JAX gives them
        return tuple(_jacobian_of([c[k] for c in columns], out[k], x) for k in range(len(out)))
    return _jacobian_of(columns, out, x)


def _jacobian_of(columns, out, x):
    """d out / d x from its columns, one per element of x: shape out.shape + x.shape."""
    stacked = np.stack([np.asarray(c, dtype=np.float64) for c in columns], axis=-1)
    return _plain(stacked.reshape(np.shape(out) + np.shape(x)))


def _reverse_rows(func, signature, names, name, bound, args, kwargs, jit):
    program = cached_program(func, names, "vjp", jit)
    _, inputs = prepare_inputs(program, signature, names, args, kwargs)
    out = program.compiled.call_helper(_value_name(program), *inputs)
    rows = []
    for e in basis(np.shape(out)):
        _, inputs = prepare_inputs(program, signature, names, args, kwargs)
        _, grads = program.compiled(*inputs, e)
        rows.append(np.asarray(grads[names.index(name)], dtype=np.float64))
    x = bound.arguments[name]
    return _plain(np.stack(rows).reshape(np.shape(out) + np.shape(x)))


class Jacobian:
    """What `jacfwd` and `jacrev` return: a function giving the Jacobian (`out.shape +
    arg.shape`, a tuple of them for a tuple `wrt`), or with `sparse=True` a
    scipy.sparse matrix (out.size x arg.size) from one product per color."""

    def __init__(self, func, wrt, jit, mode, sparse):
        self.func, self.wrt, self.jit, self.mode, self.sparse = func, wrt, jit, mode, sparse
        self.names, self.many = _wrt_names(func, wrt)
        if sparse and self.many:
            raise NotImplementedError("sparse=True takes one argument position or name")
        self._signature = inspect.signature(func)
        self._last = None  # the program the last call ran
        functools.update_wrapper(self, func)

    @property
    def source(self) -> str | None:
        """The generated module the last call ran (None before the first call)."""
        return None if self._last is None else self._last.source

    @property
    def backend(self) -> str | None:
        """"numba" or "python": what ran at the last call (None before it)."""
        return None if self._last is None else self._last.compiled.backend

    def __call__(self, *args, **kwargs):
        if self.sparse:
            return sparsity.sparse_jacobian(self.func, self.names[0], self.mode, self.jit,
                                            args, kwargs)
        bound = bind_arguments(self._signature, args, kwargs, f"the {self!r}")
        calls = calls_of(self.func, self.mode, self.jit)
        if calls.applies(bound.arguments, self.names):  # pytrees or objects
            jacs = pytree_derivatives.jacobians(self.func, bound.arguments, self.names,
                                                self.mode, self.jit)
            self._last = calls.last.program
            return jacs if self.many else jacs[0]
        self._last = cached_program(self.func, self.names, self.mode, self.jit)
        which = _forward_columns if self.mode == "forward" else _reverse_rows
        jacs = tuple(which(self.func, self._signature, self.names, name, bound, args, kwargs,
                           self.jit) for name in self.names)
        return jacs if self.many else jacs[0]

    def __reduce__(self):  # pickling.py: the function travels by value
        return reduce_call(Jacobian, (self.func, self.wrt, self.jit, self.mode, self.sparse))

    def __repr__(self):
        how = "forward" if self.mode == "forward" else "reverse"
        return f"<srcgrad Jacobian ({how} mode) of {self.func.__qualname__} wrt {self.wrt!r}>"


def _second(inner, wrt, jit):
    """The Jacobian of a derivative (`grad(f)` or a Jacobian) with respect to `wrt`."""
    if isinstance(inner, GradFunction):
        base, names, many = inner.__wrapped__, inner.wrt, inner._many or inner._with_value
    else:
        base, names, many = inner.func, inner.names, inner.many or inner.sparse
    outer, outer_many = _wrt_names(base, wrt)
    if many or outer_many:
        raise NotImplementedError(
            "srcgrad differentiates a derivative of one argument (without value_and_grad or "
            f"sparse=True) with respect to one argument; got {inner!r} and wrt={wrt!r}")
    return second_derivative(base, names[0], outer[0], jit)


@numba_functions_too
@travels
def jacfwd(func, wrt=0, *, jit=True, sparse=False):
    """The Jacobian of `func` with respect to `wrt` by forward mode (see `Jacobian`).

    `jacfwd(srcgrad.grad(f))` is the Hessian of f; `jacfwd(jacrev(f))` the second
    derivative of a vector function (`out.shape + arg.shape + arg.shape`).
    """
    if isinstance(func, (GradFunction, Jacobian)) and not sparse:
        return _second(func, wrt, jit)
    return Jacobian(func, wrt, jit, "forward", sparse)


@numba_functions_too
@travels
def jacrev(func, wrt=0, *, jit=True, sparse=False):
    """The Jacobian of `func` with respect to `wrt` by reverse mode (see `Jacobian`)."""
    if isinstance(func, (GradFunction, Jacobian)) and not sparse:
        return _second(func, wrt, jit)
    return Jacobian(func, wrt, jit, "vjp", sparse)


@numba_functions_too
def hvp(func, wrt=0, *, jit=True):
    """A function `(func's arguments..., v) -> H v`: the Hessian of scalar `func` with
    respect to `wrt` times `v`, by reverse mode over forward mode, at a small multiple
    of the cost of one gradient."""
    return HessianVectorProduct(func, wrt, jit=jit)


@numba_functions_too
@travels
def hessian(func, wrt=0, *, jit=True, sparse=False):
    """A function giving the Hessian of scalar `func` with respect to one argument.

    Shape `arg.shape + arg.shape`, from one Hessian-vector product per column
    (symmetrised). `sparse=True`: a scipy.sparse matrix (arg.size x arg.size) from
    one product per color of the detected sparsity pattern.
    """
    names, many = _wrt_names(func, wrt)
    if many:
        raise NotImplementedError("srcgrad.hessian takes one argument position or name")
    if sparse:
        return functools.wraps(func)(lambda *args, **kwargs: sparsity.sparse_hessian(
            func, names[0], jit, args, kwargs))
    return _Reported(hessian_function(func, names[0], jit),
                     lambda: _hessian_program(func, names[0], jit))


def _hessian_program(func, name, jit):
    """The generated program a Hessian runs: reverse over forward."""
    return reverse_over_forward(func, [name] * 2, jit)[0]


class _Reported:
    """A derivative function with the `.source` and `.backend` of the program it runs."""

    def __init__(self, call, program):
        self._call, self._program = call, program
        functools.update_wrapper(self, call)

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    @property
    def source(self) -> str:
        return self._program().source

    @property
    def backend(self) -> str | None:
        return self._program().compiled.backend


def _decorator_or_call(func, wrt, jit, with_value, memory_limit=None):
    if func is None:
        return lambda f: _decorator_or_call(f, wrt, jit, with_value, memory_limit)
    if isinstance(func, (GradFunction, NestedGrad)):
        if with_value:
            raise NotImplementedError("value_and_grad of a gradient: use srcgrad.grad")
        return NestedGrad(func, wrt, jit=jit)
    return GradFunction(func, wrt, jit=jit, with_value=with_value, memory_limit=memory_limit)


def grad(func=None, wrt=0, *, jit=True, memory_limit=None):
    """The gradient of scalar-valued `func` with respect to argument(s) `wrt`.

    `wrt` is a position, a parameter name, or a tuple of them; the result
    returns one gradient, or a tuple for a tuple `wrt`. Works as `@grad` and
    `@grad(wrt=(0, 1))`. `jit=False` runs the generated code without numba.
    `memory_limit` ("200MB", or bytes) checkpoints the loops at the top of `func`
    (`srcgrad.checkpointed`), each keeping as many snapshots of its state as fit.
    """
    return _decorator_or_call(func, wrt, jit, with_value=False, memory_limit=memory_limit)


def value_and_grad(func=None, wrt=0, *, jit=True, memory_limit=None):
    """Like `grad`, but the result returns `(func(...), gradient(s))`."""
    return _decorator_or_call(func, wrt, jit, with_value=True, memory_limit=memory_limit)


decomposition_curvature.use_grad(grad)  # second order through svd's U/Vt and qr (issue 17)
