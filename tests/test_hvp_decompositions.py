"""HVPs and Hessians through np.interp and the matrix decompositions (issue 17): reverse
mode over forward code whose rules call interp_tangent, eigh_values_tangent, ...
(rules/forward_helpers.py, rules/forward_helpers_linalg.py).

Each Hessian is checked against central differences of srcgrad's gradient and against
jax.hessian of the same function (np standing for jax.numpy), hvp and grad(grad(f))
against the Hessian; numba compiles one function through every helper (its compiles
dominate: one HVP compile), and np.interp's numba twins against their NumPy forms.
"""

import numpy as np
import pytest

import srcgrad
from gradcheck import fd_hessian, flat_values, jax_hessian

EPS = 1e-5
XP = np.array([-1.0, 0.0, 0.5, 2.0])
FP = np.array([0.0, 1.0, 0.2, 3.0])
A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
X = np.array([0.3, -0.5, 0.7, 1.1, -0.9, 0.4])
V = np.array([1.0, 0.5, -2.0, 0.3, 0.7, -1.0])


def interp_in_x_and_fp(x):
    return np.sum(np.interp(x, XP, FP * x[:4]) * x)


def interp_in_xp(x):
    return np.sum(np.interp(x[:2] ** 2, np.cumsum(np.abs(x) + 0.1), x) ** 2) + np.interp(
        x[0], XP, FP) * x[1]


def interp_at_a_knot(x):
    return np.sum(np.interp(x * np.array([1.0, 0.0, 1.0, 1.0, 1.0, 1.0]), XP, FP + x[:4]) * x)


def eigenvalues(x):
    w, v = np.linalg.eigh(A + np.diag(x[:3] ** 2) + np.outer(x[3:], x[3:]))
    return np.sum(w ** 3) + w[0] * x[1]


def eigenvectors(x):  # a function of V unchanged by the eigenvectors' signs, as JAX's may differ
    w, v = np.linalg.eigh(A + np.diag(x[:3] ** 2) + np.outer(x[3:], x[3:]))
    return np.sum(v ** 4 * np.arange(1.0, 4.0)) + np.sum(w * v[0] ** 2)


def singular_values(x):
    s = np.linalg.svd(x.reshape(3, 2) + 2.0 * np.eye(3, 2), compute_uv=False)
    u, s_wide, vt = np.linalg.svd(x.reshape(2, 3) + A[:2], full_matrices=False)
    return np.sum(s ** 3) * s[0] + np.sum(s_wide ** 3) * x[0]


def svd_factors(x):  # functions of U and Vt that their columns' signs leave alone
    u, s, vt = np.linalg.svd(x.reshape(3, 2) + 2.0 * np.eye(3, 2) * np.array([1.0, 2.0]),
                             full_matrices=False)
    square_u, square_s, square_vt = np.linalg.svd(A + np.outer(x[:3], x[3:]))
    return (np.sum(u ** 4) + np.sum(vt ** 4 * s)
            + np.sum((square_u * square_vt.T) * np.arange(1.0, 4.0)))


def qr_factors(x):
    q, r = np.linalg.qr(x.reshape(3, 2) + 2.0 * np.eye(3, 2))
    return np.sum((q * r[0]) ** 2) + np.sum(r ** 3)


def least_squares(x):
    m = np.vstack([A + np.diag(x[:3]), x[3:].reshape(1, 3)])
    solution, residuals, rank, sv = np.linalg.lstsq(m, np.arange(4.0) + x[0] ** 2, rcond=None)
    return np.sum(solution ** 3) + np.sum(residuals) * x[1] + np.sum(sv ** 2) * x[2]


def number_tangents(x):  # A * x[1] + x[0]: a tangent that is a number broadcast over A
    w, v = np.linalg.eigh(A * x[1] + x[0])
    s = np.linalg.svd(A + x[0], compute_uv=False)
    q, r = np.linalg.qr(A + x[0] * x[1])
    return np.sum(w ** 3) + np.sum(v ** 4) + np.sum(s ** 3) + np.sum(r ** 2 * q)


def everything(x):  # one numba compile through every helper covered here
    w, v = np.linalg.eigh(A + np.diag(x[:3] ** 2) + np.outer(x[3:], x[3:]))
    s = np.linalg.svd(x.reshape(2, 3) + A[:2], compute_uv=False)
    y = np.interp(x, XP, FP * x[:4]) + np.interp(x[0], np.cumsum(np.abs(x) + 0.1), x)
    return np.sum(y * x) + np.sum(v ** 4 * w) + np.sum(s ** 3)


