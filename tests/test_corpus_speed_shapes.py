"""Correctness corpus for the loop shapes that issue 13 makes fast.

Issue 13 changes what generated code records and recomputes (tapes indexed
by flattened iteration counters for nested loops, recomputing temporaries
from arrays nothing writes, no tapes for loop-invariant aliases, fused
adjoint updates). This corpus is its safety net: small models of the kind a
scientist writes, one per loop shape the issue names:

- pair loops over particles (`for i: for j in range(i + 1, n):`) with scalar
  temporaries `dx`, `dy`, `r2` computed from an array nothing writes, with a
  branch, a `break` and accumulation into a force array;
- nested counted loops whose inner body assigns temporaries the backward
  sweep reads (a GMM's lower-triangular Q, forward substitution, a Huber
  regression whose residual both arms of a branch read);
- loop-invariant aliases through inlined helpers (`rhs(p, y)` called four
  times per RK4 step with a parameter `p` nothing writes; helpers given
  shapes and sizes; a helper returning a tuple);
- stencils: the 1-d heat equation by slices (`un = u.copy()` per step, a
  scratch array filled in place every step, a tuple swap of two buffers)
  and a leapfrog wave equation rotating three levels;
- integrators (a damped pendulum over 10^3 steps, Lorenz-96 by Euler and by
  RK4 with element loops, Van der Pol), an RNN over time, a vectorized
  two-layer MLP loss, logsumexp as loops, `while` loops with data-dependent
  trip counts, carried values through `np.sin` / `np.tanh`, `out[i] += ...`
  in nested loops and `break` in inner loops.

Every function is differentiated with numba and without, by `grad` and
`value_and_grad`, and checked against central finite differences and, where
autograd can trace it (no writes into arrays), against autograd to rounding.
Three functions that write into arrays also have a vectorized JAX twin
(`jax.jit(jax.value_and_grad)`, 64-bit) checked against srcgrad's compiled
gradient to rounding (skipped without JAX). The references are computed once
per function and shared by the parametrizations; srcgrad builds one program
per (function, wrt, jit) in a process, so each function is compiled by numba
once. Two forms srcgrad once rejected (a second name for an array written
into, `u = u_new`) sit beside their `.copy()` forms.

Inputs are written out or drawn from fixed seeds and kept away from every
branch threshold and `break` cut-off (test_inputs_clear_of_thresholds), so
the finite-difference step never changes which branch runs or how many
times a loop iterates.

This corpus found a bug, fixed since: a tuple assignment that swaps or
rotates names inside a loop or branch (`u, u_new = u_new, u`) was emitted as
sequential assignments.

No timing is asserted here: the speed of these shapes is measured by
`bench/new_user.py`.
"""

import numpy as np
import pytest

from gradcheck import assert_close, autograd_grad, check_corpus, numerical_grad


def _rng(seed):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------
# pair loops over particles
# ---------------------------------------------------------------------------

def lj_energy_2d(pos, eps, sigma):
    """Lennard-Jones energy of particles in the plane, every pair once."""
    n = pos.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            r2 = dx * dx + dy * dy
            sr2 = sigma * sigma / r2
            sr6 = sr2 * sr2 * sr2
            e += 4.0 * eps * (sr6 * sr6 - sr6)
    return e


def spring_forces_accumulated(pos, k, r0):
    """Harmonic springs between all pairs; forces accumulated into f[i], f[j]."""
    n = pos.shape[0]
    f = np.zeros((n, 2))
    for i in range(n):
        for j in range(i + 1, n):
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            r = np.sqrt(dx * dx + dy * dy)
            fmag = -k * (r - r0) / r
            f[i, 0] += fmag * dx
            f[i, 1] += fmag * dy
            f[j, 0] -= fmag * dx
            f[j, 1] -= fmag * dy
    return np.sum(f * f)


def morse_with_cutoff(pos, depth, a):
    """Morse potential, pairs beyond the cut-off skipped by a branch."""
    n = pos.shape[0]
    rc2 = 2.25
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            r2 = dx * dx + dy * dy
            if r2 < rc2:
                r = np.sqrt(r2)
                m = 1.0 - np.exp(-a * (r - 1.0))
                e += depth * (m * m - 1.0)
    return e


