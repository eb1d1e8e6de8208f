"""The benchmark problems, one module each, all with the same layout.

Each module defines

- `SIZES = {"quick": [...], "full": [...]}`: sizes as dicts of parameters;
  `label(size)` names one, `x(size)` places it on the plot's axis (`XLABEL`);
- `generate(size)`: the input data (NumPy arrays), from GradBench's
  generators and seeds where GradBench defines them;
- the natural-loop form that srcgrad differentiates, as plain module-level
  functions, and `srcgrad_impl(data)`, whose primal is `numba.njit` of the
  same function;
- `jax_impl`, `torch_impl`, `autograd_impl`: each peer's idiomatic form,
  importing the peer only when called;
- `reference(data)`: the gradient to validate against, as
  `(vector, coords, kind)`; `coords` is None when every entry is known;
- `gradbench`: a dict of GradBench function name -> callable(input JSON) ->
  `(run, post)` used by the adapter (`bench/gradbench.py`).

An implementation is an `Impl`: `primal()` and the callable returned by
`make_gradient()` take no arguments (the data is bound), `sync` waits for a
result (JAX's `block_until_ready`), and `to_flat` turns a gradient into one
float64 vector, in the order `reference` uses.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

NAMES = ["lse", "llsq", "ode", "gmm", "lstm", "ba", "det"]
TOOLS = ["srcgrad", "jax", "torch", "autograd"]


def identity(value):
    return value


@dataclass
class Impl:
    primal: Callable[[], Any]
    make_gradient: Callable[[], Callable[[], Any]]
    to_flat: Callable[[Any], Any]
    sync: Callable[[Any], Any] = identity
    notes: list = field(default_factory=list)


def load(name: str):
    if name not in NAMES:
        raise KeyError(f"unknown problem {name!r}; the problems are {', '.join(NAMES)}")
    return importlib.import_module(f"bench.problems.{name}")


def implementation(problem, tool: str, data) -> Impl:
    return getattr(problem, f"{tool}_impl")(data)