FUNCTIONS = [interp_in_x_and_fp, interp_in_xp, eigenvalues, eigenvectors, singular_values,
             svd_factors, qr_factors, least_squares, number_tangents, everything]
KNOTS = [interp_at_a_knot]  # one-sided at the knot, as the first derivative: not for FD
CASES = [(f, True) for f in FUNCTIONS] + [(f, False) for f in KNOTS]


@pytest.mark.parametrize("func, smooth", CASES, ids=[f.__name__ for f, _ in CASES])
def test_hessian(func, smooth):
    product = srcgrad.hvp(func, jit=False)
    assert product._reverse() is not None  # reverse over forward, not n second-order JVPs
    h = srcgrad.hessian(func, jit=False)(X)
    np.testing.assert_allclose(h, jax_hessian(func, X), rtol=1e-10, atol=1e-10)
    if smooth:
        np.testing.assert_allclose(h, fd_hessian(func, X, EPS), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(product(X, V), h @ V, rtol=1e-10, atol=1e-10)


def test_numba_hvp_through_every_helper():
    """One compile (tens of seconds: eigh's helpers) through interp, eigh and svd values;
    its Hessian's driver is test_hvp_numpy's concern. Checked against jax's Hessian."""
    product = srcgrad.hvp(everything, jit=True)
    np.testing.assert_allclose(product(X, V), jax_hessian(everything, X) @ V, rtol=1e-10,
                               atol=1e-10)
    np.testing.assert_allclose(product(X, X), jax_hessian(everything, X) @ X, rtol=1e-10,
                               atol=1e-10)
    assert product._reverse()[0].compiled.fallback_reason is None


def test_factors_run_as_python_under_numba():
    """The matrices' cotangents of svd's U and Vt and qr's tangents are Python
    (decomposition_curvature.py), so numba falls back to Python for their HVP, with a
    warning, and the same numbers."""
    with pytest.warns(srcgrad.SrcgradWarning, match="qr_._curvature"):
        got = srcgrad.hvp(qr_factors, jit=True)(X, V)
    np.testing.assert_allclose(got, srcgrad.hvp(qr_factors, jit=False)(X, V), rtol=1e-12)


@pytest.mark.parametrize("func", [interp_in_x_and_fp, eigenvectors, least_squares])
def test_grad_of_grad(func):
    twice = srcgrad.grad(srcgrad.grad(func, jit=False), jit=False)(X)
    np.testing.assert_allclose(twice, jax_hessian(func, X), rtol=1e-10, atol=1e-10)


def test_numba_twins_of_the_helpers():
    """np.interp's new helpers' numba twins give their NumPy forms' numbers (scalar and
    array x, a constant's tangent as a number), and lstsq's curvatures (a number for a
    tangent too), which no numba HVP here compiles. The other decompositions' helpers are
    one register_jitable source for both, run compiled by test_numba_hvp_through_every_helper."""
    numba = pytest.importorskip("numba")
    from srcgrad import runtime as rt
    x = np.array([-1.5, -0.2, 0.0, 0.7, 2.0, 2.5])
    cases = {"interp_tangent": [(V, 0.0, V[:4], x, XP, FP), (0.5, V[2:], V[:4], 0.3, XP, FP)],
             "interp_curvature": [(V[::-1], V, V[2:], V[:4], x, XP, FP),
                                  (1.5, 0.5, V[2:], 0.0, 0.3, XP, FP)],
             "lstsq_solution_curvature": [(V[:3], np.outer(V[:4], V[3:]), 0.3, V[3:],
                                           np.vstack([A, V[3:]]), V[:4])],
             "lstsq_residuals_curvature": [(V[:1], np.outer(V[:4], V[3:]), V[2:],
                                            np.vstack([A, V[3:]]), V[:4])]}
    for name, calls in cases.items():
        for args in calls:
            params = ", ".join(f"a{k}" for k in range(len(args)))
            space = {name: getattr(rt, name)}
            exec(f"def twin({params}):\n    return {name}({params})", space)
            np.testing.assert_allclose(flat_values(numba.njit(space["twin"])(*args)),
                                       flat_values(space[name](*args)),
                                       rtol=1e-12, atol=1e-14, err_msg=name)
