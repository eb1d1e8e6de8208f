"""srcgrad with SciPy: exact gradients for scipy.optimize.minimize (jac=True), Hessian-vector
products for its Newton methods (hessp=), and exact Jacobian-vector products for a
Jacobian-free Newton-Krylov solve through scipy.sparse.linalg.LinearOperator.

    python examples/scipy_fit.py

Every model is a plain loop over NumPy values; srcgrad differentiates it as written.
"""
import numpy as np
import scipy.optimize
import scipy.sparse.linalg

import srcgrad


def rosenbrock(x):
    total = 0.0
    for i in range(x.shape[0] - 1):
        total += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total


def logistic_loss(w, X, y, alpha):
    """Mean negative log-likelihood of a logistic regression, with an L2 penalty."""
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z) / y.shape[0] + 0.5 * alpha * np.sum(w * w)


def rates(u, v, theta):
    """Lotka-Volterra: prey u, predators v."""
    return theta[0] * u - theta[1] * u * v, theta[3] * u * v - theta[2] * v


def simulate(theta, y0, h, steps):
    """Classical Runge-Kutta, `steps` steps of size h; one row (u, v) per step."""
    out = np.empty((steps, 2))
    u, v = y0[0], y0[1]
    for k in range(steps):
        a1, b1 = rates(u, v, theta)
        a2, b2 = rates(u + 0.5 * h * a1, v + 0.5 * h * b1, theta)
        a3, b3 = rates(u + 0.5 * h * a2, v + 0.5 * h * b2, theta)
        a4, b4 = rates(u + h * a3, v + h * b3, theta)
        u = u + h * (a1 + 2.0 * a2 + 2.0 * a3 + a4) / 6.0
        v = v + h * (b1 + 2.0 * b2 + 2.0 * b3 + b4) / 6.0
        out[k, 0] = u
        out[k, 1] = v
    return out


def fit_loss(theta, y0, data, h):
    return np.sum((simulate(theta, y0, h, data.shape[0]) - data) ** 2)


def bratu(u, lam):
    """The residual of u'' + lam exp(u) = 0 on (0, 1), u = 0 at both ends, n interior points."""
    n = u.shape[0]
    r = np.empty(n)
    for i in range(n):
        left = u[i - 1] if i > 0 else 0.0
        right = u[i + 1] if i < n - 1 else 0.0
        r[i] = (left - 2.0 * u[i] + right) * (n + 1) ** 2 + lam * np.exp(u[i])
    return r


def newton_krylov_exact(residual, u0, args=(), tol=1e-10, maxiter=20):
    """Newton's method, each step solved by GMRES on J(u) applied through srcgrad.jvp (exact,
    no finite differences). Returns (u, the number of Newton steps)."""
    u = np.array(u0, dtype=np.float64)
    still = tuple(0.0 * np.asarray(a) for a in args)  # the arguments do not move
    for step in range(maxiter):
        r = residual(u, *args)
        if np.linalg.norm(r) < tol:
            return u, step
        here = u.copy()
        jacobian = scipy.sparse.linalg.LinearOperator(
            (u.size, u.size), dtype=np.float64,
            matvec=lambda v: srcgrad.jvp(residual, (here, *args), (v, *still))[1])
        du, info = scipy.sparse.linalg.gmres(jacobian, -r, rtol=1e-12, atol=0.0)
        if info != 0:
            raise RuntimeError(f"GMRES did not converge at Newton step {step} (info={info})")
        u = u + du
    raise RuntimeError(f"Newton did not converge in {maxiter} steps")


def main():
    x0 = np.array([-1.2, 1.0, -0.5, 0.8, 1.3])
    found = scipy.optimize.minimize(srcgrad.value_and_grad(rosenbrock), x0, jac=True,
                                    method="BFGS")
    print(f"Rosenbrock, BFGS with jac=True: x = {np.round(found.x, 6)} in {found.nit} steps")
    found = scipy.optimize.minimize(rosenbrock, x0, jac=srcgrad.grad(rosenbrock),
                                    hessp=srcgrad.hvp(rosenbrock), method="trust-krylov")
    print(f"Rosenbrock, trust-krylov with hessp=srcgrad.hvp: x = {np.round(found.x, 6)} "
          f"in {found.nit} steps")

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X @ np.array([1.5, -2.0, 0.5]) + 0.3 * rng.normal(size=200) > 0).astype(float)
    found = scipy.optimize.minimize(srcgrad.value_and_grad(logistic_loss), np.zeros(3),
                                    args=(X, y, 1e-3), jac=True, method="L-BFGS-B")
    print(f"logistic regression: w = {np.round(found.x, 4)}, loss {found.fun:.4f}")

    truth, y0, h = np.array([1.0, 0.4, 0.8, 0.2]), np.array([2.0, 1.0]), 0.1
    data = simulate(truth, y0, h, 60) + 0.01 * rng.normal(size=(60, 2))
    start = np.array([0.8, 0.5, 0.9, 0.3])
    found = scipy.optimize.minimize(srcgrad.value_and_grad(fit_loss), start,
                                    args=(y0, data, h), jac=True, method="L-BFGS-B",
                                    bounds=[(0.05, 3.0)] * 4)  # unbounded steps blow the ODE up
    print(f"Lotka-Volterra fit: theta = {np.round(found.x, 3)} (true {truth})")

    u, steps = newton_krylov_exact(bratu, np.zeros(50), (1.0,))
    print(f"Bratu, Newton-Krylov with srcgrad.jvp: max u = {u.max():.6f} after {steps} Newton "
          f"steps, residual {np.linalg.norm(bratu(u, 1.0)):.1e}")


if __name__ == "__main__":
    main()
