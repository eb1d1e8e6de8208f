"""ba: bundle adjustment (ADBench / GradBench `ba`): the reprojection residuals of p
observations of m points by n cameras, and their sparse Jacobian.

A camera is [r (3, Rodrigues rotation), C (3, centre), f, u0, v0, k1, k2]. For an
observation of point X by camera c with weight w and feature f:
Xcam = R(r) (X - C), p = Xcam[:2] / Xcam[2] * (1 + k1 |p|^2 + k2 |p|^4) * f + (u0, v0),
residual w (p - feature); and w_err = 1 - w^2. Observation i sees camera i mod n and
point i mod m, as in GradBench. The "gradient" here is the whole Jacobian, as
GradBench's `jacobian` asks: every residual depends on one camera, one point and
one weight, so two reverse sweeps (seeding all x-residuals, then all y-residuals,
with the parameters gathered per observation) give every 2 x 15 block, and one
more the weight terms. The data are random (GradBench replicates one camera,
point and feature read from ADBench's files, which we do not ship); the full
suite's large size has ADBench's ba1 dimensions.
"""
from __future__ import annotations

import numpy as np

from ..common import njit_with, once
from . import Impl
from .peers import jax_sync, to_numpy

SIZES = {
    "quick": [{"n": 10, "m": 200, "p": 1000}, {"n": 20, "m": 1000, "p": 4000}],
    "full": [{"n": 10, "m": 200, "p": 1000}, {"n": 20, "m": 1000, "p": 4000},
             {"n": 49, "m": 7776, "p": 31843}],
}
XLABEL = "p (observations)"


def label(size):
    return f"n={size['n']},m={size['m']},p={size['p']}"


def x(size):
    return size["p"]


def generate(size, seed=31337):
    n, m, p = size["n"], size["m"], size["p"]
    rng = np.random.default_rng(seed)
    cams = np.concatenate([
        rng.normal(scale=0.2, size=(n, 3)),        # rotation
        rng.normal(scale=0.5, size=(n, 3)),        # centre
        rng.uniform(300.0, 600.0, size=(n, 1)),    # focal length
        rng.normal(scale=2.0, size=(n, 2)),        # principal point
        rng.normal(scale=1e-3, size=(n, 2)),       # radial distortion
    ], axis=1)
    X = rng.normal(size=(m, 3)) + np.array([0.0, 0.0, 8.0])
    obs = np.stack([np.arange(p) % n, np.arange(p) % m], axis=1).astype(np.int64)
    return {"cams": cams, "X": X, "w": rng.uniform(0.5, 1.5, size=p),
            "feats": rng.normal(scale=100.0, size=(p, 2)), "obs": obs}


# --- the natural loop form: one observation, then all of them --------------------------

def rodrigues(rot, pt):
    sqtheta = rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2]
    if sqtheta != 0.0:
        theta = np.sqrt(sqtheta)
        costheta = np.cos(theta)
        sintheta = np.sin(theta)
        w0 = rot[0] / theta
        w1 = rot[1] / theta
        w2 = rot[2] / theta
        tmp = (w0 * pt[0] + w1 * pt[1] + w2 * pt[2]) * (1.0 - costheta)
        r0 = pt[0] * costheta + (w1 * pt[2] - w2 * pt[1]) * sintheta + w0 * tmp
        r1 = pt[1] * costheta + (w2 * pt[0] - w0 * pt[2]) * sintheta + w1 * tmp
        r2 = pt[2] * costheta + (w0 * pt[1] - w1 * pt[0]) * sintheta + w2 * tmp
    else:
        r0 = pt[0] + rot[1] * pt[2] - rot[2] * pt[1]
        r1 = pt[1] + rot[2] * pt[0] - rot[0] * pt[2]
        r2 = pt[2] + rot[0] * pt[1] - rot[1] * pt[0]
    return r0, r1, r2


def reproj_error(cam, X, w, feat):
    xo = X - cam[3:6]
    r0, r1, r2 = rodrigues(cam[0:3], xo)
    p0 = r0 / r2
    p1 = r1 / r2
    rsq = p0 * p0 + p1 * p1
    distortion = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq
    e0 = w * (p0 * distortion * cam[6] + cam[7] - feat[0])
    e1 = w * (p1 * distortion * cam[6] + cam[8] - feat[1])
    return e0, e1


