"""The arguments a bridged function is declared with (srcgrad.to_jax, srcgrad.to_torch): shape
and dtype from example arguments, checked at every call.

Guarantees: a declared argument is a float (differentiated), integer or boolean scalar or
array; anything else, a count of examples other than the function's parameters, or no float
argument at all is a TypeError naming the function and the argument. `mismatch` says what is
`check` raises ValueError for a value of another shape, TypeError for another dtype, naming
the argument and what was declared.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Declared:
    name: str
    shape: tuple
    dtype: np.dtype  # of the example, as NumPy sees it

    @property
    def differentiable(self) -> bool:
        return self.dtype.kind == "f"


def _where(func, bridge: str) -> str:
    return f"srcgrad.{bridge}({func.__qualname__})"


def declare(func, examples, bridge: str) -> list[Declared]:
    """One `Declared` per parameter of `func`, from `examples` (one example per parameter)."""
    params = list(inspect.signature(func).parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY) for p in params):
        raise TypeError(f"{_where(func, bridge)}: bridged functions take positional parameters "
                        "only; wrap it in a def with one parameter per argument")
    if len(examples) != len(params):
        names = ", ".join(p.name for p in params)
        raise TypeError(f"{_where(func, bridge)} needs one example argument per parameter "
                        f"({names}); got {len(examples)}")
    declared = []
    for param, example in zip(params, examples):
        array = np.asarray(example)
        if array.dtype.kind not in "fiub" or array.dtype.itemsize > 8:
            raise TypeError(
                f"{_where(func, bridge)}: the example for {param.name!r} is a "
                f"{type(example).__name__} (dtype {array.dtype}); bridged arguments are float, "
                "integer or boolean scalars and arrays. Bind other values with a closure or "
                "functools.partial")
        declared.append(Declared(param.name, array.shape, array.dtype))
    if not any(d.differentiable for d in declared):
        raise TypeError(f"{_where(func, bridge)}: no example argument is a float, so there is "
                        "nothing to differentiate")
    return declared


def check(func, bridge: str, declared: Declared, shape, dtype, want_dtype) -> None:
    """ValueError for a value whose shape is not `declared`'s, TypeError for a dtype other
    than `want_dtype` (the declared dtype as the framework spells it)."""
    if tuple(shape) != tuple(declared.shape):
        raise ValueError(
            f"{_where(func, bridge)}: argument {declared.name!r} has shape {tuple(shape)}, but "
            f"its example declared shape {tuple(declared.shape)}; bridge the function again "
            "with examples of the shapes you call it with")
    if dtype != want_dtype:
        raise TypeError(
            f"{_where(func, bridge)}: argument {declared.name!r} has dtype {dtype}, but it was "
            f"declared {want_dtype}; convert it, or bridge the function again with examples of "
            "that dtype")
