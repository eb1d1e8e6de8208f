"""HVPs and Hessians through NumPy functions whose forward rules call run-time helpers
(np.prod, np.linalg.norm, np.linalg.solve, np.sort, np.cumprod, np.median, np.percentile),
by reverse mode
over the forward code (rules/forward_helpers.py), inside loops too.

Each Hessian is checked against central differences of srcgrad's gradient and against
jax.hessian of the same function (np standing for jax.numpy), numba on and off; hvp and
grad(grad(f)) against the Hessian. np.interp and the decompositions are in
test_hvp_decompositions.py; a helper still without such a rule (third order through
np.cumprod here) stops with an error naming the user's line.
"""

import numpy as np
import pytest

import srcgrad
from gradcheck import fd_hessian, flat_values, jax_hessian, jax_twin

EPS = 1e-5
A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
X = np.array([0.3, -0.5, 0.7, 1.1, -0.9, 0.4])
V = np.array([1.0, 0.5, -2.0, 0.3, 0.7, -1.0])


def prod(x):
    return np.prod(x) * np.sum(x) + np.sum(np.prod(x.reshape(2, 3), axis=1) ** 2)


def prod_with_zero(x):
    return np.prod(x * np.array([1.0, 0.0, 1.0, 1.0, 1.0, 1.0]) + x ** 2)


def norms(x):
    return np.linalg.norm(x) ** 3 + np.linalg.norm(x, 3) * np.sum(x) + np.linalg.norm(x, 1) * x[0]


def norm_rows(x):
    return np.sum(np.linalg.norm(x.reshape(2, 3), axis=1) ** 3)


def solves(x):
    m = A + np.diag(x[:3] ** 2)
    return np.sum(np.linalg.solve(m, x[3:]) ** 2) + np.sum(np.linalg.solve(m, x.reshape(3, 2)) ** 3)


def solve_vector(x):
    return np.sum(np.linalg.solve(A + np.diag(x[:3] ** 2), x[3:]) ** 2)


def sort_and_median(x):
    return np.sum(np.sort(x) * np.arange(6.0) * x) + np.median(x) * np.sum(x ** 2)


def percentiles(x):
    return np.percentile(x, 30.0) * np.sum(x ** 2) + np.sum(np.percentile(x.reshape(2, 3), 40.0,
                                                                          axis=1) ** 2)


def percentile_by_q(x, q):
    return np.percentile(x, q) ** 2 * np.sum(x)


def cumprod(x):
    return np.sum(np.cumprod(x) * x) + np.sum(np.cumprod(x.reshape(2, 3), axis=1) ** 2)


def in_a_loop(x):
    s = 0.0
    y = x
    for i in range(3):
        y = np.sin(y) + 0.1 * np.sort(y) * np.prod(y[:2])
        s = s + np.linalg.norm(y) ** 2 + np.cumprod(y)[i]
    return s


def spreads(x):  # np.var / np.std (forward rules of their own) and np.diff (linear)
    rows = x.reshape(2, 3)
    normed = (rows - np.mean(rows, axis=1, keepdims=True)) / np.std(rows, axis=1, keepdims=True)
    return np.sum(np.sin(normed)) + np.var(x, ddof=1) * np.sum(np.diff(x) ** 2)


FUNCTIONS = [prod, prod_with_zero, norms, norm_rows, solves, sort_and_median, percentiles,
             cumprod, in_a_loop, spreads]
# numba compiles each HVP in seconds: a loop through sort, prod, norm and cumprod, and a
# solve, stand for the rest (the suite's time); test_numba_twins checks the other helpers
NUMBA = [in_a_loop, solve_vector]
CASES = [(f, False) for f in FUNCTIONS] + [(f, True) for f in NUMBA]


@pytest.mark.parametrize("func, jit", CASES,
                         ids=[f"{f.__name__}-{'numba' if j else 'python'}" for f, j in CASES])
def test_hessian_through_forward_helpers(func, jit):
    product = srcgrad.hvp(func, jit=jit)
    assert product._reverse() is not None  # reverse over forward, not n second-order JVPs
    h = srcgrad.hessian(func, jit=jit)(X)
    np.testing.assert_allclose(h, jax_hessian(func, X), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(h, fd_hessian(func, X, EPS), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(product(X, V), h @ V, rtol=1e-10, atol=1e-10)
    if jit:
        assert product._reverse()[0].compiled.fallback_reason is None


@pytest.mark.parametrize("func", [prod, solves], ids=["prod", "solves"])
def test_grad_of_grad(func):
    twice = srcgrad.grad(srcgrad.grad(func, jit=False), jit=False)(X)
    np.testing.assert_allclose(twice, jax_hessian(func, X), rtol=1e-10, atol=1e-10)


def test_numba_twins_of_the_helpers():
    """Each helper's numba twin (1-d, axis=None) gives its plain-NumPy twin's numbers."""
    numba = pytest.importorskip("numba")
    from srcgrad import runtime as rt
    g, t, a = V, X[::-1].copy(), X * np.array([1.0, 0.0, 1.0, 1.0, 1.0, 1.0])
    cases = {"prod_others_grad": (g, a, None), "cumprod_tangent_grad": (g, t, a, None),
             "cumprod_second_tangent": (g, t, a, None), "percentile_weights": (1.5, X, 30.0, None),
             "percentile_spread": (t, X, 30.0, None), "percentile_spread_grad": (1.5, X, 30.0, None),
             "norm_direction_grads": (g, 1.5, np.linalg.norm(X, 3), X, 3, None, False)}
    for name, args in cases.items():
        params = ", ".join(f"a{k}" for k in range(len(args)))
        space = {name: getattr(rt, name)}
        exec(f"def twin({params}):\n    return {name}({params})", space)
        np.testing.assert_allclose(flat_values(numba.njit(space["twin"])(*args)),
                                   flat_values(space[name](*args)),
                                   rtol=1e-12, atol=1e-14, err_msg=name)


def test_second_derivatives_by_the_percentile_q():
    jax, f = jax_twin(percentile_by_q)
    q = 30.0
    by_q = srcgrad.grad(srcgrad.grad(percentile_by_q, wrt=1, jit=False), wrt=1, jit=False)(X, q)
    np.testing.assert_allclose(by_q, float(jax.hessian(f, 1)(X, q)), rtol=1e-10)
    mixed = srcgrad.grad(srcgrad.grad(percentile_by_q, wrt=1, jit=False), wrt=0, jit=False)(X, q)
    np.testing.assert_allclose(mixed, np.asarray(jax.jacfwd(jax.grad(f, 1), 0)(X, q)), rtol=1e-10)
    gradient = srcgrad.grad(percentile_by_q, wrt=1, jit=False)
    fd = [(gradient(X + EPS * e, q) - gradient(X - EPS * e, q)) / (2 * EPS) for e in np.eye(6)]
    np.testing.assert_allclose(mixed, fd, rtol=1e-6, atol=1e-7)


def cumprod_of_a_number(x):
    return np.sum(np.cumprod(x * np.array([1.0, 2.0, 0.5])))


def test_a_helper_still_without_rule_names_the_users_line():
    """Third order through np.cumprod needs a rule of its second tangent's helper."""
    twice = srcgrad.grad(srcgrad.grad(cumprod_of_a_number, jit=False), jit=False)
    with pytest.raises(srcgrad.MissingRuleError) as info:
        srcgrad.grad(twice, jit=False)(0.7)
    message = str(info.value)
    assert "test_hvp_numpy.py:" in message and "np.cumprod" in message
    assert ".cache" not in message and "defvjp" not in message
