"""A loop-heavy model the interop tests share (tests/test_interop_jax.py, test_interop_torch.py),
so srcgrad builds and numba compiles its programs once per test session."""
import numpy as np


def coupled(x, w, steps):
    """Explicit Euler steps of y_i' = w tanh(y_{i-1}) x_i (y_0' = -y_0), y(0) = x: a loop over
    steps with an element loop inside (JAX would need lax.scan over lax.fori_loop)."""
    y = x.copy()
    h = 1.0 / steps
    for _ in range(steps):
        z = np.empty(y.shape[0])
        z[0] = -y[0]
        for i in range(1, y.shape[0]):
            z[i] = w * np.tanh(y[i - 1]) * x[i]
        y = y + h * z
    return y


def coupled_vectorized(cat, tanh, x, w, steps):
    """`coupled` in a framework's own array operations (`cat`, `tanh`: its concatenate, tanh)."""
    y = x
    for _ in range(steps):
        z = cat([-y[:1], w * tanh(y[:-1]) * x[1:]])
        y = y + z / steps
    return y


X = np.array([0.4, -0.3, 0.8, 0.5])
W, STEPS = 1.3, 3
