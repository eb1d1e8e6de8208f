"""kmeans: the k-means cost sum_i min_j |C_j - P_i|^2 and its Newton direction J H^-1.

GradBench's `kmeans` eval: np.random.seed(31337), points = np.random.rand(n, d), the
centroids the last k points; function `cost` is the value, `dir` is J H^-1 with H the
Hessian with respect to the centroids, which is diagonal (GradBench's README), so
the answer is the gradient divided elementwise by the Hessian's diagonal.

srcgrad: `hessian(cost, sparse=True)` finds the diagonal pattern (one color: one HVP);
`dir` uses that finding, computing the diagonal as one `hvp(cost)(C, P, ones)` beside
one gradient. JAX and PyTorch compute the same: grad, and a forward-over-reverse HVP
along ones.
"""
from __future__ import annotations

import numpy as np

import srcgrad

SIZES = {"quick": [{"k": 10, "n": 1000, "d": 8}], "full": [{"k": 10, "n": 1000, "d": 8},
                                                         {"k": 100, "n": 10000, "d": 8}]}


def generate(size):
    np.random.seed(31337)
    points = np.random.rand(size["n"], size["d"])
    return {"points": points, "centroids": points[-size["k"]:].copy()}


def cost(c, points):
    n = points.shape[0]
    k = c.shape[0]
    total = 0.0
    for i in range(n):
        best = np.sum((points[i] - c[0]) ** 2)
        for j in range(1, k):
            dj = np.sum((points[i] - c[j]) ** 2)
            if dj < best:
                best = dj
        total = total + best
    return total


def srcgrad_direction(c, points, grad=None, product=None):
    grad = grad or srcgrad.grad(cost)
    product = product or srcgrad.hvp(cost)
    return grad(c, points) / product(c, points, np.ones_like(c))


def jax_direction(data):
    """A jitted function of (c, points) giving J H^-1 (H's diagonal by one HVP)."""
    from .peers import jax
    jx = jax()
    import jax.numpy as jnp

    def f(c, p):
        d = jnp.sum((p[:, None, :] - c[None, :, :]) ** 2, axis=2)
        return jnp.sum(jnp.min(d, axis=1))
    g = jx.grad(f)

    @jx.jit
    def direction(c, p):
        grad, diag = jx.jvp(lambda c_: g(c_, p), (c,), (jnp.ones_like(c),))
        return grad / diag
    return direction


def torch_direction(data):
    from .peers import torch
    th = torch()
    from torch.func import grad, jvp

    def f(c, p):
        d = th.sum((p[:, None, :] - c[None, :, :]) ** 2, dim=2)
        return th.sum(th.min(d, dim=1).values)

    def direction(c, p):
        gr, diag = jvp(lambda c_: grad(f)(c_, p), (c,), (th.ones_like(c),))
        return gr / diag
    return direction


def _prepare(inp):
    return (np.asarray(inp["centroids"], dtype=np.float64),
            np.asarray(inp["points"], dtype=np.float64))


def _gb_cost(inp):
    c, p = _prepare(inp)
    return (lambda: cost(c, p)), float


def _gb_dir(inp):
    c, p = _prepare(inp)
    grad, product = srcgrad.grad(cost), srcgrad.hvp(cost)
    return (lambda: srcgrad_direction(c, p, grad, product)), lambda v: v.tolist()


gradbench = {"cost": _gb_cost, "dir": _gb_dir}
_TINY = {"points": [[0.1, 0.2], [0.9, 0.8], [0.2, 0.1], [0.8, 0.9]],
         "centroids": [[0.2, 0.1], [0.8, 0.9]]}
GRADBENCH_WARMUP = [("cost", _TINY), ("dir", _TINY)]
