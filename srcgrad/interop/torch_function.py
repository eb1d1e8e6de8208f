"""srcgrad's generated code as torch.autograd.Functions. Imported by srcgrad.to_torch only
(it imports PyTorch).

- `Value.apply(host, *args)` is f(args) as a float64 tensor. Its `backward` is `VJP.apply`,
  itself differentiable once more, so double backward (torch.autograd.grad with
  create_graph=True, torch.autograd.functional.hessian, gradgradcheck) works; its `jvp` is
  srcgrad's forward mode (torch.autograd.forward_ad, gradcheck with check_forward_ad=True).
- `VJP.apply(host, gy, *args)` is J^T gy, one tensor per differentiated argument. Its
  backward takes the cotangents r of those: J r for gy and gy . D^2 f[r, .] for the
  arguments (host.second_vjp); a third derivative is an error (once_differentiable).
Every number comes from host.py; arguments are CPU tensors (to_torch checks), numbers or
NumPy arrays.
"""
from __future__ import annotations

import numpy as np
import torch
from torch.autograd.function import once_differentiable


def _numpy(value):
    return value.detach().numpy() if torch.is_tensor(value) else value


def _tensors(arrays) -> tuple:
    return tuple(torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in arrays)


def _keep(ctx, host, args) -> None:
    """Save `args` (tensors through autograd, so second derivatives reach them)."""
    ctx.host = host
    ctx.save_for_backward(*[a if torch.is_tensor(a) else None for a in args])
    ctx.others = [None if torch.is_tensor(a) else a for a in args]
    ctx.arrays = [_numpy(a) for a in args]


def _args(ctx) -> list:
    return [o if t is None else t for t, o in zip(ctx.saved_tensors, ctx.others)]


def _zeros_for(positions, arrays, values) -> list:
    return [np.zeros(np.shape(arrays[k])) if v is None else _numpy(v)
            for k, v in zip(positions, values)]


def _per_argument(host, count: int, grads) -> list:
    out = [None] * count
    for k, g in zip(host.positions, grads):
        out[k] = g
    return out


class Value(torch.autograd.Function):
    @staticmethod
    def forward(ctx, host, *args):
        _keep(ctx, host, args)
        return torch.from_numpy(host.value(ctx.arrays))

    @staticmethod
    def backward(ctx, gy):
        args = _args(ctx)
        grads = VJP.apply(ctx.host, gy, *args)
        return (None, *_per_argument(ctx.host, len(args), grads))

    @staticmethod
    def jvp(ctx, _, *tangents):
        host = ctx.host
        t = _zeros_for(host.positions, ctx.arrays, [tangents[k] for k in host.positions])
        return torch.from_numpy(host.jvp(ctx.arrays, t))


class VJP(torch.autograd.Function):
    @staticmethod
    def forward(ctx, host, gy, *args):
        _keep(ctx, host, args)
        ctx.gy = gy.detach().numpy()
        return _tensors(host.vjp(ctx.arrays, ctx.gy, ctx.gy.shape))

    @staticmethod
    @once_differentiable
    def backward(ctx, *cotangents):
        host, arrays = ctx.host, ctx.arrays
        r = _zeros_for(host.positions, arrays, cotangents)
        d_gy = torch.from_numpy(host.jvp(arrays, r))
        d_args = _tensors(host.second_vjp(arrays, ctx.gy, r, ctx.gy.shape))
        return (None, d_gy, *_per_argument(host, len(arrays), d_args))