def sorted_neighbors_break(x, cutoff):
    """Soft repulsion on a line: positions sorted, the inner loop stops at the cut-off."""
    n = x.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            d = x[j] - x[i]
            if d > cutoff:
                break
            w = cutoff - d
            e += w * w * np.exp(-d)
    return e


# ---------------------------------------------------------------------------
# nested counted loops whose inner temporaries the backward sweep reads
# ---------------------------------------------------------------------------

def gmm_triangle_loglik(alphas, means, icf, X):
    """GMM log-likelihood (ADBench's parametrisation): Q lower-triangular, its
    diagonal exp(icf[k, :d]) and its strict lower part icf[k, d:], row by row;
    logsumexp over components written as loops."""
    n, d = X.shape
    K = alphas.shape[0]
    total = 0.0
    for i in range(n):
        logs = np.zeros(K)
        for k in range(K):
            sum_q = 0.0
            sq = 0.0
            idx = d
            for r in range(d):
                qdiag = np.exp(icf[k, r])
                sum_q = sum_q + icf[k, r]
                s = qdiag * (X[i, r] - means[k, r])
                for c in range(r):
                    s = s + icf[k, idx] * (X[i, c] - means[k, c])
                    idx += 1
                sq = sq + s * s
            logs[k] = alphas[k] + sum_q - 0.5 * sq
        m = logs[0]
        for k in range(1, K):
            if logs[k] > m:
                m = logs[k]
        acc = 0.0
        for k in range(K):
            acc = acc + np.exp(logs[k] - m)
        total = total + m + np.log(acc)
    amax = alphas[0]
    for k in range(1, K):
        if alphas[k] > amax:
            amax = alphas[k]
    asum = 0.0
    for k in range(K):
        asum = asum + np.exp(alphas[k] - amax)
    return total - n * (amax + np.log(asum))


def forward_substitution(L, diag, b):
    """Solve L y = b (unit strict lower part L, diagonal diag) by loops; a loss on y."""
    n = b.shape[0]
    y = np.zeros(n)
    for i in range(n):
        acc = b[i]
        for j in range(i):
            t = L[i, j] * y[j]
            acc = acc - t
        y[i] = acc / diag[i]
    return np.sum(y * y) + np.sum(np.sin(y))


# ---------------------------------------------------------------------------
# loop-invariant aliases through inlined helpers
# ---------------------------------------------------------------------------

def huber_regression_loops(w, X, y, delta):
    """Huber loss of a linear model: the residual is a temporary of the iteration that
    both arms of a branch read."""
    loss = 0.0
    for i in range(X.shape[0]):
        pred = 0.0
        for j in range(X.shape[1]):
            pred = pred + X[i, j] * w[j]
        r = pred - y[i]
        if abs(r) < delta:
            loss = loss + 0.5 * r * r
        else:
            loss = loss + delta * (abs(r) - 0.5 * delta)
    return loss


def _rhs_scalar(p, y):
    return -p[0] * y + p[1] * np.sin(y)


def rk4_scalar_helper(p, y0, steps):
    """RK4 for y' = -p0 y + p1 sin y; `p` is never written and passed to every call."""
    h = 0.05
    y = y0
    for s in range(steps):
        k1 = _rhs_scalar(p, y)
        k2 = _rhs_scalar(p, y + 0.5 * h * k1)
        k3 = _rhs_scalar(p, y + 0.5 * h * k2)
        k4 = _rhs_scalar(p, y + h * k3)
        y = y + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0
    return y * y


def _chain_rhs(x, y):
    n = x.shape[0]
    z = np.empty(n)
    z[0] = x[0]
    for i in range(1, n):
        z[i] = x[i] * y[i - 1]
    return z


def chain_ode_rk4(x, s):
    """cmpad's an_ode (bench/problems/ode.py): a helper taking the shape of `x`,
    filling a fresh array by an element loop, called four times per step."""
    n = x.shape[0]
    h = 2.0 / s
    y = np.zeros(n)
    for step in range(s):
        k1 = _chain_rhs(x, y)
        k2 = _chain_rhs(x, y + h * k1 / 2.0)
        k3 = _chain_rhs(x, y + h * k2 / 2.0)
        k4 = _chain_rhs(x, y + h * k3)
        y = y + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0
    return y[n - 1]


