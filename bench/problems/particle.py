"""particle: a charged particle's trajectory, optimised by gradient descent (nested AD).

GradBench's `particle` eval (Pearlmutter and Siskind's benchmark): charges at (10, 10 - w)
and (10, 0), a particle starting at (0, 8) with velocity (0.75, 0), naive Euler steps
of 0.1 under the force -grad_x p(x; w), p = sum of inverse distances, in an unbounded
`while` loop until the particle would cross the x axis; the cost is x0(t_f)^2 after
linear interpolation to the axis. The answer is argmin_w of the cost from w = 0 by
GradBench's gradient-descent solver (step 1e-5, doubled after 10 accepted steps, halved
on a rejected one, stopping when the gradient or the step is under 1e-5); expected
0.2071918746486116.

srcgrad: the outer derivative is `srcgrad.grad` (reverse, "r") or `srcgrad.jvp` (forward,
"f") of `naive_euler`, which calls `srcgrad.grad(potential)`; srcgrad differentiates a
call to a gradient by inlining a forward-mode gradient, so the inner mode is always
forward and `fr` equals `ff`, `rr` equals `rf`. JAX: `jax.grad` cannot reverse a
`lax.while_loop` (it raises), so its outer reverse mode runs the loop as a Python loop,
eagerly (no jit: the trip count depends on w); its forward mode jits a `lax.while_loop`.
PyTorch runs eagerly: reverse over reverse (create_graph=True for the inner gradient)
or torch.func.jvp over torch.func.grad.
"""
from __future__ import annotations

import math

import numpy as np

import srcgrad

EXPECTED = 0.2071918746486116


def potential(x, w):
    a = np.sqrt((x[0] - 10.0) ** 2 + (x[1] - (10.0 - w)) ** 2)
    b = np.sqrt((x[0] - 10.0) ** 2 + x[1] ** 2)
    return 1.0 / a + 1.0 / b


grad_potential = srcgrad.grad(potential)


def naive_euler(w):
    x = np.array([0.0, 8.0])
    xdot = np.array([0.75, 0.0])
    dt = 0.1
    going = True
    while going:
        xddot = -grad_potential(x, w)
        x_new = x + dt * xdot
        if x_new[1] > 0.0:
            x = x_new
            xdot = xdot + dt * xddot
        else:
            going = False
    dt_f = -x[1] / xdot[1]
    x_tf = x + dt_f * xdot
    return x_tf[0] ** 2


def argmin(f, g, x):
    """GradBench's multivariate_argmin (tools/futhark/solver.fut), for a vector x."""
    fx, gx, eta, i = f(x), g(x), 1e-5, 0
    while True:
        if math.sqrt(float((gx * gx).sum())) <= 1e-5:  # .sum(): NumPy, JAX or torch
            return x
        if i == 10:
            eta, i = 2.0 * eta, 0
            continue
        x_new = x - eta * gx
        if math.sqrt(float(((x - x_new) ** 2).sum())) <= 1e-5:
            return x
        f_new = f(x_new)
        if f_new < fx:
            x, fx, gx, i = x_new, f_new, g(x_new), i + 1
        else:
            eta, i = eta / 2.0, 0


def srcgrad_gradient(outer: str):
    """d naive_euler / dw by reverse mode ("r") or forward mode ("f")."""
    if outer == "r":
        g = srcgrad.grad(naive_euler)
        return lambda w: np.array([g(float(w[0]))])
    return lambda w: np.array([srcgrad.jvp(naive_euler, (float(w[0]),), (1.0,))[1]])


def srcgrad_particle(w0: float, outer: str) -> float:
    g = srcgrad_gradient(outer)
    return float(argmin(lambda w: naive_euler(float(w[0])), g, np.array([w0]))[0])


# --- peers -------------------------------------------------------------------------------

