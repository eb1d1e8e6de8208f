"""Everyday scientific Python (issue 15): comprehensions, generators, lists used as values,
printing and formatting, random generators, astype, and the rules users reach for first
(eigh, cholesky, svd, qr, lstsq, sort, median, interp, scipy.special, ...).

Each program is written as a scientist writes it and is checked with numba on against
central finite differences and, where autograd can trace it, against autograd; each
asserts that the gradient really ran compiled by numba, and that value_and_grad's value
is the function's. One compiled function per program (value_and_grad) and small sizes:
the cost is numba compiling.
"""
import math

import numpy as np
import pytest
import scipy.special as sp

import srcgrad
from gradcheck import assert_close, autograd_grad, check_corpus, numerical_grad

R = np.random.default_rng(15)
X5 = R.uniform(0.3, 1.2, size=5)
Y5 = R.normal(size=5)
A33 = R.normal(size=(3, 3)) + 3.0 * np.eye(3)
OBS = np.cumsum(R.normal(size=8))


# --- comprehensions and generators -------------------------------------------------------

def sum_of_squares_gen(x):
    n = x.shape[0]
    return sum(x[i] ** 2 for i in range(n))


def rk4_fit(k):
    """A decay rate fitted by RK4, the residuals collected with a comprehension."""
    def rhs(y):
        return -k * y
    h, y, ys = 0.1, 1.0, []
    for _ in range(10):
        k1 = rhs(y)
        k2 = rhs(y + 0.5 * h * k1)
        k3 = rhs(y + 0.5 * h * k2)
        k4 = rhs(y + h * k3)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        ys.append(y)
    target = [math.exp(-0.7 * 0.1 * (i + 1)) for i in range(10)]
    return sum((ys[i] - target[i]) ** 2 for i in range(10))


def filtered_sum(x):
    return sum(v * v for v in x if v > 0.5)


def nested_generators(x):
    return sum(x[i] * x[j] for i in range(3) for j in range(i, 3))


def list_comprehension_then_index(x):
    sq = [np.sin(v) ** 2 for v in x]
    return sq[0] + 2.0 * sq[-1] + len(sq)


def array_of_comprehension(w):
    feats = np.array([np.tanh(w * t) for t in np.linspace(0.0, 1.0, 6)])
    return np.sum(feats ** 2)


def rows_of_comprehension(x):
    m = np.array([x * k for k in range(1, 4)])
    return np.sum(m @ x)


def sum_of_list(x):
    terms = []
    for i in range(x.shape[0]):
        terms.append(np.exp(-x[i]))
    return sum(terms)


def list_as_value(x):
    a = x[0]
    b = [1.0, a * a, 2.0 * x[1]]
    return np.sum(b) + np.dot(b, b)


def max_of_generator(x):
    return max(v * v - v for v in x) + min(x)


def enumerate_comprehension(x):
    weights = [1.0 / (k + 1) for k, _ in enumerate(x)]
    return sum(w * v for w, v in zip(weights, x))


def stack_of_list(x):
    rows = [x, x * x, np.cos(x)]
    return np.sum(np.stack(rows) * 0.5)


def polynomial_comprehension(c, t):
    powers = [t ** k for k in range(len(c))]
    return sum(c[k] * powers[k] for k in range(len(c)))


# --- Python that does not touch the math ----------------------------------------------

def logged_loss(x):
    loss = np.sum((x - 0.5) ** 2)
    print(f"loss = {loss:.4f} at n={x.shape[0]}")
    print("norm %.3f" % np.sqrt(loss), "of", "{} values".format(x.shape[0]))
    assert loss >= 0.0, "a squared error is never negative"
    return loss


def random_features(w, rng):
    """Random Fourier features with a Generator passed in: the draws are constants."""
    omega = rng.standard_normal(4)
    phase = rng.uniform(0.0, 2.0 * np.pi, size=4)
    feats = np.cos(np.outer(w, omega) + phase)
    return np.sum(feats ** 2) / 4.0


