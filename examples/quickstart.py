"""srcgrad quickstart: differentiate a NumPy function, check it, and read the generated code.

Run:  pip install -e . && python examples/quickstart.py
"""
import numpy as np

import srcgrad


def loss(w, b, X, y):
    """Logistic-regression negative log-likelihood with an L2 penalty."""
    z = X @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    nll = -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))
    return nll + 0.01 * np.sum(w * w)


def central_difference(f, args, i, eps=1e-6):
    """The gradient of f with respect to args[i] by central finite differences."""
    x = np.asarray(args[i], dtype=float)
    grad = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[k] = eps
        plus = list(args)
        minus = list(args)
        plus[i], minus[i] = x + step, x - step
        if x.ndim == 0:
            plus[i], minus[i] = float(plus[i]), float(minus[i])
        grad[k] = (f(*plus) - f(*minus)) / (2 * eps)
    return grad


def main():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = (rng.random(50) < 0.5).astype(float)
    w = rng.normal(size=3)
    b = 0.1

    value_and_grad = srcgrad.value_and_grad(loss, wrt=("w", "b"))
    value, (dw, db) = value_and_grad(w, b, X, y)
    fd_w = central_difference(loss, (w, b, X, y), 0)
    fd_b = float(central_difference(loss, (w, b, X, y), 1))

    print(f"loss(w, b) = {value:.10f}    (computed by {value_and_grad.backend})\n")
    print(f"{'':10}{'srcgrad':>18}{'finite diff':>18}{'abs error':>12}")
    for k in range(3):
        print(f"{'dL/dw[%d]' % k:10}{dw[k]:18.10f}{fd_w[k]:18.10f}{abs(dw[k] - fd_w[k]):12.1e}")
    print(f"{'dL/db':10}{db:18.10f}{fd_b:18.10f}{abs(db - fd_b):12.1e}")
    worst = max(np.max(np.abs(dw - fd_w)), abs(db - fd_b))
    print(f"\nlargest difference from finite differences: {worst:.1e}")
    assert worst < 1e-6, "gradient does not match finite differences"

    print("\nThe generated gradient (also: srcgrad.show(loss), python -m srcgrad show):\n")
    print(value_and_grad.source)


if __name__ == "__main__":
    main()