def jax_particle(w0: float, outer: str) -> float:
    from .peers import jax
    jx = jax()
    import jax.numpy as jnp

    def p(x, w):
        return (1.0 / jnp.sqrt((x[0] - 10.0) ** 2 + (x[1] - (10.0 - w)) ** 2)
                + 1.0 / jnp.sqrt((x[0] - 10.0) ** 2 + x[1] ** 2))
    dp = jx.jit(jx.grad(p))

    def euler(w):  # a Python loop: jax.grad cannot differentiate lax.while_loop in reverse
        x, xdot = jnp.array([0.0, 8.0]), jnp.array([0.75, 0.0])
        while True:
            x_new = x + 0.1 * xdot
            if not x_new[1] > 0.0:
                break
            x, xdot = x_new, xdot - 0.1 * dp(x, w)
        return (x + (-x[1] / xdot[1]) * xdot)[0] ** 2
    def euler_loop(w):  # lax.while_loop: forward mode and jit go through it
        def step(state):
            x, xdot, _ = state
            x_new = x + 0.1 * xdot
            go = x_new[1] > 0.0
            return (jnp.where(go, x_new, x), jnp.where(go, xdot - 0.1 * dp(x, w), xdot), go)
        x, xdot, _ = jx.lax.while_loop(lambda s: s[2], step,
                                       (jnp.array([0.0, 8.0]), jnp.array([0.75, 0.0]), True))
        return (x + (-x[1] / xdot[1]) * xdot)[0] ** 2
    if outer == "r":
        g = jx.grad(euler)
    else:
        euler = jx.jit(euler_loop)
        g = jx.jit(lambda w: jx.jvp(euler_loop, (w,), (1.0,))[1])
    f = lambda w: float(euler(float(w[0])))  # noqa: E731
    return float(argmin(f, lambda w: np.array([float(g(float(w[0])))]), np.array([w0]))[0])


def torch_particle(w0: float, outer: str) -> float:
    """PyTorch, eagerly (the `while` is a Python loop): "r" is reverse over reverse
    (torch.autograd.grad of a loop whose inner gradient has create_graph=True), "f" is
    torch.func.jvp over a loop whose inner gradient is torch.func.grad."""
    from .peers import torch
    th = torch()
    from torch.func import grad as func_grad, jvp

    def p(x, w):
        return (1.0 / th.sqrt((x[0] - 10.0) ** 2 + (x[1] - (10.0 - w)) ** 2)
                + 1.0 / th.sqrt((x[0] - 10.0) ** 2 + x[1] ** 2))

    def autograd_dp(x, w):
        xg = x if x.requires_grad else x.detach().requires_grad_(True)
        (dp,) = th.autograd.grad(p(xg, w), xg, create_graph=True)
        return dp

    def euler(w, dp=autograd_dp):
        x, xdot = th.tensor([0.0, 8.0], dtype=th.float64), th.tensor([0.75, 0.0],
                                                                     dtype=th.float64)
        while True:
            x_new = x + 0.1 * xdot
            if not x_new[1] > 0.0:
                break
            x, xdot = x_new, xdot - 0.1 * dp(x, w)
        return (x + (-x[1] / xdot[1]) * xdot)[0] ** 2

    def g(w):
        if outer == "f":
            wt = th.tensor(float(w[0]), dtype=th.float64)
            _, d = jvp(lambda w_: euler(w_, func_grad(p)), (wt,), (th.ones_like(wt),))
            return np.array([float(d)])
        wt = th.tensor(float(w[0]), dtype=th.float64, requires_grad=True)
        (d,) = th.autograd.grad(euler(wt), wt)
        return np.array([float(d)])
    f = lambda w: float(euler(th.tensor(float(w[0]), dtype=th.float64)).detach())  # noqa: E731
    return float(argmin(f, g, np.array([w0]))[0])


# --- GradBench ---------------------------------------------------------------------------

def _gb(outer):
    def make(inp):
        w0 = float(inp["w"])
        return (lambda: srcgrad_particle(w0, outer)), float
    return make


gradbench = {"ff": _gb("f"), "fr": _gb("f"), "rf": _gb("r"), "rr": _gb("r")}
GRADBENCH_WARMUP = [(name, {"w": 0.0}) for name in gradbench]