def bootstrap_mean(x):
    """A seeded Generator created inside."""
    rng = np.random.default_rng(7)
    idx = rng.integers(0, x.shape[0], size=12)
    return np.mean(x[idx] ** 2)


def counts_as_float(x):
    k = np.arange(x.shape[0]).astype(float)
    return np.sum(x * k) + np.sum(x.astype(np.float64) ** 2)


# --- rules: linear algebra -------------------------------------------------------------

def kalman_filter(q):
    """A 1-d random-walk Kalman filter; the negative log-likelihood of the innovations."""
    m, p, r = 0.0, 1.0, 0.5
    nll = 0.0
    for t in range(OBS.shape[0]):
        p = p + q
        s = p + r
        innovation = OBS[t] - m
        nll = nll + 0.5 * (math.log(2.0 * math.pi * s) + innovation ** 2 / s)
        gain = p / s
        m = m + gain * innovation
        p = (1.0 - gain) * p
    return nll


def gp_cholesky(ell, x, y):
    k = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ell ** 2) + 0.1 * np.eye(x.shape[0])
    chol = np.linalg.cholesky(k)
    alpha = np.linalg.solve(k, y)
    return 0.5 * np.dot(y, alpha) + np.sum(np.log(np.diag(chol)))


def gp_eigh(ell, x, y):
    k = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / ell ** 2) + 0.1 * np.eye(x.shape[0])
    w, v = np.linalg.eigh(k)
    alpha = v @ ((v.T @ y) / w)
    return 0.5 * np.dot(y, alpha) + 0.5 * np.sum(np.log(w))


def top_eigenvector(a):
    s = a + a.T
    w, v = np.linalg.eigh(s)
    return w[-1] + np.sum(v[:, -1] ** 2 * np.arange(3.0))


def nuclear_norm(a):
    return np.sum(np.linalg.svd(a, compute_uv=False))


def qr_least_squares(a, b):
    q, r = np.linalg.qr(a)
    return np.sum(np.linalg.solve(r, q.T @ b) ** 2)


def lstsq_fit(a, b):
    coef, resid, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(coef ** 2) + np.sum(resid)


def structured_matrix(x):
    m = np.diag(x[:3]) + np.triu(np.outer(x[:3], x[2:]), 1)
    return np.trace(m @ m) + np.sum(np.tril(m)) + np.sum(np.kron(x[:2], x[3:]))


# --- rules: ordering, interpolation, special functions --------------------------------

def trimmed_loss(x):
    s = np.sort(x)
    return np.sum(s[1:-1] ** 2) + np.median(x) + np.percentile(x, 30.0)


def interp_curve(fp):
    xp = np.linspace(0.0, 1.0, 5)
    return np.sum(np.interp(np.array([0.1, 0.35, 0.8]), xp, fp) ** 2)


def gamma_poisson(a):
    counts = np.array([0.0, 2.0, 3.0, 1.0, 5.0])
    return np.sum(sp.gammaln(counts + a) - sp.gammaln(a) + sp.xlogy(counts, 2.0 * a))


def logistic_regression(w, x, y):
    z = x * w
    return -np.sum(y * np.log(sp.expit(z)) + (1.0 - y) * np.log(sp.expit(-z)))


def log_mixture(mu):
    comps = -0.5 * (OBS[:5, None] - mu[None, :]) ** 2
    return -np.sum(sp.logsumexp(comps, axis=1)) + np.logaddexp.reduce(mu)


def erf_and_lgamma(x):
    return math.erf(x) + math.lgamma(x + 2.0) + np.sum(sp.erf(X5 * x)) + np.sum(sp.digamma(X5 + x))


def growth_and_rolls(x):
    return np.sum(np.cumprod(1.0 + 0.1 * x)) + np.sum(np.roll(x, 2) * X5) \
        + np.sum(np.take(x, np.array([0, 3, 3])) ** 2) + np.sum(np.atleast_2d(x) ** 2)