def ba_objective(cams, X, w, feats, obs):
    """The primal: every residual (GradBench's `objective`)."""
    p = w.shape[0]
    reproj = np.empty((p, 2))
    w_err = np.empty(p)
    for i in range(p):
        e0, e1 = reproj_error(cams[obs[i, 0]], X[obs[i, 1]], w[i], feats[i])
        reproj[i, 0] = e0
        reproj[i, 1] = e1
        w_err[i] = 1.0 - w[i] * w[i]
    return reproj, w_err


def ba_weighted(cams, X, w, feats, u0, u1):
    """u0 * (sum of x-residuals) + u1 * (sum of y-residuals), parameters per observation."""
    p = w.shape[0]
    total = 0.0
    for i in range(p):
        e0, e1 = reproj_error(cams[i], X[i], w[i], feats[i])
        total += u0 * e0 + u1 * e1
    return total


def w_err_sum(w):
    total = 0.0
    for i in range(w.shape[0]):
        total += 1.0 - w[i] * w[i]
    return total


def blocks_flat(jx, jy, jw):
    """Every observation's 2 x 15 block (camera, point, weight columns) and the
    weight terms' derivatives, as one vector: the order `reference` uses."""
    p = jx.shape[0]
    return np.concatenate([np.stack([jx, jy], axis=1).reshape(-1), np.asarray(jw).reshape(p)])


def srcgrad_impl(data):
    import srcgrad
    cams, X, w, feats, obs = (data[k] for k in ("cams", "X", "w", "feats", "obs"))
    primal = njit_with(ba_objective, rodrigues, reproj_error)

    def make_gradient():
        g = srcgrad.grad(ba_weighted, wrt=(0, 1, 2))
        gw = srcgrad.grad(w_err_sum)

        def jacobian():
            # np.take: a third of the time of cams[obs[:, 0]] for these row gathers
            cams_o, X_o = np.take(cams, obs[:, 0], axis=0), np.take(X, obs[:, 1], axis=0)
            gx = g(cams_o, X_o, w, feats, 1.0, 0.0)
            gy = g(cams_o, X_o, w, feats, 0.0, 1.0)
            return gx, gy, gw(w)
        return jacobian

    def to_flat(out):
        gx, gy, dw = out
        jx = np.concatenate([gx[0], gx[1], gx[2][:, None]], axis=1)
        jy = np.concatenate([gy[0], gy[1], gy[2][:, None]], axis=1)
        return blocks_flat(jx, jy, dw)
    return Impl(lambda: primal(cams, X, w, feats, obs), make_gradient, to_flat)


# --- peers: the residuals vectorized over observations ---------------------------------

def residuals_vectorized(xp, cam, X, w, feat, stack):
    """All residuals at once; cam, X, feat have one row per observation. Assumes no
    zero rotation (the data have none), so there is no branch."""
    rot, xo = cam[:, 0:3], X - cam[:, 3:6]
    theta = xp.sqrt(xp.sum(rot * rot, 1))
    costheta, sintheta = xp.cos(theta), xp.sin(theta)
    k = rot / theta[:, None]
    cross = stack([k[:, 1] * xo[:, 2] - k[:, 2] * xo[:, 1],
                   k[:, 2] * xo[:, 0] - k[:, 0] * xo[:, 2],
                   k[:, 0] * xo[:, 1] - k[:, 1] * xo[:, 0]])
    tmp = xp.sum(k * xo, 1) * (1.0 - costheta)
    rotated = xo * costheta[:, None] + cross * sintheta[:, None] + k * tmp[:, None]
    proj = rotated[:, 0:2] / rotated[:, 2:3]
    rsq = xp.sum(proj * proj, 1)
    distortion = 1.0 + cam[:, 9] * rsq + cam[:, 10] * rsq * rsq
    pixel = proj * (distortion * cam[:, 6])[:, None] + cam[:, 7:9]
    return w[:, None] * (pixel - feat), 1.0 - w * w


