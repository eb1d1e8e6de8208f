"""ode: Runge-Kutta 4 for y_0' = x_0, y_i' = x_i y_{i-1}, y(0) = 0, up to t = 2 in s steps
(cmpad's an_ode); the gradient is that of the last element y_{n-1}(2) with respect to x.

GradBench's `ode` eval: x = np.random.rand(n) after np.random.seed(31337), once
per (n, s) with n in 1000, 10000, 100000 and s in 1, 10, 100, in order of n*s.
"""
from __future__ import annotations

import numpy as np

from ..common import flat, gradbench_stream, njit_with, once
from . import Impl
from .peers import jax_single_array, torch_single_tensor

SIZES = {
    "quick": [{"n": 1000, "s": 10}, {"n": 10000, "s": 10}],
    "full": [{"n": 1000, "s": 10}, {"n": 10000, "s": 10}, {"n": 1000, "s": 100},
             {"n": 100000, "s": 10}, {"n": 10000, "s": 100}, {"n": 100000, "s": 100}],
}
XLABEL = "n * s (unknowns x steps)"
GRADBENCH_NS = sorted([(n, s) for n in (1000, 10000, 100000) for s in (1, 10, 100)],
                      key=lambda v: v[0] * v[1])


def label(size):
    return f"n={size['n']},s={size['s']}"


def x(size):
    return size["n"] * size["s"]


def generate(size):
    x_ = gradbench_stream(31337, GRADBENCH_NS, (size["n"], size["s"]),
                          lambda ns: np.random.rand(ns[0]))
    return {"x": x_, "s": size["s"]}


# --- the natural loop form srcgrad differentiates --------------------------------------

def ode_fun(x, y):
    n = x.shape[0]
    z = np.empty(n)
    z[0] = x[0]
    for i in range(1, n):
        z[i] = x[i] * y[i - 1]
    return z


def ode(x, s):
    """The primal GradBench asks for: the whole final state."""
    n = x.shape[0]
    h = 2.0 / s
    y = np.zeros(n)
    for step in range(s):
        k1 = ode_fun(x, y)
        k2 = ode_fun(x, y + h * k1 / 2.0)
        k3 = ode_fun(x, y + h * k2 / 2.0)
        k4 = ode_fun(x, y + h * k3)
        y = y + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0
    return y


def ode_last(x, s):
    """The scalar srcgrad differentiates: the last element of the final state."""
    y = ode(x, s)
    return y[x.shape[0] - 1]


def srcgrad_impl(data):
    import srcgrad
    x_, s = data["x"], data["s"]
    primal = njit_with(ode_last, ode, ode_fun)

    def make_gradient():
        g = srcgrad.grad(ode_last)
        return lambda: g(x_, s)
    return Impl(lambda: primal(x_, s), make_gradient, flat)


# --- peers: vectorized right-hand side, a loop over steps ---------------------------------

def _rk4(xp_concat, x_, s):
    h = 2.0 / s

    def f(y):
        return xp_concat([x_[:1], x_[1:] * y[:-1]])

    def step(y):
        k1 = f(y)
        k2 = f(y + h * k1 / 2.0)
        k3 = f(y + h * k2 / 2.0)
        k4 = f(y + h * k3)
        return y + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0
    return step


def jax_impl(data):
    from .peers import jax
    jx = jax()
    import jax.numpy as jnp
    x_, s = jnp.asarray(data["x"]), data["s"]

    def f(v):
        step = _rk4(jnp.concatenate, v, s)
        y, _ = jx.lax.scan(lambda y, _: (step(y), None), jnp.zeros_like(v), None, length=s)
        return y[-1]
    return jax_single_array(jx, f, x_)


def torch_impl(data):
    from .peers import torch
    th = torch()
    x_, s = th.from_numpy(data["x"].copy()), data["s"]

    def f(v):
        step = _rk4(th.cat, v, s)
        y = th.zeros_like(v)
        for _ in range(s):
            y = step(y)
        return y[-1]

    return torch_single_tensor(th, f, x_)


def autograd_impl(data):
    import autograd
    import autograd.numpy as anp
    x_, s = data["x"], data["s"]

    def f(v):
        step = _rk4(anp.concatenate, v, s)
        y = anp.zeros(v.shape[0])
        for _ in range(s):
            y = step(y)
        return y[-1]

    def make_gradient():
        g = autograd.grad(f)
        return lambda: g(x_)
    return Impl(lambda: f(x_), make_gradient, flat)


# --- reference: a hand-written adjoint of RK4 ---------------------------------------------

def reference(data):
    x_, s = data["x"], data["s"]
    n, h = x_.shape[0], 2.0 / s

    def f(u):
        return np.concatenate([x_[:1], x_[1:] * u[:-1]])

    def f_t(u, kbar, xbar):
        """Add d f(u)/dx ^T kbar to xbar; return d f(u)/du ^T kbar."""
        xbar[0] += kbar[0]
        xbar[1:] += u[:-1] * kbar[1:]
        ubar = np.zeros(n)
        ubar[:-1] = x_[1:] * kbar[1:]
        return ubar

    ys = np.empty((s, n))
    y = np.zeros(n)
    for step in range(s):
        ys[step] = y
        k1 = f(y)
        k2 = f(y + h * k1 / 2)
        k3 = f(y + h * k2 / 2)
        k4 = f(y + h * k3)
        y = y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
    ybar = np.zeros(n)
    ybar[-1] = 1.0
    xbar = np.zeros(n)
    for step in range(s - 1, -1, -1):
        y = ys[step]
        k1 = f(y)
        u2 = y + h * k1 / 2
        k2 = f(u2)
        u3 = y + h * k2 / 2
        k3 = f(u3)
        u4 = y + h * k3
        kb1, kb2, kb3, kb4 = h / 6 * ybar, h / 3 * ybar, h / 3 * ybar, h / 6 * ybar
        new = ybar.copy()
        ub = f_t(u4, kb4, xbar)
        new += ub
        kb3 = kb3 + h * ub
        ub = f_t(u3, kb3, xbar)
        new += ub
        kb2 = kb2 + h / 2 * ub
        ub = f_t(u2, kb2, xbar)
        new += ub
        kb1 = kb1 + h / 2 * ub
        new += f_t(y, kb1, xbar)
        ybar = new
    return xbar, None, "hand-written adjoint of RK4"


def _prepare(inp):
    return np.asarray(inp["x"], dtype=np.float64), int(inp["s"])


def _gb_primal(inp):
    x_, s = _prepare(inp)
    f = once("ode.primal", lambda: njit_with(ode, ode_fun))
    return (lambda: f(x_, s)), lambda v: v.tolist()


def _gb_gradient(inp):
    import srcgrad
    x_, s = _prepare(inp)
    g = once("ode.grad", lambda: srcgrad.grad(ode_last))
    return (lambda: g(x_, s)), lambda v: v.tolist()


gradbench = {"primal": _gb_primal, "gradient": _gb_gradient}
GRADBENCH_WARMUP = [(f, {"x": [0.5, 0.25, 0.125], "s": 2}) for f in ("primal", "gradient")]