def _l96(x, forcing):
    n = x.shape[0]
    d = np.empty(n)
    for i in range(n):
        d[i] = (x[(i + 1) % n] - x[i - 2]) * x[i - 1] - x[i] + forcing
    return d


def lorenz96_rk4(x0, forcing, steps):
    """Lorenz-96 by RK4, the right-hand side an element loop with periodic indices."""
    dt = 0.01
    x = x0.copy()
    for s in range(steps):
        k1 = _l96(x, forcing)
        k2 = _l96(x + 0.5 * dt * k1, forcing)
        k3 = _l96(x + 0.5 * dt * k2, forcing)
        k4 = _l96(x + dt * k3, forcing)
        x = x + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(x * x) / x.shape[0]


def _dense(W, v, m, n):
    out = np.zeros(m)
    for i in range(m):
        acc = 0.0
        for j in range(n):
            acc = acc + W[i, j] * v[j]
        out[i] = np.tanh(acc)
    return out


def dense_helper_sizes(W1, W2, x):
    """Two dense layers through one helper called with the layer sizes."""
    h = _dense(W1, x, W1.shape[0], W1.shape[1])
    y = _dense(W2, h, W2.shape[0], W2.shape[1])
    return np.sum(y * y)


def _model(theta, t):
    return theta[0] * np.exp(-theta[1] * t) + theta[2]


def curve_fit_helper(theta, ts, ys):
    """Least squares for a decaying exponential, the model a helper called per data point."""
    loss = 0.0
    for k in range(ts.shape[0]):
        r = _model(theta, ts[k]) - ys[k]
        loss = loss + r * r
    return loss


def _vdp(x, v, mu):
    return v, mu * (1.0 - x * x) * v - x


def van_der_pol_rk4(mu, x0, v0, steps):
    """Van der Pol oscillator by RK4, a helper returning a tuple."""
    h = 0.05
    x = x0
    v = v0
    for s in range(steps):
        a1, b1 = _vdp(x, v, mu)
        a2, b2 = _vdp(x + 0.5 * h * a1, v + 0.5 * h * b1, mu)
        a3, b3 = _vdp(x + 0.5 * h * a2, v + 0.5 * h * b2, mu)
        a4, b4 = _vdp(x + h * a3, v + h * b3, mu)
        x = x + h * (a1 + 2.0 * a2 + 2.0 * a3 + a4) / 6.0
        v = v + h * (b1 + 2.0 * b2 + 2.0 * b3 + b4) / 6.0
    return x * x + 0.5 * v


# ---------------------------------------------------------------------------
# stencils
# ---------------------------------------------------------------------------

def heat_scratch_copy_back(u0, a, steps):
    """A scratch array allocated once, filled in place every step, copied back."""
    u = u0.copy()
    u_new = np.zeros(u.shape[0])
    for k in range(steps):
        u_new[1:-1] = u[1:-1] + a * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u_new[0] = u[0]
        u_new[-1] = u[-1]
        u[:] = u_new
    return np.sum(u * u)


def heat_swap_buffers(u0, a, steps):
    """Two buffers swapped every step: `u, u_new = u_new, u`."""
    u = u0.copy()
    u_new = u0.copy()
    for k in range(steps):
        u_new[1:-1] = u[1:-1] + a * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u, u_new = u_new, u
    return np.sum(u * u)


def heat_copy_each_step(u0, a, steps):
    """The textbook NumPy form: `un = u.copy()`, then u's interior from un's slices."""
    u = u0.copy()
    for k in range(steps):
        un = u.copy()
        u[1:-1] = un[1:-1] + a * (un[2:] - 2.0 * un[1:-1] + un[:-2])
    return np.sum(u * u)


def wave_leapfrog_copy(u0, c, steps):
    """1-d wave equation by leapfrog: three time levels rotated every step, the new
    level bound by `.copy()` (the form srcgrad's message asks for)."""
    u_prev = u0.copy()
    u = u0.copy()
    n = u0.shape[0]
    for k in range(steps):
        u_next = np.zeros(n)
        u_next[1:-1] = 2.0 * u[1:-1] - u_prev[1:-1] + c * c * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u_prev = u
        u = u_next.copy()
    return np.sum(u * u) + np.sum(u_prev)


# ---------------------------------------------------------------------------
# integrators, recurrent models, MLP
# ---------------------------------------------------------------------------