def jax_impl(data):
    from .peers import jax
    jx = jax()
    import jax.numpy as jnp
    cams, X, w, feats = (jnp.asarray(data[k]) for k in ("cams", "X", "w", "feats"))
    oc, op = jnp.asarray(data["obs"][:, 0]), jnp.asarray(data["obs"][:, 1])

    def one(cam, point, weight, feat):
        r, _ = residuals_vectorized(jnp, cam[None], point[None], weight[None], feat[None],
                                    lambda c: jnp.stack(c, axis=1))
        return r[0]

    @jx.jit
    def primal(cams, X, w, feats):
        return residuals_vectorized(jnp, cams[oc], X[op], w, feats,
                                    lambda c: jnp.stack(c, axis=1))

    def make_gradient():
        blocks = jx.vmap(jx.jacrev(one, argnums=(0, 1, 2)))
        weight = jx.vmap(jx.grad(lambda v: 1.0 - v * v))

        @jx.jit
        def jacobian(cams, X, w, feats):
            jc, jp, jw = blocks(cams[oc], X[op], w, feats)      # p x 2 x 11, p x 2 x 3, p x 2
            return jnp.concatenate([jc, jp, jw[:, :, None]], axis=2), weight(w)
        return lambda: jacobian(cams, X, w, feats)
    return Impl(lambda: primal(cams, X, w, feats), make_gradient,
                lambda out: np.concatenate([to_numpy(out[0]).reshape(-1), to_numpy(out[1])]),
                jax_sync)


def torch_impl(data):
    from .peers import torch
    th = torch()
    cams, X, w, feats = (th.from_numpy(data[k].copy()) for k in ("cams", "X", "w", "feats"))
    oc, op = th.from_numpy(data["obs"][:, 0].copy()), th.from_numpy(data["obs"][:, 1].copy())

    def stack(cols):
        return th.stack(cols, dim=1)

    def primal():
        with th.no_grad():
            return residuals_vectorized(th, cams[oc], X[op], w, feats, stack)

    def make_gradient():
        def jacobian():
            leaves = [cams[oc].requires_grad_(), X[op].requires_grad_(),
                      w.detach().requires_grad_()]
            r, werr = residuals_vectorized(th, *leaves, feats, stack)
            rows = []
            for comp in (0, 1):
                seed = th.zeros_like(r)
                seed[:, comp] = 1.0
                gc, gp, gw = th.autograd.grad(r, leaves, seed, retain_graph=True)
                rows.append(th.cat([gc, gp, gw[:, None]], dim=1))
            (dw,) = th.autograd.grad(werr, [leaves[2]], th.ones_like(werr))
            return th.stack(rows, dim=1), dw
        return jacobian
    return Impl(primal, make_gradient,
                lambda out: np.concatenate([to_numpy(out[0]).reshape(-1), to_numpy(out[1])]))


def autograd_impl(data):
    import autograd.numpy as anp
    from autograd import make_vjp
    cams, X, w, feats, obs = (data[k] for k in ("cams", "X", "w", "feats", "obs"))

    def stack(cols):
        return anp.stack(cols, axis=1)

    def residual(params):
        r, _ = residuals_vectorized(anp, params[0], params[1], params[2], feats, stack)
        return r

    def primal():
        return residuals_vectorized(np, cams[obs[:, 0]], X[obs[:, 1]], w, feats,
                                    lambda c: np.stack(c, axis=1))

    def make_gradient():
        weight_vjp = make_vjp(lambda v: 1.0 - v * v)

        def jacobian():
            vjp, r = make_vjp(residual)((cams[obs[:, 0]], X[obs[:, 1]], w))
            rows = []
            for comp in (0, 1):
                seed = np.zeros_like(r)
                seed[:, comp] = 1.0
                gc, gp, gw = vjp(seed)
                rows.append(np.concatenate([gc, gp, gw[:, None]], axis=1))
            back, _ = weight_vjp(w)
            return np.stack(rows, axis=1), back(np.ones_like(w))
        return jacobian
    return Impl(primal, make_gradient,
                lambda out: np.concatenate([out[0].reshape(-1), out[1]]))


# --- reference: central differences, every observation at once -------------------------

def reference(data, h=1e-4):
    cams, X, w, feats, obs = (data[k] for k in ("cams", "X", "w", "feats", "obs"))
    primal = once("ba.fd_primal", lambda: njit_with(ba_objective, rodrigues, reproj_error))
    p = w.shape[0]
    per_obs = np.concatenate([cams[obs[:, 0]], X[obs[:, 1]], w[:, None]], axis=1)  # p x 15
    identity = np.stack([np.arange(p), np.arange(p)], axis=1)
    blocks = np.empty((p, 2, 15))
    for col in range(15):
        step = h * np.maximum(1.0, np.abs(per_obs[:, col]))
        vals = []
        for mult in (2.0, 1.0, -1.0, -2.0):
            moved = per_obs.copy()
            moved[:, col] += mult * step
            r, _ = primal(moved[:, :11].copy(), moved[:, 11:14].copy(), moved[:, 14].copy(),
                          feats, identity)
            vals.append(r)
        blocks[:, :, col] = (-vals[0] + 8 * vals[1] - 8 * vals[2] + vals[3]) / (12 * step[:, None])
    vector = np.concatenate([blocks.reshape(-1), -2.0 * w])
    return vector, None, "central differences (4-point) of numba.njit(ba_objective), per observation"


