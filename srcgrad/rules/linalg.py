"""Rules for products (dot and matmul live with @ in arith.py; transpose in shapes.py)."""
import numpy as np

from . import METHODS, defrule


@defrule(np.outer, shapes=(((3,), (4,)),))
def outer(g, ans, a, b):
    return g @ b, a @ g


@defrule(np.inner, shapes=(((3,), (3,)),))
def inner(g, ans, a, b):
    return g * b, g * a


@defrule(np.vdot, shapes=(((3,), (3,)),))
def vdot(g, ans, a, b):
    return g * b, g * a


METHODS.update({"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min,
                "prod": np.prod, "dot": np.dot, "copy": np.copy})
