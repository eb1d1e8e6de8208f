"""saddle: min over x of max over y of f(x, y) = (x1^2 + x2^2) - (y1^2 + y2^2), both by
gradient descent (nested AD).

GradBench's `saddle` eval (Pearlmutter and Siskind): from `start`, r1 = argmin_x of
max_y f(x, y) (the inner max by the same solver, from `start`), then r2 = argmax_y
f(r1, y); the output is r1 then r2. The solver is GradBench's (particle.argmin). For
start (1, 1) every entry is expected to be 8.246324826140356e-06.

srcgrad: `inner_max` writes the inner solver out as a `while` loop calling
`srcgrad.grad(neg_f, wrt=1)`, and srcgrad differentiates the whole loop (the outer
derivative by reverse mode for "r?" and by one JVP per element for "f?"; the inner
gradient inlined in differentiated code is always forward mode, so the variants
differ in the outer mode only). PyTorch (`torch_saddle`) runs the same solver eagerly,
reverse over reverse or forward over forward.
"""
from __future__ import annotations

import numpy as np

import srcgrad

from .particle import argmin

EXPECTED = [8.246324826140356e-06] * 4


def f(x, y):
    return (x[0] ** 2 + x[1] ** 2) - (y[0] ** 2 + y[1] ** 2)


def neg_f(x, y):
    return (y[0] ** 2 + y[1] ** 2) - (x[0] ** 2 + x[1] ** 2)


grad_neg_f_y = srcgrad.grad(neg_f, wrt=1)


def inner_max(x, start):
    """max_y f(x, y) by GradBench's solver from `start` (argmin of -f)."""
    y = start * 1.0
    fy = neg_f(x, y)
    gy = grad_neg_f_y(x, y)
    eta = 1e-5
    i = 0
    going = True
    while going:
        if np.sqrt(np.sum(gy * gy)) <= 1e-5:
            going = False
        elif i == 10:
            eta = 2.0 * eta
            i = 0
        else:
            y_new = y - eta * gy
            if np.sqrt(np.sum((y - y_new) ** 2)) <= 1e-5:
                going = False
            else:
                f_new = neg_f(x, y_new)
                if f_new < fy:
                    y = y_new
                    fy = f_new
                    gy = grad_neg_f_y(x, y_new)
                    i = i + 1
                else:
                    eta = eta / 2.0
                    i = 0
    return f(x, y)


def _outer_gradient(outer: str, func, wrt: int):
    if outer == "r":
        return srcgrad.grad(func, wrt=wrt)
    jac = srcgrad.jacfwd(func, wrt=wrt)
    return lambda *args: np.asarray(jac(*args))


def srcgrad_saddle(start, outer: str) -> list:
    start = np.asarray(start, dtype=np.float64)
    g_outer = _outer_gradient(outer, inner_max, 0)
    r1 = argmin(lambda x: inner_max(x, start), lambda x: g_outer(x, start), start)
    g_inner = _outer_gradient(outer, neg_f, 1)
    r2 = argmin(lambda y: neg_f(r1, y), lambda y: g_inner(r1, y), start)
    return [float(v) for v in np.concatenate([r1, r2])]


def jax_saddle(start, outer: str) -> list:
    """JAX: the same solver as Python control flow (jax.grad goes through it eagerly)."""
    from .peers import jax
    jx = jax()
    import jax.numpy as jnp

    def fj(x, y):
        return (x[0] ** 2 + x[1] ** 2) - (y[0] ** 2 + y[1] ** 2)
    d = jx.grad if outer == "r" else jx.jacfwd
    inner_g = d(lambda y, x: -fj(x, y))

    def solve(fun, g, x):
        return argmin(fun, g, x)

    def inner(x):
        y = solve(lambda y: -fj(x, y), lambda y: inner_g(y, x), jnp.asarray(start))
        return fj(x, y)
    outer_g = d(inner)
    r1 = np.asarray(solve(lambda x: float(inner(x)), lambda x: outer_g(x), jnp.asarray(start)))
    r2 = np.asarray(solve(lambda y: float(-fj(r1, y)), lambda y: inner_g(y, r1),
                          jnp.asarray(start)))
    return [float(v) for v in np.concatenate([r1, r2])]


def torch_saddle(start, outer: str) -> list:
    """PyTorch, eagerly, the same solver (Python control flow on tensors): "r" is
    reverse over reverse (torch.autograd.grad, the inner gradients with
    create_graph=True), "f" is forward over forward (one torch.func.jvp per element of
    x over torch.func.jvp gradients; jacfwd would vmap, and the solver's data-dependent
    branches cannot run under vmap)."""
    from .peers import torch
    th = torch()
    from torch.func import jvp

    def ft(x, y):
        return (x[0] ** 2 + x[1] ** 2) - (y[0] ** 2 + y[1] ** 2)

    def d(func):  # the gradient of a function of one 2-vector, in the outer mode
        if outer == "f":
            def by_jvps(z):
                return th.stack([jvp(func, (z,), (e,))[1]
                                 for e in th.eye(2, dtype=th.float64)])
            return by_jvps

        def by_reverse(z):
            zg = z if z.requires_grad else z.detach().requires_grad_(True)
            (gz,) = th.autograd.grad(func(zg), zg, create_graph=True)
            return gz
        return by_reverse

    start_t = th.tensor(list(start), dtype=th.float64)

    def inner(x):
        neg = lambda y: -ft(x, y)  # noqa: E731
        y = argmin(neg, d(neg), start_t)
        return ft(x, y)
    outer_g = d(inner)
    r1 = argmin(lambda x: float(inner(x)), lambda x: outer_g(x).detach(), start_t)
    r1 = r1.detach()
    neg1 = lambda y: -ft(r1, y)  # noqa: E731
    r2 = argmin(lambda y: float(neg1(y)), lambda y: d(neg1)(y).detach(), start_t)
    return [float(v) for v in th.cat([r1, r2.detach()])]


def _gb(outer):
    def make(inp):
        start = [float(v) for v in inp["start"]]
        return (lambda: srcgrad_saddle(start, outer)), list
    return make


gradbench = {"ff": _gb("f"), "fr": _gb("f"), "rf": _gb("r"), "rr": _gb("r")}
GRADBENCH_WARMUP = [(name, {"start": [1.0, 1.0]}) for name in gradbench]