# --- GradBench: one camera, point, weight and feature, replicated ------------------------

def _parse(inp):
    n, m, p = int(inp["n"]), int(inp["m"]), int(inp["p"])
    cams = np.tile(np.asarray(inp["cam"], dtype=np.float64), (n, 1))
    X = np.tile(np.asarray(inp["x"], dtype=np.float64), (m, 1))
    w = np.full(p, float(inp["w"]))
    feats = np.tile(np.asarray(inp["feat"], dtype=np.float64), (p, 1))
    obs = np.stack([np.arange(p) % n, np.arange(p) % m], axis=1).astype(np.int64)
    return cams, X, w, feats, obs


def sparse_jacobian(blocks, dw, obs, n, m):
    """ADBench's compressed-row Jacobian: 2 rows of 15 entries per observation, then
    one row per weight term."""
    p = blocks.shape[0]
    cols_block = np.concatenate([
        11 * obs[:, :1] + np.arange(11)[None, :],
        11 * n + 3 * obs[:, 1:2] + np.arange(3)[None, :],
        (11 * n + 3 * m + np.arange(p))[:, None]], axis=1)           # p x 15
    cols = np.concatenate([np.repeat(cols_block[:, None, :], 2, axis=1).reshape(-1),
                           11 * n + 3 * m + np.arange(p)])
    vals = np.concatenate([blocks.reshape(-1), dw])
    rows = np.concatenate([np.arange(2 * p + 1) * 15, 30 * p + np.arange(1, p + 1)])
    return rows, cols, vals


def _gb_objective(inp):
    args = _parse(inp)
    f = once("ba.primal", lambda: njit_with(ba_objective, rodrigues, reproj_error))

    def post(out):
        reproj, w_err = out
        return {"reproj_error": {"elements": reproj[0].tolist(), "repeated": len(w_err)},
                "w_err": {"element": float(w_err[0]), "repeated": len(w_err)}}
    return (lambda: f(*args)), post


def _gb_jacobian(inp):
    import srcgrad
    cams, X, w, feats, obs = _parse(inp)
    n, m = cams.shape[0], X.shape[0]
    g = once("ba.grad", lambda: srcgrad.grad(ba_weighted, wrt=(0, 1, 2)))
    gw = once("ba.grad_w", lambda: srcgrad.grad(w_err_sum))

    def run():
        cams_o, X_o = np.take(cams, obs[:, 0], axis=0), np.take(X, obs[:, 1], axis=0)
        gx = g(cams_o, X_o, w, feats, 1.0, 0.0)
        gy = g(cams_o, X_o, w, feats, 0.0, 1.0)
        blocks = np.stack([np.concatenate([gx[0], gx[1], gx[2][:, None]], axis=1),
                           np.concatenate([gy[0], gy[1], gy[2][:, None]], axis=1)], axis=1)
        return sparse_jacobian(blocks, gw(w), obs, n, m)

    def post(out):
        rows, cols, vals = out
        keep = 30  # GradBench keeps the first observation's block and the last entry
        return {"rows": rows[:keep].tolist() + [int(rows[-1])],
                "cols": cols[:keep].tolist() + [int(cols[-1])],
                "vals": vals[:keep].tolist() + [float(vals[-1])]}
    return run, post


gradbench = {"objective": _gb_objective, "jacobian": _gb_jacobian}
_TINY = {"n": 2, "m": 3, "p": 4, "cam": [0.1, -0.2, 0.05, 0.3, 0.1, -0.4, 400.0, 1.0, -1.0, 1e-3, 1e-4],
         "x": [0.2, -0.1, 7.0], "w": 0.9, "feat": [10.0, -5.0]}
GRADBENCH_WARMUP = [("objective", _TINY), ("jacobian", _TINY)]
