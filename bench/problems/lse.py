"""lse: the stable log-sum-exp, LSE(x) = a + log(sum_i exp(x_i - a)) with a = max(x).

GradBench's `lse` eval: x = np.random.rand(n) after np.random.seed(31337),
for n = 2500, 5000, ..., 1280000 in turn. The gradient is softmax(x).
"""
from __future__ import annotations

import numpy as np

from ..common import flat, gradbench_stream, njit_with, once
from . import Impl
from .peers import jax_single_array, torch_single_tensor

SIZES = {
    "quick": [{"n": 10000}, {"n": 160000}],
    "full": [{"n": 2500}, {"n": 10000}, {"n": 40000}, {"n": 160000}, {"n": 640000},
             {"n": 1280000}],
}
XLABEL = "n (length of x)"
GRADBENCH_N = [2500 * 2 ** i for i in range(10)]


def label(size):
    return f"n={size['n']}"


def x(size):
    return size["n"]


def generate(size):
    x_ = gradbench_stream(31337, GRADBENCH_N, size["n"], lambda n: np.random.rand(n))
    return {"x": x_}


# --- the natural loop form srcgrad differentiates --------------------------------------

def lse(x):
    n = x.shape[0]
    a = x[0]
    for i in range(1, n):
        a = max(a, x[i])
    s = 0.0
    for i in range(n):
        s += np.exp(x[i] - a)
    return np.log(s) + a


def srcgrad_impl(data):
    import srcgrad
    x_ = data["x"]
    primal = njit_with(lse)

    def make_gradient():
        g = srcgrad.grad(lse)
        return lambda: g(x_)
    return Impl(lambda: primal(x_), make_gradient, flat)


# --- peers -------------------------------------------------------------------------------

def jax_impl(data):
    from .peers import jax
    jx = jax()
    import jax.numpy as jnp
    x_ = jnp.asarray(data["x"])

    def f(v):
        a = jx.lax.stop_gradient(jnp.max(v))  # the shift does not change the value
        return a + jnp.log(jnp.sum(jnp.exp(v - a)))
    return jax_single_array(jx, f, x_)


def torch_impl(data):
    from .peers import torch
    th = torch()
    x_ = th.from_numpy(data["x"].copy())

    def f(v):
        a = th.max(v).detach()
        return a + th.log(th.sum(th.exp(v - a)))

    return torch_single_tensor(th, f, x_)


def autograd_impl(data):
    import autograd
    import autograd.numpy as anp
    x_ = data["x"]

    def f(v):
        a = anp.max(v)
        return a + anp.log(anp.sum(anp.exp(v - a)))

    def make_gradient():
        g = autograd.grad(f)
        return lambda: g(x_)
    return Impl(lambda: f(x_), make_gradient, flat)


# --- reference and GradBench ------------------------------------------------------------

def reference(data):
    x_ = data["x"]
    e = np.exp(x_ - np.max(x_))
    return e / np.sum(e), None, "hand-written adjoint (softmax)"


def _prepare(inp):
    return np.asarray(inp["x"], dtype=np.float64)


def _gb_primal(inp):
    x_ = _prepare(inp)
    f = once("lse.primal", lambda: njit_with(lse))
    return (lambda: f(x_)), float


def _gb_gradient(inp):
    import srcgrad
    x_ = _prepare(inp)
    g = once("lse.grad", lambda: srcgrad.grad(lse))
    return (lambda: g(x_)), lambda v: v.tolist()


gradbench = {"primal": _gb_primal, "gradient": _gb_gradient}
GRADBENCH_WARMUP = [("primal", {"x": [0.1, 0.7, 0.3]}), ("gradient", {"x": [0.1, 0.7, 0.3]})]
