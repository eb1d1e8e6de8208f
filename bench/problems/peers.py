"""Setting up the peers the same way everywhere: 64-bit JAX, single-threaded PyTorch."""
from __future__ import annotations

import numpy as np


def jax():
    import jax as _jax
    _jax.config.update("jax_enable_x64", True)
    _jax.config.update("jax_platforms", "cpu")
    return _jax


def jax_sync(value):
    import jax as _jax
    return _jax.block_until_ready(value)


def torch():
    import torch as _torch
    if _torch.get_num_threads() != 1:
        _torch.set_num_threads(1)
    try:
        _torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set in this process
    return _torch


def to_numpy(value):
    """A JAX array, a torch tensor or a NumPy value as a float64 NumPy array."""
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def jax_single_array(jx, f, x):
    """The JAX `Impl` of a function of one array: jitted primal, jitted jax.grad."""
    from ..common import flat
    from . import Impl
    primal = jx.jit(f)

    def make_gradient():
        g = jx.jit(jx.grad(f))
        return lambda: g(x)
    return Impl(lambda: primal(x), make_gradient, lambda g: flat(to_numpy(g)), jax_sync)


def torch_single_tensor(th, f, x):
    """The PyTorch `Impl` of a function of one tensor: primal under no_grad, gradient
    by torch.autograd.grad."""
    from ..common import flat
    from . import Impl

    def primal():
        with th.no_grad():
            return f(x)

    def make_gradient():
        def g():
            v = x.detach().requires_grad_()
            (gv,) = th.autograd.grad(f(v), [v])
            return gv
        return g
    return Impl(primal, make_gradient, lambda g: flat(to_numpy(g)))
