"""Input for test_golden.py: keep this file unchanged, the expected source names its lines."""
import numpy as np


def energy(x, k):
    """A spring between x[0] and x[1], plus gravity on x[0]."""
    stretch = x[1] - x[0]
    e = 0.5 * k * stretch ** 2
    e += 9.81 * np.sin(x[0])
    return e
