"""srcgrad with SciPy (examples/scipy_fit.py): scipy.optimize.minimize converges with
value_and_grad as jac=True (Rosenbrock, a logistic regression, a Lotka-Volterra parameter
fit) and with srcgrad.hvp as hessp=; a Jacobian-free Newton-Krylov solve with srcgrad.jvp as
the exact Jacobian-vector product (LinearOperator + GMRES) converges quadratically and agrees
with scipy.optimize.newton_krylov. The derivatives themselves are checked against central
finite differences here; the models are the example's own.
"""
import os
import sys

import numpy as np
import pytest
import scipy.optimize

import srcgrad
from gradcheck import assert_close, numerical_grad

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "examples"))
import scipy_fit  # noqa: E402

X0 = np.array([-1.2, 1.0, -0.5, 0.8, 1.3])


def test_rosenbrock_with_jac_and_hessp():
    value_and_grad = srcgrad.value_and_grad(scipy_fit.rosenbrock)
    value, grad = value_and_grad(X0)
    assert_close(grad, numerical_grad(scipy_fit.rosenbrock, (X0,), 0))
    assert_close(grad, scipy.optimize.rosen_der(X0), rtol=1e-12)
    v = np.linspace(-1.0, 1.0, 5)
    assert_close(srcgrad.hvp(scipy_fit.rosenbrock)(X0, v), scipy.optimize.rosen_hess_prod(X0, v),
                 rtol=1e-12)
    found = scipy.optimize.minimize(value_and_grad, X0, jac=True, method="BFGS")
    assert found.success and np.allclose(found.x, 1.0, atol=1e-5)
    rosen = scipy_fit.rosenbrock
    found = scipy.optimize.minimize(rosen, X0, jac=srcgrad.grad(rosen), hessp=srcgrad.hvp(rosen),
                                    method="trust-krylov")
    assert found.success and np.allclose(found.x, 1.0, atol=1e-6)


def test_logistic_regression_and_an_ode_fit():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 3))
    y = (X @ np.array([1.5, -2.0, 0.5]) + 0.3 * rng.normal(size=100) > 0).astype(float)
    loss = srcgrad.value_and_grad(scipy_fit.logistic_loss, jit=False)
    w0 = np.array([0.1, -0.2, 0.3])
    assert_close(loss(w0, X, y, 1e-2)[1], numerical_grad(scipy_fit.logistic_loss,
                                                          (w0, X, y, 1e-2), 0))
    found = scipy.optimize.minimize(loss, np.zeros(3), args=(X, y, 1e-2), jac=True,
                                    method="BFGS")
    assert found.success and np.linalg.norm(loss(found.x, X, y, 1e-2)[1]) < 1e-5

    truth, y0, h = np.array([1.0, 0.4, 0.8, 0.2]), np.array([2.0, 1.0]), 0.1
    data = scipy_fit.simulate(truth, y0, h, 40)
    fit = srcgrad.value_and_grad(scipy_fit.fit_loss, jit=False)
    start = np.array([0.8, 0.5, 0.9, 0.3])
    assert_close(fit(start, y0, data, h)[1], numerical_grad(scipy_fit.fit_loss,
                                                             (start, y0, data, h), 0), rtol=1e-5)
    found = scipy.optimize.minimize(fit, start, args=(y0, data, h), jac=True,
                                    method="L-BFGS-B", bounds=[(0.05, 3.0)] * 4)
    assert found.success and np.allclose(found.x, truth, atol=1e-3)


def test_newton_krylov_with_exact_jacobian_vector_products():
    u0 = np.zeros(30)
    v = np.linspace(0.0, 1.0, 30)
    _, jv = srcgrad.jvp(scipy_fit.bratu, (u0 + 0.1, 1.0), (v, 0.0))
    fd = (scipy_fit.bratu(0.1 + 1e-6 * v, 1.0) - scipy_fit.bratu(0.1 - 1e-6 * v, 1.0)) / 2e-6
    assert_close(jv, fd, rtol=1e-6, atol=1e-6)
    u, steps = scipy_fit.newton_krylov_exact(scipy_fit.bratu, u0, (1.0,))
    assert steps <= 5  # exact Jacobian-vector products: Newton's quadratic convergence
    assert np.linalg.norm(scipy_fit.bratu(u, 1.0)) < 1e-10
    reference = scipy.optimize.newton_krylov(lambda w: scipy_fit.bratu(w, 1.0), u0, f_tol=1e-10)
    assert_close(u, reference, rtol=1e-7, atol=1e-9)
    with pytest.raises(RuntimeError, match="did not converge"):
        scipy_fit.newton_krylov_exact(scipy_fit.bratu, u0, (1.0,), maxiter=1)