def damped_pendulum(theta0, omega0, g_over_l, damping, steps):
    """Semi-implicit Euler for theta'' = -g/l sin(theta) - c theta'."""
    dt = 0.01
    theta = theta0
    omega = omega0
    for k in range(steps):
        omega = omega + dt * (-g_over_l * np.sin(theta) - damping * omega)
        theta = theta + dt * omega
    return theta * theta + 0.5 * omega * omega


def pendulum_stormer_verlet(theta0, theta1, w2, steps):
    """Stormer-Verlet on positions only, the two time levels rotated by a tuple
    assignment `theta, theta_prev = theta_next, theta`."""
    dt = 0.01
    theta_prev = theta0
    theta = theta1
    for k in range(steps):
        theta_next = 2.0 * theta - theta_prev - dt * dt * w2 * np.sin(theta)
        theta, theta_prev = theta_next, theta
    return theta * theta + (theta - theta_prev) / dt


def lorenz96_euler_loops(x0, forcing, steps):
    """Lorenz-96 by explicit Euler, the right-hand side an element loop in place."""
    dt = 0.005
    n = x0.shape[0]
    x = x0.copy()
    for s in range(steps):
        d = np.empty(n)
        for i in range(n):
            d[i] = (x[(i + 1) % n] - x[i - 2]) * x[i - 1] - x[i] + forcing
        x = x + dt * d
    return np.sum(x * x)


def rnn_over_time(Wx, Wh, b, xs, h0):
    """An Elman RNN over a sequence, the loss accumulated at every step."""
    h = h0
    loss = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(Wx @ xs[t] + Wh @ h + b)
        loss = loss + np.sum(h * h)
    return loss


def mlp2_loss(W1, b1, W2, b2, X, y):
    """A two-layer MLP, mean squared error plus weight decay, vectorized."""
    H = np.tanh(X @ W1 + b1)
    pred = H @ W2 + b2
    r = pred[:, 0] - y
    return np.mean(r * r) + 1e-3 * (np.sum(W1 * W1) + np.sum(W2 * W2))


# ---------------------------------------------------------------------------
# reductions written as loops, while loops, carried nonlinear values
# ---------------------------------------------------------------------------

def logsumexp_loops(x):
    """max by a loop with a branch, then the shifted sum."""
    m = x[0]
    for i in range(1, x.shape[0]):
        if x[i] > m:
            m = x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.exp(x[i] - m)
    return m + np.log(s)


def logsumexp_rows_loops(X, w):
    """A logsumexp per row, nested loops, weighted sum of the results."""
    n, k = X.shape
    total = 0.0
    for i in range(n):
        m = X[i, 0]
        for j in range(1, k):
            if X[i, j] > m:
                m = X[i, j]
        s = 0.0
        for j in range(k):
            e = np.exp(X[i, j] - m)
            s = s + e
        total = total + w[i] * (m + np.log(s))
    return total


def kepler_newton_while(M, ecc):
    """Solve E - e sin E = M by Newton's method until the step is tiny."""
    E = M
    step = 1.0
    k = 0
    while abs(step) > 1e-13 and k < 50:
        step = (E - ecc * np.sin(E) - M) / (1.0 - ecc * np.cos(E))
        E = E - step
        k += 1
    return np.sin(E) + E * ecc


def while_until_budget(x, budget):
    """Consume terms until a running energy passes the budget (data-dependent trips)."""
    s = 0.0
    acc = 0.0
    k = 0
    while s < budget and k < x.shape[0]:
        s = s + x[k] * x[k]
        acc = np.sin(acc + x[k])
        k += 1
    return acc * s


def carried_sin_tanh_map(x0, a, steps):
    """A coupled map carried through np.sin and np.tanh."""
    x = x0
    y = 0.5 * x0
    for k in range(steps):
        x = np.sin(a * x + 0.3 * y)
        y = np.tanh(y + 0.5 * x)
    return np.sum(x * y)


def matmul_triple_loop(A, B):
    """out[i, j] += A[i, k] B[k, j] in three nested loops, then a tanh loss."""
    n, m = A.shape
    p = B.shape[1]
    out = np.zeros((n, p))
    for i in range(n):
        for j in range(p):
            for k in range(m):
                out[i, j] += A[i, k] * B[k, j]
    return np.sum(np.tanh(out))


