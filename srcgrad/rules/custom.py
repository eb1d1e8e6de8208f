"""`srcgrad.defvjp`: give any callable a reverse rule, used like a built-in one.

The callable may have no Python source (a numba function, a C extension, a
SciPy routine). Its rule is a short Python function `vjp(g, ans, *args)`
returning the cotangent of each argument without a default (a tuple when
there are several, `None` for no gradient), exactly like the built-in rules:
generated code inlines its body, so under `jit=True` it runs compiled when
numba can compile the callable and the rule. The rule's number of cotangents
is checked when it is registered; their shapes are checked when it runs.
"""
from __future__ import annotations

import inspect
import textwrap

import gast

from ..errors import SrcgradError
from .registry import REGISTRY, Rule, differentiable_params, spelling


def defvjp(primal, vjp=None):
    """Register `vjp(g, ans, *args)` as the reverse rule of `primal`; usable as a decorator.

        @srcgrad.defvjp(my_kernel)
        def my_kernel_vjp(g, ans, x, y):
            return g * y, g * x
    """
    if vjp is None:
        return lambda rule: defvjp(primal, rule)
    if not callable(primal):
        raise TypeError(f"srcgrad.defvjp: {primal!r} is not callable")
    if not inspect.isfunction(vjp):
        raise TypeError(f"srcgrad.defvjp: the rule for {_name(primal)} must be a Python function "
                        f"(def), got {type(vjp).__name__}")
    params = list(inspect.signature(vjp).parameters.values())
    if len(params) < 3 or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        raise TypeError(f"srcgrad.defvjp: the rule for {_name(primal)} must take (g, ans, "
                        "then each argument of the call by name), without *args or **kwargs")
    _check_returns(primal, vjp)
    REGISTRY[primal] = Rule(spelling(primal) or _name(primal), primal, vjp, custom=True)
    return vjp


def _name(obj) -> str:
    return getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)


def _check_returns(primal, vjp) -> None:
    try:
        source = textwrap.dedent(inspect.getsource(vjp))
    except (OSError, TypeError) as exc:
        raise SrcgradError(f"srcgrad.defvjp: cannot read the source of the rule {vjp.__qualname__} "
                           f"({exc}); define it with def in a file") from None
    tree = gast.parse(source).body[0]
    wanted = differentiable_params(vjp)
    where = f"{inspect.getsourcefile(vjp)}:{vjp.__code__.co_firstlineno}"
    *body, last = tree.body
    if not isinstance(last, gast.Return) or last.value is None or any(
            isinstance(n, gast.Return) for stmt in body for n in gast.walk(stmt)):
        raise SrcgradError(f"srcgrad.defvjp: the rule {vjp.__qualname__} ({where}) must end with "
                           "its only return statement, which returns the cotangents")
    value = last.value
    count = len(value.elts) if isinstance(value, gast.Tuple) and len(wanted) > 1 else 1
    if len(wanted) > 1 and not isinstance(value, gast.Tuple) or count != len(wanted):
        raise SrcgradError(
            f"srcgrad.defvjp: the rule {vjp.__qualname__} ({where}) for {_name(primal)} returns "
            f"{count} cotangent(s), but takes {len(wanted)} argument(s) "
            f"({', '.join(wanted)}): return one per argument, as a tuple display "
            "(use None for an argument without a gradient)")
