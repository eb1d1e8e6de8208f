"""GradBench's `hello` eval: `square(x) = x * x` and `double(x)`, its derivative."""
from __future__ import annotations

from ..common import once


def square(x):
    return x * x


def _gb_square(inp):
    x = float(inp)
    return (lambda: square(x)), float


def _gb_double(inp):
    import srcgrad
    x = float(inp)
    g = once("hello.grad", lambda: srcgrad.grad(square))
    return (lambda: g(x)), float


gradbench = {"square": _gb_square, "double": _gb_double}
GRADBENCH_WARMUP = [("square", 1.0), ("double", 1.0)]