CASES = [
    pytest.param(sum_of_squares_gen, (X5,), 0),
    pytest.param(rk4_fit, (0.9,), 0),
    pytest.param(filtered_sum, (X5,), 0),
    pytest.param(nested_generators, (X5,), 0),
    pytest.param(list_comprehension_then_index, (X5,), 0),
    pytest.param(array_of_comprehension, (0.8,), 0),
    pytest.param(rows_of_comprehension, (Y5,), 0),
    pytest.param(sum_of_list, (X5,), 0),
    pytest.param(list_as_value, (X5,), 0),
    pytest.param(max_of_generator, (Y5,), 0),
    pytest.param(enumerate_comprehension, (Y5,), 0),
    pytest.param(stack_of_list, (Y5,), 0),
    pytest.param(polynomial_comprehension, (Y5[:4], 0.7), (0, 1)),
    pytest.param(logged_loss, (X5,), 0),
    pytest.param(bootstrap_mean, (Y5,), 0),
    pytest.param(counts_as_float, (Y5,), 0),
    pytest.param(kalman_filter, (0.3,), 0),
    pytest.param(gp_cholesky, (0.7, X5, Y5), 0),
    pytest.param(gp_eigh, (0.7, X5, Y5), 0),
    pytest.param(top_eigenvector, (A33,), 0),
    pytest.param(nuclear_norm, (A33,), 0),
    pytest.param(qr_least_squares, (R.normal(size=(5, 3)), Y5), (0, 1)),
    pytest.param(lstsq_fit, (R.normal(size=(5, 3)), Y5), (0, 1)),
    pytest.param(structured_matrix, (Y5,), 0),
    pytest.param(trimmed_loss, (Y5,), 0),
    pytest.param(interp_curve, (Y5,), 0),
    pytest.param(gamma_poisson, (1.3,), 0),
    pytest.param(logistic_regression, (0.4, Y5, (Y5 > 0).astype(float)), 0),
    pytest.param(log_mixture, (Y5[:3],), 0),
    pytest.param(erf_and_lgamma, (0.6,), 0),
    pytest.param(growth_and_rolls, (Y5,), 0),
]
CASES = [pytest.param(*case.values, id=case.values[0].__name__) for case in CASES]

def _check(func, args, wrt):
    vg = srcgrad.value_and_grad(func, wrt=wrt, jit=True)
    value, grad = vg(*args)
    assert vg.backend == "numba", f"{func.__name__} did not run compiled"
    assert np.isclose(value, func(*args), rtol=1e-12, atol=1e-14)
    assert_close(grad, numerical_grad(func, args, wrt), rtol=1e-5, atol=1e-7,
                 what=f"{func.__name__} vs finite differences")
    reference = autograd_grad(func, args, wrt)
    if reference is not None:
        assert_close(grad, reference, rtol=1e-8, atol=1e-10, what=f"{func.__name__} vs autograd")


def test_corpus_is_complete():
    check_corpus(CASES, globals(), 30)


@pytest.mark.parametrize("func, args, wrt", CASES)
def test_everyday_gradient(func, args, wrt, capsys):
    _check(func, args, wrt)
    if func is logged_loss:
        shown = capsys.readouterr().out
        assert "loss = " in shown and "norm " in shown and "5 values" in shown


def test_generator_passed_in_draws_constants():
    """A Generator argument: srcgrad's gradient equals finite differences of the function
    with the same draws (a fresh generator of the same seed for every evaluation)."""
    w = X5[:3]
    grad = srcgrad.grad(random_features, jit=True)(w, np.random.default_rng(3))
    expected = numerical_grad(lambda v: random_features(v, np.random.default_rng(3)), (w,), 0)
    assert_close(grad, expected, rtol=1e-5, atol=1e-7)
