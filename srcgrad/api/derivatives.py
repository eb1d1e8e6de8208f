"""The user's derivative operators: `grad` and `value_and_grad`, and JAX's family
over srcgrad's generated code.

- `grad(f)` is a `GradFunction` (gradient.py); `grad` of a gradient is a
  `NestedGrad`.
- `jvp` runs the forward-mode transformation (`f__jvp`), `vjp` the reverse
  mode seeded by a cotangent (`f__vjp`, plus `f__value` for the value).
- `jacfwd` is one `jvp` per input element, `jacrev` one `vjp` per output
  element.
- Higher derivatives transform generated code again: the forward
  transformation of `f__jvp` (itself a Python function in the cache) gives
  second directional derivatives, so `hessian` and `grad(grad(f))` are
  forward over forward, compiled like everything else, never finite
  differences.

Each (function, wrt, mode, jit) is transformed once per process (programs.py).
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from .gradient import GradFunction, _check_differentiable, _plain, _wrt_names, prepare_inputs
from .programs import cached_program

def _is_float(value) -> bool:
    try:
        _check_differentiable("x", value)
    except TypeError:
        return False
    return True


def _tree(value):
    """0-d arrays to floats, through tuples."""
    if isinstance(value, tuple):
        return tuple(_tree(v) for v in value)
    return _plain(value)


def _like(value, template, what: str):
    """`value` as a float or float64 array of `template`'s shape, or ValueError."""
    if np.shape(value) != np.shape(template):
        raise ValueError(f"{what} has shape {np.shape(value)}, but it must have the shape "
                         f"{np.shape(template)} of the value it goes with")
    if np.ndim(template) == 0:
        return float(value)
    return np.array(value, dtype=np.float64)  # a copy: forward code may write into it


def _positional(func, primals, what: str):
    if not isinstance(primals, tuple):
        raise TypeError(f"{what} must be a tuple of the function's arguments (as in JAX), "
                        f"got {type(primals).__name__}")
    params = list(inspect.signature(func).parameters)
    if len(primals) > len(params):
        raise TypeError(f"{func.__qualname__} takes {len(params)} arguments; got "
                        f"{len(primals)} primals")
    return params


def jvp(func, primals, tangents, *, jit=True):
    """`(func(*primals), J @ tangents)`: the Jacobian-vector product, by forward mode.

    `primals` and `tangents` are tuples with one entry per positional argument;
    a tangent has its primal's shape. Integer arguments are not differentiated
    (their tangents are ignored).
    """
    params = _positional(func, primals, "primals")
    if not isinstance(tangents, tuple) or len(tangents) != len(primals):
        raise TypeError("tangents must be a tuple with one tangent per primal")
    wrt = [params[k] for k, p in enumerate(primals) if _is_float(p)]
    program = cached_program(func, wrt, "forward", jit)
    _, inputs = prepare_inputs(program, inspect.signature(func), wrt, primals, {})
    tans = [_like(tangents[params.index(w)], primals[params.index(w)], f"the tangent of {w!r}")
            for w in wrt]
    out, tangent_out = program.compiled(*inputs, *tans)
    return _tree(out), _tree(tangent_out)


def vjp(func, *primals, jit=True):
    """`(func(*primals), vjp_fn)`; `vjp_fn(cotangent)` returns one cotangent per primal.

    `vjp_fn` may be called any number of times; integer arguments get `None`.
    """
    params = _positional(func, primals, "primals")
    wrt = [params[k] for k, p in enumerate(primals) if _is_float(p)]
    program = cached_program(func, wrt, "vjp", jit)
    signature = inspect.signature(func)
    _, inputs = prepare_inputs(program, signature, wrt, primals, {})
    out = _tree(program.compiled.call_helper(_value_name(program), *inputs))

    def vjp_fn(cotangent):
        if isinstance(out, tuple):
            raise TypeError(f"{func.__qualname__} returns a tuple; srcgrad.vjp differentiates "
                            "functions returning one value")
        ct = _like(cotangent, out, "the cotangent")
        _, fresh = prepare_inputs(program, signature, wrt, primals, {})
        _, grads = program.compiled(*fresh, ct)
        by_name = dict(zip(wrt, grads))
        return tuple(_shaped(by_name[params[k]], p) if params[k] in by_name else None
                     for k, p in enumerate(primals))
    return out, vjp_fn


