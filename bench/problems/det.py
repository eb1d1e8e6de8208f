"""det: the determinant by recursive expansion of minors along the first row (cmpad's
det_by_minor); O(ell!) work.

GradBench's `det` eval: A = np.random.rand(ell * ell) (row-major) after
np.random.seed(31337), once per ell = 5, 6, ..., 11 in turn.
"""
from __future__ import annotations

import numpy as np

from ..common import flat, gradbench_stream, njit_with, once
from . import Impl
from .peers import jax_single_array, to_numpy

SIZES = {
    "quick": [{"ell": 5}, {"ell": 7}],
    "full": [{"ell": 5}, {"ell": 6}, {"ell": 7}, {"ell": 8}, {"ell": 9}, {"ell": 10}],
}
XLABEL = "ell (matrix is ell x ell)"
GRADBENCH_ELL = [5, 6, 7, 8, 9, 10, 11]


def label(size):
    return f"ell={size['ell']}"


def x(size):
    return size["ell"]


def generate(size):
    ell = size["ell"]
    flat_a = gradbench_stream(31337, GRADBENCH_ELL, ell, lambda e: np.random.rand(e * e))
    return {"A": flat_a.reshape(ell, ell)}


# --- the natural recursive form srcgrad differentiates ---------------------------------

def det(A):
    n = A.shape[0]
    if n == 1:
        return A[0, 0]
    total = 0.0
    for j in range(n):
        minor = np.zeros((n - 1, n - 1))
        minor[:, :j] = A[1:, :j]
        minor[:, j:] = A[1:, j + 1:]
        total = total + (-1.0) ** j * A[0, j] * det(minor)
    return total


def srcgrad_impl(data):
    import srcgrad
    A = data["A"]
    primal = njit_with(det, det)

    def make_gradient():
        g = srcgrad.grad(det)
        return lambda: g(A)
    return Impl(lambda: primal(A), make_gradient, flat)


# --- peers: the same expansion, vectorized over all minors of one level ------------------

def _minor_index(m):
    """Column indices of the m minors of an m x m matrix along its first row."""
    return np.array([[c for c in range(m) if c != j] for j in range(m)])


def _signs(m):
    return np.array([(-1.0) ** j for j in range(m)])


def det_batched(M, take, stack_sum):
    """Determinants of the batch M (B x m x m) by expansion of minors.

    `take(M, idx)` returns M[:, 1:, idx] for an m x (m-1) index array as
    B x (m-1) x m x (m-1); `stack_sum(M, d)` returns sum_j (-1)^j M[:,0,j] d[:,j].
    """
    B, m = M.shape[0], M.shape[1]
    if m == 1:
        return M[:, 0, 0]
    minors = take(M, _minor_index(m))                       # B x (m-1) x m x (m-1)
    d = det_batched(minors, take, stack_sum)                # B*m determinants
    return stack_sum(M, d.reshape(B, m))


def jax_impl(data):
    from .peers import jax
    jx = jax()
    import jax.numpy as jnp
    A = jnp.asarray(data["A"])

    def take(M, idx):
        sub = M[:, 1:, :][:, :, jnp.asarray(idx)]           # B x (m-1) x m x (m-1)
        return jnp.transpose(sub, (0, 2, 1, 3)).reshape(-1, idx.shape[1], idx.shape[1])

    def stack_sum(M, d):
        return jnp.sum(jnp.asarray(_signs(M.shape[1])) * M[:, 0, :] * d, axis=1)

    def f(a):
        return det_batched(a[None], take, stack_sum)[0]
    return jax_single_array(jx, f, A)


def torch_impl(data):
    from .peers import torch
    th = torch()
    A = th.from_numpy(data["A"].copy())

    def take(M, idx):
        sub = M[:, 1:, :][:, :, th.from_numpy(idx)]
        return sub.permute(0, 2, 1, 3).reshape(-1, idx.shape[1], idx.shape[1])

    def stack_sum(M, d):
        return th.sum(th.from_numpy(_signs(M.shape[1])) * M[:, 0, :] * d, dim=1)

    def f(a):
        return det_batched(a[None], take, stack_sum)[0]

    def primal():
        with th.no_grad():
            return f(A)

    def make_gradient():
        def g():
            a = A.detach().requires_grad_()
            (ga,) = th.autograd.grad(f(a), [a])
            return ga
        return g
    return Impl(primal, make_gradient, lambda g: flat(to_numpy(g)))


def autograd_impl(data):
    import autograd
    import autograd.numpy as anp
    A = data["A"]

    def take(M, idx):
        sub = M[:, 1:, :][:, :, idx]
        return anp.reshape(anp.transpose(sub, (0, 2, 1, 3)), (-1, idx.shape[1], idx.shape[1]))

    def stack_sum(M, d):
        return anp.sum(_signs(M.shape[1]) * M[:, 0, :] * d, axis=1)

    def f(a):
        return det_batched(anp.reshape(a, (1,) + a.shape), take, stack_sum)[0]

    def make_gradient():
        g = autograd.grad(f)
        return lambda: g(A)
    return Impl(lambda: f(A), make_gradient, flat)


# --- reference and GradBench ------------------------------------------------------------

def reference(data):
    A = data["A"]
    return (np.linalg.det(A) * np.linalg.inv(A).T).reshape(-1), None, \
        "analytic gradient det(A) A^-T"


def _prepare(inp):
    ell = int(inp["ell"])
    return np.asarray(inp["A"], dtype=np.float64).reshape(ell, ell)


def _gb_primal(inp):
    A = _prepare(inp)
    f = once("det.primal", lambda: njit_with(det, det))
    return (lambda: f(A)), float


def _gb_gradient(inp):
    import srcgrad
    A = _prepare(inp)
    g = once("det.grad", lambda: srcgrad.grad(det))
    return (lambda: g(A)), lambda v: v.reshape(-1).tolist()


gradbench = {"primal": _gb_primal, "gradient": _gb_gradient}
GRADBENCH_WARMUP = [(f, {"A": [2.0, 1.0, 0.5, 3.0], "ell": 2}) for f in ("primal", "gradient")]
