"""llsq: the linear least-squares objective of a polynomial fit (cmpad's llsq_obj).

    y(x) = 1/2 sum_i (s_i - sum_j x_j t_i^j)^2,  t_i = -1 + 2 i / (n - 1),  s_i = sign(t_i)

GradBench's `llsq` eval: m = 128 coefficients, x = np.random.rand(m) after
np.random.seed(31337), once per n = 16, 32, ..., 16392 in turn.
"""
from __future__ import annotations

import numpy as np

from ..common import flat, gradbench_stream, njit_with, once
from . import Impl
from .peers import jax_single_array, torch_single_tensor

SIZES = {
    "quick": [{"n": 64, "m": 128}, {"n": 1024, "m": 128}],
    "full": [{"n": 16, "m": 128}, {"n": 64, "m": 128}, {"n": 256, "m": 128},
             {"n": 1024, "m": 128}, {"n": 4096, "m": 128}, {"n": 16392, "m": 128}],
}
XLABEL = "n (data points; m = 128 coefficients)"
GRADBENCH_N = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8196, 16392]


def label(size):
    return f"n={size['n']},m={size['m']}"


def x(size):
    return size["n"]


def generate(size):
    m = size["m"]
    sizes = GRADBENCH_N if m == 128 else []
    x_ = gradbench_stream(31337, sizes, size["n"], lambda n: np.random.rand(m))
    return {"x": x_, "n": size["n"]}


# --- the natural loop form srcgrad differentiates --------------------------------------

def llsq(x, n):
    m = x.shape[0]
    total = 0.0
    for i in range(n):
        t = -1.0 + i * 2.0 / (n - 1)
        r = np.sign(t)
        for j in range(m):
            r -= x[j] * t ** j
        total += r * r
    return total / 2.0


def srcgrad_impl(data):
    import srcgrad
    x_, n = data["x"], data["n"]
    primal = njit_with(llsq)

    def make_gradient():
        g = srcgrad.grad(llsq)
        return lambda: g(x_, n)
    return Impl(lambda: primal(x_, n), make_gradient, flat)


# --- peers: the vectorized form -----------------------------------------------------------

def jax_impl(data):
    from .peers import jax
    jx = jax()
    import jax.numpy as jnp
    x_, n = jnp.asarray(data["x"]), data["n"]
    m = x_.shape[0]

    def f(v):
        t = -1.0 + jnp.arange(n) * 2.0 / (n - 1)
        r = jnp.sign(t) - (t[:, None] ** jnp.arange(m)[None, :]) @ v
        return 0.5 * jnp.sum(r * r)
    return jax_single_array(jx, f, x_)


def torch_impl(data):
    from .peers import torch
    th = torch()
    x_, n = th.from_numpy(data["x"].copy()), data["n"]
    m = x_.shape[0]

    def f(v):
        t = -1.0 + th.arange(n, dtype=th.float64) * 2.0 / (n - 1)
        r = th.sign(t) - (t[:, None] ** th.arange(m, dtype=th.float64)[None, :]) @ v
        return 0.5 * th.sum(r * r)

    return torch_single_tensor(th, f, x_)


def autograd_impl(data):
    import autograd
    import autograd.numpy as anp
    x_, n = data["x"], data["n"]
    m = x_.shape[0]

    def f(v):
        t = -1.0 + np.arange(n) * 2.0 / (n - 1)
        r = np.sign(t) - anp.dot(t[:, None] ** np.arange(m)[None, :], v)
        return 0.5 * anp.sum(r * r)

    def make_gradient():
        g = autograd.grad(f)
        return lambda: g(x_)
    return Impl(lambda: f(x_), make_gradient, flat)


# --- reference and GradBench ------------------------------------------------------------

def reference(data):
    x_, n = data["x"], data["n"]
    t = -1.0 + np.arange(n) * 2.0 / (n - 1)
    powers = t[:, None] ** np.arange(x_.shape[0])[None, :]
    r = np.sign(t) - powers @ x_
    return -(powers.T @ r), None, "hand-written adjoint (-T^T r)"


def _gb_primal(inp):
    x_, n = np.asarray(inp["x"], dtype=np.float64), int(inp["n"])
    f = once("llsq.primal", lambda: njit_with(llsq))
    return (lambda: f(x_, n)), float


def _gb_gradient(inp):
    import srcgrad
    x_, n = np.asarray(inp["x"], dtype=np.float64), int(inp["n"])
    g = once("llsq.grad", lambda: srcgrad.grad(llsq))
    return (lambda: g(x_, n)), lambda v: v.tolist()


gradbench = {"primal": _gb_primal, "gradient": _gb_gradient}
GRADBENCH_WARMUP = [(f, {"x": [0.5, 0.25, 0.125], "n": 4}) for f in ("primal", "gradient")]