def _value_name(program) -> str:
    """The primal `f__value` the vjp module holds beside `f__vjp`."""
    return f"{program.resolved.tree.name}__value"


def _shaped(grad, arg):
    return float(grad) if np.ndim(arg) == 0 else np.asarray(grad, dtype=np.float64).reshape(
        np.shape(arg))


def _basis(shape):
    """Unit vectors e_k of `shape` (floats for scalars), in C order."""
    size = int(np.prod(shape))
    for k in range(size):
        e = np.zeros(size)
        e[k] = 1.0
        yield float(e[0]) if shape == () else e.reshape(shape)


def _jacobian_maker(func, wrt, jit, which):
    names, many = _wrt_names(func, wrt)
    signature = inspect.signature(func)

    @functools.wraps(func)
    def jacobian(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        jacs = tuple(which(func, signature, names, name, bound, args, kwargs, jit)
                     for name in names)
        return jacs if many else jacs[0]
    return jacobian


def _forward_columns(func, signature, names, name, bound, args, kwargs, jit):
    program = cached_program(func, names, "forward", jit)
    x = bound.arguments[name]
    columns, out = [], None
    for e in _basis(np.shape(x)):
        _, inputs = prepare_inputs(program, signature, names, args, kwargs)
        tans = [e if n == name else np.zeros_like(bound.arguments[n], dtype=np.float64)
                if np.ndim(bound.arguments[n]) else 0.0 for n in names]
        out, tangent = program.compiled(*inputs, *tans)
        columns.append(np.asarray(tangent, dtype=np.float64))
    if not columns:
        return np.zeros(np.shape(x))
    return _plain(np.stack(columns, axis=-1).reshape(np.shape(out) + np.shape(x)))


def _reverse_rows(func, signature, names, name, bound, args, kwargs, jit):
    program = cached_program(func, names, "vjp", jit)
    _, inputs = prepare_inputs(program, signature, names, args, kwargs)
    out = program.compiled.call_helper(_value_name(program), *inputs)
    rows = []
    for e in _basis(np.shape(out)):
        _, inputs = prepare_inputs(program, signature, names, args, kwargs)
        _, grads = program.compiled(*inputs, e)
        rows.append(np.asarray(grads[names.index(name)], dtype=np.float64))
    x = bound.arguments[name]
    return _plain(np.stack(rows).reshape(np.shape(out) + np.shape(x)))


def jacfwd(func, wrt=0, *, jit=True):
    """A function giving the Jacobian of `func` with respect to `wrt` by forward mode.

    Its shape is `out.shape + arg.shape`; a tuple `wrt` gives a tuple of Jacobians.
    `jacfwd(srcgrad.grad(f))` is the Hessian of f.
    """
    if isinstance(func, GradFunction):
        return hessian(func.__wrapped__, _same_wrt(func, wrt), jit=jit)
    return _jacobian_maker(func, wrt, jit, _forward_columns)


def jacrev(func, wrt=0, *, jit=True):
    """A function giving the Jacobian of `func` with respect to `wrt` by reverse mode.

    Its shape is `out.shape + arg.shape`; a tuple `wrt` gives a tuple of Jacobians.
    """
    if isinstance(func, GradFunction):
        return hessian(func.__wrapped__, _same_wrt(func, wrt), jit=jit)
    return _jacobian_maker(func, wrt, jit, _reverse_rows)


def _same_wrt(gradient: GradFunction, wrt):
    names, many = _wrt_names(gradient.__wrapped__, wrt)
    if many or gradient._many or names != gradient.wrt:
        raise NotImplementedError(
            "srcgrad computes the Jacobian of a gradient (a Hessian) with respect to the same "
            f"single argument; got the gradient with respect to {gradient.wrt} and wrt={wrt!r}")
    return names[0]


def _second_order(func, name, jit):
    """(first-order forward program, forward transformation of its generated code)."""
    first = cached_program(func, [name], "forward", jit)
    return first, cached_program(first.compiled.python, [name], "forward", jit)


def hessian(func, wrt=0, *, jit=True):
    """A function giving the Hessian of scalar `func` with respect to one argument.

    Shape `arg.shape + arg.shape`. Computed by forward mode over srcgrad's own
    forward-mode code: entry (i, j) is the second directional derivative along
    e_i, then e_j (every entry is computed; symmetry is not imposed).
    """
    names, many = _wrt_names(func, wrt)
    if many:
        raise NotImplementedError("srcgrad.hessian takes one argument position or name")
    name = names[0]
    signature = inspect.signature(func)

    @functools.wraps(func)
    def hess(*args, **kwargs):
        first, second = _second_order(func, name, jit)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        shape = np.shape(bound.arguments[name])
        basis = list(_basis(shape))
        h = np.empty((len(basis), len(basis)))
        for i, u in enumerate(basis):
            for j, v in enumerate(basis):
                _, inputs = prepare_inputs(first, signature, names, args, kwargs)
                (value, _), (_, entry) = second.compiled(*inputs, u, v)
                if np.ndim(value) != 0:
                    raise ValueError(f"srcgrad.hessian needs a scalar function; "
                                     f"{func.__qualname__} returned shape {np.shape(value)}")
                h[i, j] = entry
        return _plain(h.reshape(shape + shape))
    return hess


class NestedGrad:
    """`grad(grad(f))` and deeper, for a scalar argument at each level: forward mode nested.

    The k-th derivative is the k-times forward transformation of f, each level
    differentiating the code the previous level generated, with unit tangents.
    """

    def __init__(self, inner, wrt=0, *, jit=True):
        base = inner.base if isinstance(inner, NestedGrad) else inner.__wrapped__
        levels = inner.levels if isinstance(inner, NestedGrad) else inner.wrt
        if isinstance(inner, GradFunction) and (inner._many or inner._with_value):
            raise NotImplementedError("srcgrad.grad of a gradient needs the inner gradient with "
                                      "respect to one argument, without value_and_grad")
        names, many = _wrt_names(base, wrt)
        if many:
            raise NotImplementedError("srcgrad.grad of a gradient takes one argument")
        self.base, self.levels, self.jit = base, list(levels) + names, jit
        self._signature = inspect.signature(base)
        functools.update_wrapper(self, base)

    def _programs(self):
        programs = [cached_program(self.base, [self.levels[0]], "forward", self.jit)]
        for name in self.levels[1:]:
            programs.append(cached_program(programs[-1].compiled.python, [name], "forward", self.jit))
        return programs

    def __call__(self, *args, **kwargs):
        programs = self._programs()
        bound, inputs = prepare_inputs(programs[0], self._signature, sorted(set(self.levels)),
                                       args, kwargs)
        for name in self.levels:
            if np.ndim(bound.arguments[name]) != 0:
                raise TypeError(f"srcgrad.grad of a gradient needs a scalar argument {name!r}; "
                                "for arrays use srcgrad.hessian or srcgrad.jacfwd")
        result = programs[-1].compiled(*inputs, *([1.0] * len(self.levels)))
        for _ in self.levels:
            result = result[1]
        return _plain(result)

    def __repr__(self):
        return f"<srcgrad derivative of order {len(self.levels)} of {self.base.__qualname__}>"


def _decorator_or_call(func, wrt, jit, with_value):
    if func is None:
        return lambda f: _decorator_or_call(f, wrt, jit, with_value)
    if isinstance(func, (GradFunction, NestedGrad)):
        if with_value:
            raise NotImplementedError("value_and_grad of a gradient: use srcgrad.grad")
        return NestedGrad(func, wrt, jit=jit)
    return GradFunction(func, wrt, jit=jit, with_value=with_value)


def grad(func=None, wrt=0, *, jit=True):
    """The gradient of scalar-valued `func` with respect to argument(s) `wrt`.

    `wrt` is a position, a parameter name, or a tuple of them; the result
    returns one gradient, or a tuple for a tuple `wrt`. Works as `@grad` and
    `@grad(wrt=(0, 1))`. `jit=False` runs the generated code without numba.
    """
    return _decorator_or_call(func, wrt, jit, with_value=False)


def value_and_grad(func=None, wrt=0, *, jit=True):
    """Like `grad`, but the result returns `(func(...), gradient(s))`."""
    return _decorator_or_call(func, wrt, jit, with_value=True)