def soft_histogram(x, centers, width):
    """Gaussian soft counts: out[j] += ... inside a double loop."""
    out = np.zeros(centers.shape[0])
    for i in range(x.shape[0]):
        for j in range(centers.shape[0]):
            d = x[i] - centers[j]
            out[j] += np.exp(-d * d / width)
    return np.sum(out * out)


def first_passage_rows(X, thresh):
    """Per row, accumulate squares until the running sum passes thresh, then break."""
    total = 0.0
    for i in range(X.shape[0]):
        s = 0.0
        for j in range(X.shape[1]):
            s = s + X[i, j] * X[i, j]
            if s > thresh:
                break
        total = total + np.sqrt(s)
    return total


# ---------------------------------------------------------------------------
# second names for arrays written into (srcgrad binds copies)
# ---------------------------------------------------------------------------

def heat_fresh_array(u0, a, steps):
    """1-d heat equation, a new array per step: `u = u_new` after writing into u_new."""
    u = u0.copy()
    for k in range(steps):
        u_new = u.copy()
        u_new[1:-1] = u[1:-1] + a * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u = u_new
    return np.sum(u * u)


def wave_leapfrog(u0, c, steps):
    """1-d wave equation by leapfrog, levels rotated by `u_prev = u; u = u_next`."""
    u_prev = u0.copy()
    u = u0.copy()
    n = u0.shape[0]
    for k in range(steps):
        u_next = np.zeros(n)
        u_next[1:-1] = 2.0 * u[1:-1] - u_prev[1:-1] + c * c * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u_prev = u
        u = u_next
    return np.sum(u * u) + np.sum(u_prev)


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------

