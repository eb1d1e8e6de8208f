"""`srcgrad.to_jax(f, *example_args)`: a Python + NumPy function as a JAX function.

Guarantees: the result takes f's arguments as JAX arrays (or NumPy values, or Python numbers)
of the shapes and dtypes of the examples, as JAX canonicalizes them (float32 without
jax_enable_x64), and returns f's output as a JAX array of the output's dtype. It works under
jax.jit, jax.grad, jax.vjp, jax.jvp, jax.jacfwd, jax.jacrev, jax.hessian and jax.vmap
(jax_primitive.py), to second order; a third derivative, or an argument of another shape or
dtype (at trace time), is an error that says so. Float arguments are differentiated, integer
and boolean ones passed through. Values are computed in float64 on the host by srcgrad's
compiled code. JAX is imported when to_jax is called, not when srcgrad is.
"""
from __future__ import annotations

import functools

import numpy as np

from ..frontend.parse import numba_function
from .arguments import check, declare
from .host import Host


def to_jax(func, *example_args, jit: bool = True):
    """`func` as a JAX function of arguments shaped like `example_args` (see the module
    docstring). `jit=False` runs srcgrad's generated code without numba."""
    import jax

    from . import jax_primitive

    func = numba_function(func) or func
    declared = declare(func, example_args, "to_jax")
    positions = [k for k, d in enumerate(declared) if d.differentiable]
    host = Host(func, positions, jit)
    canonical = [jax.dtypes.canonicalize_dtype(d.dtype) for d in declared]
    out = host.value(list(example_args))
    out_dtype = jax.dtypes.canonicalize_dtype(np.float64)
    bridge = jax_primitive.Bridge(
        host, [jax.ShapeDtypeStruct(d.shape, t) for d, t in zip(declared, canonical)],
        jax.ShapeDtypeStruct(out.shape, out_dtype))

    @functools.wraps(func)
    def bridged(*args):
        if len(args) != len(declared):
            raise TypeError(f"{func.__qualname__} takes {len(declared)} arguments "
                            f"({', '.join(d.name for d in declared)}); got {len(args)}")
        operands = []
        for d, want, arg in zip(declared, canonical, args):
            check(func, "to_jax", d, np.shape(arg), jax.numpy.result_type(arg), want)
            operands.append(jax.numpy.asarray(arg, dtype=want))
        return jax_primitive.call(bridge, "value", *operands)[0]
    bridged.srcgrad_host = host
    return bridged
