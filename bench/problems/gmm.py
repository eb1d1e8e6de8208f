"""gmm: the log-likelihood of a Gaussian mixture with a Wishart prior (ADBench / GradBench `gmm`).

Parameters: alpha (k), mu (k x d), q (k x d, log of the precision factor's
diagonal), l (k x d(d-1)/2, its strictly lower triangle, column by column);
data x (n x d); prior gamma = 1, m = 0. The objective is

    -n d/2 log(2 pi) + sum_i logsumexp_k(alpha_k + sum(q_k) - |Q_k (x_i - mu_k)|^2 / 2)
    - n logsumexp(alpha) - sum_k (gamma^2/2 (|exp(q_k)|^2 + |l_k|^2) - m sum(q_k)) + k C(d, m, gamma)

GradBench's generator: np.random.default_rng(31337), then x, mu, q, l, alpha
row by row; n = 1000.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ..common import fd_gradient, flat, njit_with, once
from . import Impl
from .peers import jax_sync, to_numpy

SIZES = {
    "quick": [{"d": 2, "k": 5, "n": 1000}, {"d": 10, "k": 10, "n": 1000}],
    "full": [{"d": 2, "k": 5, "n": 1000}, {"d": 10, "k": 10, "n": 1000},
             {"d": 20, "k": 25, "n": 1000}, {"d": 32, "k": 50, "n": 1000},
             {"d": 64, "k": 100, "n": 1000}],
}
# GradBench's largest size, d = 64, k = 100, once did not fit: srcgrad recorded every
# element of Q (x - mu) overwritten in the triangle loop, about 8e8 scalars. Since
# those and the loop's index need no tape, its gradient takes about 350 MB (the whole
# process) and 6x the primal.
XLABEL = "d * k (dimension x components; n = 1000 points)"


def label(size):
    return f"d={size['d']},k={size['k']},n={size['n']}"


def x(size):
    return size["d"] * size["k"]


def generate(size, seed=31337):
    d, k, n = size["d"], size["k"], size["n"]
    rng = np.random.default_rng(seed=seed)
    x_ = np.array([rng.normal(size=d) for _ in range(n)])
    mu = np.array([rng.uniform(size=d) for _ in range(k)])
    q = np.array([rng.normal(size=d) for _ in range(k)])
    l = np.array([rng.normal(size=d * (d - 1) // 2) for _ in range(k)]).reshape(k, d * (d - 1) // 2)
    alpha = rng.normal(size=k)
    return {"alpha": alpha, "mu": mu, "q": q, "l": l, "x": x_, "gamma": 1.0, "m": 0}


ARGS = ("alpha", "mu", "q", "l", "x", "gamma", "m")


# --- the natural loop form srcgrad differentiates --------------------------------------

def logsumexp(v):
    mx = np.max(v)
    return np.log(np.sum(np.exp(v - mx))) + mx


def gmm_objective(alpha, mu, q, l, x, gamma, m):
    n = x.shape[0]
    d = x.shape[1]
    k = alpha.shape[0]
    qdiag = np.exp(q)
    sum_qs = np.sum(q, axis=1)
    slse = 0.0
    for ix in range(n):
        main_term = np.zeros(k)
        for ik in range(k):
            xc = x[ix] - mu[ik]
            qx = qdiag[ik] * xc              # Q_k (x_i - mu_k), Q_k lower triangular
            idx = 0
            for i in range(d):
                for j in range(i + 1, d):
                    qx[j] += l[ik, idx] * xc[i]
                    idx += 1
            main_term[ik] = alpha[ik] + sum_qs[ik] - 0.5 * np.sum(qx * qx)
        slse += logsumexp(main_term)
    const = -n * d * 0.5 * math.log(2.0 * math.pi)
    # the Wishart prior
    nn = d + m + 1
    lgamma_d = 0.25 * d * (d - 1) * math.log(math.pi)
    for j in range(1, d + 1):
        lgamma_d += math.lgamma(0.5 * nn + 0.5 * (1 - j))
    c = nn * d * (math.log(gamma) - 0.5 * math.log(2.0)) - lgamma_d
    prior = 0.0
    for ik in range(k):
        frobenius = np.sum(qdiag[ik] * qdiag[ik]) + np.sum(l[ik] * l[ik])
        prior += 0.5 * gamma * gamma * frobenius - m * sum_qs[ik]
    return const + slse - n * logsumexp(alpha) - prior + k * c


def _args(data):
    return tuple(data[a] for a in ARGS)


def srcgrad_impl(data):
    import srcgrad
    args = _args(data)
    primal = njit_with(gmm_objective, logsumexp)

    def make_gradient():
        g = srcgrad.grad(gmm_objective, wrt=(0, 1, 2, 3))
        return lambda: g(*args)
    return Impl(lambda: primal(*args), make_gradient, lambda gs: flat(*gs))


# --- peers: ADBench's vectorized form ----------------------------------------------------

def _constants(d, k, n, gamma, m):
    nn = d + m + 1
    lgamma_d = 0.25 * d * (d - 1) * math.log(math.pi) + sum(
        math.lgamma(0.5 * nn + 0.5 * (1 - j)) for j in range(1, d + 1))
    c = nn * d * (math.log(gamma) - 0.5 * math.log(2.0)) - lgamma_d
    return -n * d * 0.5 * math.log(2.0 * math.pi) + k * c


def _lower_rows(d):
    """For each row j of L, the positions in l of its entries (columns 0..j-1)."""
    pos, rows = 0, [[] for _ in range(d)]
    for i in range(d):
        for j in range(i + 1, d):
            rows[j].append(pos)
            pos += 1
    return [np.array(r, dtype=np.int64) for r in rows]


def _vectorized(xp, alpha, mu, q, l, x_, gamma, m, lse, build_l):
    n, d = x_.shape
    k = alpha.shape[0]
    qdiag = xp.exp(q)
    sum_qs = xp.sum(q, 1)
    L = build_l(l, d, k)                                          # k x d x d
    xc = x_[:, None, :] - mu[None, :, :]                          # n x k x d
    qxc = qdiag[None] * xc + xp.einsum("kij,nkj->nki", L, xc)
    main = alpha[None] + sum_qs[None] - 0.5 * xp.sum(qxc * qxc, 2)
    prior = 0.5 * gamma * gamma * (xp.sum(qdiag * qdiag) + xp.sum(l * l)) - m * xp.sum(sum_qs)
    return (_constants(d, k, n, gamma, m) + xp.sum(lse(main, 1)) - n * lse(alpha, 0)
            - prior)


def jax_impl(data):
    from .peers import jax
    jx = jax()
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp as jlse
    arrays = [jnp.asarray(data[a]) for a in ("alpha", "mu", "q", "l")]
    x_, gamma, m = jnp.asarray(data["x"]), data["gamma"], data["m"]
    d = data["x"].shape[1]
    rows_, cols_ = np.tril_indices(d, -1)
    order = np.lexsort((rows_, cols_))                            # column by column
    rows_, cols_ = rows_[order], cols_[order]

    def build_l(l, d, k):
        return jnp.zeros((k, d, d)).at[:, rows_, cols_].set(l)

    def f(alpha, mu, q, l):
        return _vectorized(jnp, alpha, mu, q, l, x_, gamma, m, lambda v, a: jlse(v, axis=a),
                           build_l)
    primal = jx.jit(f)

    def make_gradient():
        g = jx.jit(jx.grad(f, argnums=(0, 1, 2, 3)))
        return lambda: g(*arrays)
    return Impl(lambda: primal(*arrays), make_gradient,
                lambda gs: flat(*[to_numpy(v) for v in gs]), jax_sync)


def torch_impl(data):
    from .peers import torch
    th = torch()
    arrays = [th.from_numpy(data[a].copy()) for a in ("alpha", "mu", "q", "l")]
    x_, gamma, m = th.from_numpy(data["x"].copy()), data["gamma"], data["m"]
    d = data["x"].shape[1]
    rows_, cols_ = np.tril_indices(d, -1)
    order = np.lexsort((rows_, cols_))
    rows_, cols_ = th.from_numpy(rows_[order]), th.from_numpy(cols_[order])

    class XP:
        exp, sum, einsum = th.exp, th.sum, th.einsum

    def build_l(l, d, k):
        L = th.zeros((k, d, d), dtype=th.float64)
        L[:, rows_, cols_] = l
        return L

    def f(alpha, mu, q, l):
        return _vectorized(XP, alpha, mu, q, l, x_, gamma, m,
                           lambda v, a: th.logsumexp(v, a), build_l)

    def primal():
        with th.no_grad():
            return f(*arrays)

    def make_gradient():
        def g():
            leaves = [a.detach().requires_grad_() for a in arrays]
            return th.autograd.grad(f(*leaves), leaves)
        return g
    return Impl(primal, make_gradient, lambda gs: flat(*[to_numpy(v) for v in gs]))


def autograd_impl(data):
    import autograd
    import autograd.numpy as anp
    from autograd.scipy.special import logsumexp as alse
    arrays = [data[a] for a in ("alpha", "mu", "q", "l")]
    x_, gamma, m = data["x"], data["gamma"], data["m"]
    rows = _lower_rows(data["x"].shape[1])

    def build_l(l, d, k):
        return anp.stack([anp.concatenate([l[:, rows[j]], np.zeros((k, d - j))], axis=1)
                          for j in range(d)], axis=1)

    def f(alpha, mu, q, l):
        return _vectorized(anp, alpha, mu, q, l, x_, gamma, m, lambda v, a: alse(v, axis=a),
                           build_l)

    def make_gradient():
        g = autograd.grad(f, argnum=(0, 1, 2, 3))
        return lambda: g(*arrays)
    return Impl(lambda: f(*arrays), make_gradient, lambda gs: flat(*gs))


# --- reference: finite differences of the compiled primal -----------------------------

def reference(data, budget=8.0):
    args = list(_args(data))
    primal = once("gmm.fd_primal", lambda: njit_with(gmm_objective, logsumexp))
    primal(*args)
    start = time.perf_counter()
    primal(*args)
    per_call = max(time.perf_counter() - start, 1e-7)
    total = sum(data[a].size for a in ("alpha", "mu", "q", "l"))
    affordable = max(24, int(budget / (4 * per_call)))
    coords = None
    if total > affordable:
        coords = np.sort(np.random.default_rng(0).choice(total, affordable, replace=False))
    vector = fd_gradient(primal, args, (0, 1, 2, 3), coords)
    kind = "central differences (4-point) of numba.njit(gmm_objective)"
    return vector, coords, kind + ("" if coords is None else ", random subset")


# --- GradBench: the current input format (mu, q, l) and ADBench's older one (means, icf) ---

def _parse(inp):
    d, k = int(inp["d"]), int(inp["k"])
    x_ = np.asarray(inp["x"], dtype=np.float64).reshape(-1, d)
    alpha = np.asarray(inp["alpha"], dtype=np.float64)
    if "icf" in inp:
        icf = np.asarray(inp["icf"], dtype=np.float64).reshape(k, -1)
        mu = np.asarray(inp["means"], dtype=np.float64).reshape(k, d)
        q, l = icf[:, :d].copy(), icf[:, d:].copy()
    else:
        mu = np.asarray(inp["mu"], dtype=np.float64).reshape(k, d)
        q = np.asarray(inp["q"], dtype=np.float64).reshape(k, d)
        l = np.asarray(inp["l"], dtype=np.float64).reshape(k, d * (d - 1) // 2)
    return (alpha, mu, q, l, x_, float(inp["gamma"]), int(inp["m"])), "icf" in inp


def _gb_objective(inp):
    args, _ = _parse(inp)
    f = once("gmm.primal", lambda: njit_with(gmm_objective, logsumexp))
    return (lambda: f(*args)), float


def _gb_jacobian(inp):
    import srcgrad
    args, old = _parse(inp)
    g = once("gmm.grad", lambda: srcgrad.grad(gmm_objective, wrt=(0, 1, 2, 3)))

    def post(gs):
        ga, gmu, gq, gl = gs
        if old:
            return flat(ga, gmu, np.concatenate([gq, gl], axis=1)).tolist()
        return {"alpha": ga.tolist(), "mu": gmu.tolist(), "q": gq.tolist(), "l": gl.tolist()}
    return (lambda: g(*args)), post


gradbench = {"objective": _gb_objective, "jacobian": _gb_jacobian}
_TINY = {"d": 2, "k": 2, "n": 2, "x": [[0.1, 0.2], [0.3, -0.4]], "m": 0, "gamma": 1.0,
         "mu": [[0.5, 0.1], [0.2, 0.3]], "q": [[0.1, -0.2], [0.0, 0.3]], "l": [[0.4], [-0.1]],
         "alpha": [0.2, -0.3]}
GRADBENCH_WARMUP = [("objective", _TINY), ("jacobian", _TINY)]