def _lattice(n, cols, spacing, rng, jitter=0.08):
    """n particles on a jittered square lattice (no two closer than spacing - 2 jitter)."""
    base = np.array([[i % cols, i // cols] for i in range(n)], dtype=float) * spacing
    return base + rng.uniform(-jitter, jitter, size=(n, 2))


def _morse_positions():
    """7 particles on a jittered 1.0 x 1.3 lattice: squared pair distances stay at least
    0.1 away from the cut-off 2.25 (test_inputs_clear_of_thresholds)."""
    rng = _rng(24)
    base = np.array([[i % 3, (i // 3) * 1.3] for i in range(7)], dtype=float)
    return base + rng.uniform(-0.05, 0.05, size=(7, 2))


def _sorted_line():
    # gaps of 0.46 to 0.73: only neighbours are within the cut-off 1.0, and no pair
    # distance is within 0.05 of it (test_inputs_clear_of_thresholds)
    return np.cumsum([0.0, 0.55, 0.7, 0.46, 0.62, 0.5, 0.73, 0.48])


def _gmm_args():
    rng = _rng(30)
    n, d, K = 4, 3, 2
    return (rng.normal(size=K), rng.normal(size=(K, d)),
            rng.normal(size=(K, d + d * (d - 1) // 2)) * 0.5, rng.normal(size=(n, d)))


def _huber_args():
    # residuals 1.0 +- 0.3 apart from delta = 1.0 both ways (test_inputs_clear_of_thresholds)
    rng = _rng(71)
    X, w = rng.normal(size=(8, 3)), np.array([0.5, -1.0, 0.8])
    offsets = np.array([0.2, -0.4, 1.5, -2.1, 0.6, 1.4, -0.1, -1.8])
    return w, X, X @ w - offsets, 1.0


def _lower(n, seed):
    return np.tril(_rng(seed).normal(size=(n, n)) * 0.4, -1)


def _heat_u0(n=10, seed=40):
    return np.sin(np.linspace(0.0, np.pi, n)) + 0.1 * _rng(seed).normal(size=n)


def _distinct_rows(seed, n, k):
    rng = _rng(seed)
    return np.array([rng.permutation(np.linspace(-1.5, 1.5, k)) + rng.uniform(-0.05, 0.05, k)
                     for _ in range(n)])


def _case(func, make_args, wrt=0, marks=()):
    return pytest.param(func, make_args, wrt, id=func.__name__, marks=marks)


# A real srcgrad bug (wrong value and gradient, no error): in a loop or a branch, where
# names keep no SSA version, a tuple assignment whose right-hand side reads a name that an
# earlier target rebinds is emitted as sequential assignments: `a, b = b, a` becomes
# `a = b; b = a` (frontend/normalize.py, _Normalizer.bind, tuple branch: atom() keeps a
# bare name as it is instead of reading it into a temporary first), so both names end up
# holding the same value. At the top level SSA versions hide it.
CASES = [
    # pair loops
    _case(lj_energy_2d, lambda: (_lattice(8, 3, 1.15, _rng(20)), 0.8, 1.0), (0, 1, 2)),
    _case(spring_forces_accumulated, lambda: (_lattice(6, 3, 1.0, _rng(23)), 2.0, 1.1),
          (0, 1, 2)),
    _case(morse_with_cutoff, lambda: (_morse_positions(), 1.5, 1.2), (0, 1, 2)),
    _case(sorted_neighbors_break, lambda: (_sorted_line(), 1.0), (0, 1)),
    # nested counted loops with inner temporaries
    _case(gmm_triangle_loglik, _gmm_args, (0, 1, 2)),
    _case(forward_substitution,
          lambda: (_lower(5, 31), _rng(32).uniform(1.0, 2.0, 5), _rng(33).normal(size=5)),
          (0, 1, 2)),
    _case(huber_regression_loops, lambda: _huber_args(), (0, 3)),
    # invariant aliases through inlined helpers
    _case(rk4_scalar_helper, lambda: (np.array([0.7, 0.4]), 0.9, 40), (0, 1)),
    _case(chain_ode_rk4, lambda: (_rng(39).uniform(0.2, 1.0, 6), 5)),
    _case(lorenz96_rk4, lambda: (8.0 + _rng(41).normal(size=8), 8.0, 20), (0, 1)),
    _case(dense_helper_sizes,
          lambda: (_rng(42).normal(size=(4, 3)) * 0.6, _rng(43).normal(size=(2, 4)) * 0.6,
                   _rng(44).normal(size=3)), (0, 1, 2)),
    _case(curve_fit_helper,
          lambda: (np.array([1.3, 0.7, -0.2]), np.linspace(0.0, 3.0, 8),
                   np.exp(-0.5 * np.linspace(0.0, 3.0, 8)) + 0.05 * _rng(45).normal(size=8)),
          (0,)),
    _case(van_der_pol_rk4, lambda: (1.2, 0.8, -0.3, 60), (0, 1, 2)),
    # stencils
    _case(heat_scratch_copy_back, lambda: (_heat_u0(), 0.2, 12), (0, 1)),
    _case(heat_swap_buffers, lambda: (_heat_u0(), 0.2, 12), (0, 1)),
    _case(heat_copy_each_step, lambda: (_heat_u0(seed=49), 0.2, 12), (0, 1)),
    _case(wave_leapfrog_copy, lambda: (_heat_u0(seed=47), 0.5, 15), (0, 1)),
    # integrators, recurrent models, MLP
    _case(damped_pendulum, lambda: (1.2, 0.3, 9.81, 0.4, 1000), (0, 1, 2, 3)),
    _case(pendulum_stormer_verlet, lambda: (1.2, 1.203, 9.81, 300), (0, 1, 2)),
    _case(lorenz96_euler_loops, lambda: (8.0 + _rng(48).normal(size=8), 8.0, 30), (0, 1)),
    _case(rnn_over_time,
          lambda: (_rng(49).normal(size=(4, 3)) * 0.5, _rng(50).normal(size=(4, 4)) * 0.4,
                   _rng(51).normal(size=4) * 0.1, _rng(52).normal(size=(6, 3)),
                   _rng(53).normal(size=4) * 0.5), (0, 1, 2, 4)),
    _case(mlp2_loss,
          lambda: (_rng(58).normal(size=(3, 6)) * 0.5, _rng(59).normal(size=6) * 0.1,
                   _rng(60).normal(size=(6, 1)) * 0.5, _rng(61).normal(size=1) * 0.1,
                   _rng(62).normal(size=(10, 3)), _rng(63).normal(size=10)), (0, 1, 2, 3)),
    # loops as reductions, while, carried nonlinear values, accumulation, break
    _case(logsumexp_loops, lambda: (_distinct_rows(64, 1, 7)[0],)),
    _case(logsumexp_rows_loops, lambda: (_distinct_rows(65, 4, 5), _rng(66).normal(size=4)),
          (0, 1)),
    _case(kepler_newton_while, lambda: (1.1, 0.3), (0, 1)),
    _case(while_until_budget,
          # running sums of squares 0.49, 0.85, 1.49, 1.58, 2.27: stop after 5 with budget 2.0
          lambda: (np.array([0.7, -0.6, 0.8, 0.3, -0.83, 0.5, 0.9]), 2.0)),
    _case(carried_sin_tanh_map, lambda: (_rng(67).normal(size=5), 1.3, 25), (0, 1)),
    _case(matmul_triple_loop,
          lambda: (_rng(68).normal(size=(3, 4)) * 0.5, _rng(69).normal(size=(4, 2)) * 0.5),
          (0, 1)),
    _case(soft_histogram,
          lambda: (_rng(70).normal(size=6), np.linspace(-1.0, 1.0, 4), 0.5), (0, 1, 2)),
    _case(first_passage_rows,
          # per-row running sums keep at least 0.09 away from thresh; rows 0 and 2 break
          lambda: (np.array([[0.9, 0.5, 0.8, 0.4], [0.3, 0.4, 1.1, 0.2], [1.3, 0.2, 0.1, 0.6]]),
                   1.6), 0),
    # the `.copy()` forms of these are heat_copy_each_step and wave_leapfrog_copy
    _case(heat_fresh_array, lambda: (_heat_u0(), 0.2, 12), (0, 1)),
    _case(wave_leapfrog, lambda: (_heat_u0(seed=47), 0.5, 15), (0, 1)),
]


# ---------------------------------------------------------------------------
# the checks
# ---------------------------------------------------------------------------

_REFERENCES = {}


def _reference(func, make_args, wrt):
    """(finite differences, autograd or None, f(*args)), computed once per function."""
    if func.__name__ not in _REFERENCES:
        args = make_args()
        _REFERENCES[func.__name__] = (numerical_grad(func, args, wrt),
                                      autograd_grad(func, args, wrt), func(*args))
    return _REFERENCES[func.__name__]


def _unchanged(args, before, what):
    for k, (now, then) in enumerate(zip(args, before)):
        if isinstance(then, np.ndarray):
            assert np.array_equal(now, then), f"{what}: argument {k} was modified"


def _with_jit(cases):
    """Each case with numba and without."""
    return [pytest.param(*case.values, jit, marks=case.marks,
                         id=f"{case.id}-{'jit' if jit else 'nojit'}")
            for case in cases for jit in (True, False)]


@pytest.mark.parametrize("func, make_args, wrt, jit", _with_jit(CASES))
def test_gradient(func, make_args, wrt, jit):
    import srcgrad

    fd, ag, value = _reference(func, make_args, wrt)
    args = make_args()
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    name = func.__name__
    vg = srcgrad.value_and_grad(func, wrt=wrt, jit=jit)
    got_value, got = vg(*args)
    _unchanged(args, before, name)
    assert vg.backend == ("numba" if jit else "python")
    assert np.isclose(got_value, value, rtol=1e-12, atol=1e-14), (name, got_value, value)
    assert_close(got, fd, rtol=1e-5, atol=1e-7, what=f"{name} vs finite differences")
    if ag is not None:
        assert_close(got, ag, rtol=1e-8, atol=1e-10, what=f"{name} vs autograd")
    g = srcgrad.grad(func, wrt=wrt, jit=jit)
    assert_close(g(*args), got, rtol=1e-12, atol=1e-14, what=f"{name}: grad vs value_and_grad")


def test_corpus_size_and_distinct_names():
    check_corpus(CASES, globals(), minimum=30)


def _pair_r2(pos):
    n = pos.shape[0]
    return np.array([np.sum((pos[i] - pos[j]) ** 2) for i in range(n) for j in range(i + 1, n)])


def test_inputs_clear_of_thresholds():
    """The finite-difference step never flips a branch, a break or a trip count."""
    assert np.min(np.abs(_pair_r2(_morse_positions()) - 2.25)) > 0.1
    x = _sorted_line()
    gaps = np.array([x[j] - x[i] for i in range(len(x)) for j in range(i + 1, len(x))])
    assert np.min(np.abs(gaps - 1.0)) > 0.05
    X, thresh = CASES_BY_NAME["first_passage_rows"].values[1]()
    assert np.min(np.abs(np.cumsum(X * X, axis=1) - thresh)) > 0.05
    x, budget = CASES_BY_NAME["while_until_budget"].values[1]()
    assert np.min(np.abs(np.cumsum(x * x) - budget)) > 0.05
    for name in ("logsumexp_loops", "logsumexp_rows_loops"):
        rows = np.atleast_2d(CASES_BY_NAME[name].values[1]()[0])
        assert np.min(np.diff(np.sort(rows, axis=1), axis=1)) > 0.05
    w, X, y, delta = _huber_args()
    assert np.min(np.abs(np.abs(X @ w - y) - delta)) > 0.3
    alphas = _gmm_args()[0]
    assert np.min(np.abs(np.diff(np.sort(alphas)))) > 0.05
    assert np.min(_pair_r2(_lattice(8, 3, 1.15, _rng(20)))) > 0.8


CASES_BY_NAME = {case.id: case for case in CASES}


# ---------------------------------------------------------------------------
# JAX twins of functions autograd cannot trace (they write into arrays)
# ---------------------------------------------------------------------------

def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _jax_heat_scratch_copy_back(jnp, lax):
    def f(u0, a, steps):
        def step(k, u):
            return u.at[1:-1].set(u[1:-1] + a * (u[2:] - 2.0 * u[1:-1] + u[:-2]))
        u = lax.fori_loop(0, steps, step, u0)
        return jnp.sum(u * u)
    return f


def _jax_gmm_triangle_loglik(jnp, lax):
    from jax.scipy.special import logsumexp

    def f(alphas, means, icf, X):
        n, d = X.shape
        rows, cols = np.tril_indices(d, -1)  # row by row, the order of icf[k, d:]

        def q_matrix(row):
            return jnp.diag(jnp.exp(row[:d])).at[rows, cols].set(row[d:])
        Qs = jnp.stack([q_matrix(icf[k]) for k in range(alphas.shape[0])])
        xc = X[:, None, :] - means[None, :, :]                  # (n, K, d)
        qx = jnp.einsum("kij,nkj->nki", Qs, xc)
        logs = alphas[None, :] + jnp.sum(icf[:, :d], axis=1)[None, :] \
            - 0.5 * jnp.sum(qx * qx, axis=2)
        return jnp.sum(logsumexp(logs, axis=1)) - n * logsumexp(alphas)
    return f


def _jax_spring_forces_accumulated(jnp, lax):
    def f(pos, k, r0):
        n = pos.shape[0]
        i, j = np.triu_indices(n, 1)
        d = pos[i] - pos[j]
        r = jnp.sqrt(jnp.sum(d * d, axis=1))
        push = (-k * (r - r0) / r)[:, None] * d
        forces = jnp.zeros((n, 2)).at[i].add(push).at[j].add(-push)
        return jnp.sum(forces * forces)
    return f


_JAX_TWINS = [
    pytest.param(heat_scratch_copy_back, _jax_heat_scratch_copy_back,
                 id="heat_scratch_copy_back"),
    pytest.param(gmm_triangle_loglik, _jax_gmm_triangle_loglik, id="gmm_triangle_loglik"),
    pytest.param(spring_forces_accumulated, _jax_spring_forces_accumulated,
                 id="spring_forces_accumulated"),
]


@pytest.mark.parametrize("func, twin", _JAX_TWINS)
def test_against_jax(func, twin):
    """srcgrad's compiled gradient equals jax.grad of a vectorized twin to rounding."""
    jax = _jax()
    import jax.numpy as jnp
    import srcgrad

    _, make_args, wrt = CASES_BY_NAME[func.__name__].values
    args = make_args()
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    sizes = tuple(k for k, a in enumerate(args) if isinstance(a, int))
    value_and_grad = jax.jit(jax.value_and_grad(twin(jnp, jax.lax), argnums=positions),
                             static_argnums=sizes)
    value, expected = value_and_grad(*args)
    assert np.isclose(float(value), func(*args), rtol=1e-12)
    got = srcgrad.grad(func, wrt=wrt, jit=True)(*args)
    got = got if isinstance(wrt, tuple) else (got,)
    for k, (a, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(a, np.asarray(e), rtol=1e-9, atol=1e-11,
                                   err_msg=f"{func.__name__}: gradient {k} vs jax.grad")
