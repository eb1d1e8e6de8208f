"""`srcgrad.to_torch(f)`: a Python + NumPy function as a PyTorch function.

Guarantees: the result takes f's arguments as CPU tensors (or numbers, or NumPy arrays, which
are constants) and returns f's output as a float64 tensor, through a torch.autograd.Function
(torch_function.py) whose backward runs srcgrad's compiled vector-Jacobian product: tensors in,
tensors out, torch.autograd.gradcheck passes, forward-mode AD and double backward work. Float
tensors are differentiated and must be float64 (srcgrad computes in float64); integer and
boolean tensors, numbers and NumPy arrays are constants. With example arguments
(`to_torch(f, *examples)`) the shapes and dtypes are declared and checked at every call. A
tensor on another device (a GPU) or a float tensor of another dtype is an error that says what
to do. PyTorch is imported when to_torch is called, not when srcgrad is.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from ..frontend.parse import numba_function
from .arguments import check, declare
from .host import Host


def _describe(torch, func, name, value):
    """(shape, dtype as NumPy names it) of an argument, after the device and dtype checks."""
    where = f"srcgrad.to_torch({func.__qualname__})"
    if torch.is_tensor(value):
        if value.device.type != "cpu":
            raise ValueError(
                f"{where}: argument {name!r} is on {value.device}; srcgrad's compiled code runs "
                f"on the CPU. Pass {name}.cpu() and move the result back with .to("
                f"'{value.device}')")
        if value.is_floating_point() and value.dtype != torch.float64:
            raise TypeError(f"{where}: argument {name!r} is {value.dtype}; srcgrad computes in "
                            f"float64: pass {name}.double()")
        if value.is_complex():
            raise TypeError(f"{where}: argument {name!r} is complex ({value.dtype}); srcgrad "
                            "does not support complex numbers yet")
        return tuple(value.shape), torch.empty(0, dtype=value.dtype).numpy().dtype
    array = np.asarray(value)
    return array.shape, array.dtype


def to_torch(func, *example_args, jit: bool = True):
    """`func` as a PyTorch function (see the module docstring); `jit=False` runs srcgrad's
    generated code without numba."""
    import torch

    from .torch_function import Value

    func = numba_function(func) or func
    params = list(inspect.signature(func).parameters)
    declared = declare(func, example_args, "to_torch") if example_args else None
    hosts: dict = {}  # the differentiated positions -> their Host

    @functools.wraps(func)
    def bridged(*args):
        if len(args) != len(params):
            raise TypeError(f"{func.__qualname__} takes {len(params)} arguments "
                            f"({', '.join(params)}); got {len(args)}")
        described = [_describe(torch, func, n, a) for n, a in zip(params, args)]
        for d, (shape, dtype) in zip(declared or (), described):
            check(func, "to_torch", d, shape, dtype, d.dtype)
        positions = tuple(k for k, a in enumerate(args)
                          if torch.is_tensor(a) and a.is_floating_point())
        if not positions:
            raise TypeError(f"srcgrad.to_torch({func.__qualname__}): no argument is a float "
                            "tensor, so there is nothing to differentiate (numbers and NumPy "
                            "arrays are constants)")
        if positions not in hosts:
            hosts[positions] = Host(func, list(positions), jit)
        return Value.apply(hosts[positions], *args)
    return bridged
