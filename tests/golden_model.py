"""Input for test_golden.py: keep this file unchanged, the expected source names its lines."""
import numpy as np


def energy(x, k):
    """A spring between x[0] and x[1], plus gravity on x[0]."""
    stretch = x[1] - x[0]
    e = 0.5 * k * stretch ** 2
    e += 9.81 * np.sin(x[0])
    return e


def rate(x, y):
    n = x.shape[0]
    z = np.empty(n)
    for i in range(n):
        z[i] = x[i] * y[i]
    return z


def euler(x, s):
    y = np.ones(x.shape[0])
    for step in range(s):
        y = y + 0.1 * rate(x, y)
    return np.sum(y)
