"""The rule registry: callable or operator -> `Rule`, and how rules are registered
(`defrule`, `defnondiff`), looked up and spelled in generated code.

Rule modules (arith.py, numpy_ufuncs.py, ...) import this module and register
their rules when `srcgrad.rules` imports them; see the package docstring for
what a rule is.
"""
from __future__ import annotations

import builtins
import functools
import hashlib
import inspect
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .. import runtime

# Sample argument shapes for the registry sweep.
UNARY = (((),), ((3,),), ((2, 3),))
BINARY = (((), ()), ((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)))


@dataclass(frozen=True)
class Rule:
    name: str  # how generated code spells the primal: "np.sin", "+", "abs"
    primal: Callable  # the primal as a Python callable (operator.add for "+")
    vjp: Callable | None  # None: the result carries no gradient
    domain: tuple[float, float] = (-2.0, 2.0)  # where the sweep samples arguments
    shapes: tuple = UNARY  # argument shapes the sweep tries
    # rng -> args, or a tuple of such callables (one sweep case each); overrides both
    sample: Callable | tuple | None = field(default=None, compare=False)
    custom: bool = False  # registered by srcgrad.defvjp: its cotangents' shapes are checked


REGISTRY: dict[Any, Rule] = {}

# Array methods and attributes that generated code spells as NumPy calls.
METHODS: dict[str, Callable] = {}
# Functions resolve.py rewrites into helpers that have rules: spelling -> rules module.
REWRITTEN: dict[str, str] = {"np.linalg.slogdet": "linalg"}
# Library functions generated code calls as a runtime helper (numba compiles the helper,
# or the helper splits a tuple result): the library callable -> (helper, how users spell it).
REPLACED: dict[Any, tuple[Callable, str]] = {}
# Attributes that are plain non-differentiable data (kept as attributes).
DATA_ATTRIBUTES = frozenset({"shape", "size", "ndim", "dtype"})

_SPELLING_ROOTS = (("np", np), ("np.linalg", np.linalg), ("math", math))


def spelling(obj) -> str | None:
    """How generated code names `obj` (`np.sin`, `math.exp`, `abs`), or None."""
    for prefix, module in _SPELLING_ROOTS:
        name = getattr(obj, "__name__", None)
        if name and getattr(module, name, None) is obj:
            return f"{prefix}.{name}"
    name = getattr(obj, "__name__", None)
    if name and getattr(builtins, name, None) is obj:
        return name
    if name in runtime.__all__ and getattr(runtime, name) is obj:
        return name
    return None


def differentiable_params(vjp) -> list[str]:
    """The rule's parameters after (g, ans) that have no default: one cotangent each."""
    params = list(inspect.signature(vjp).parameters.values())[2:]
    return [p.name for p in params if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _register(key, rule: Rule) -> None:
    REGISTRY[key] = rule


def defrule(*primals, domain=(-2.0, 2.0), shapes=UNARY, sample=None):
    """Decorator: register `vjp` as the reverse rule of each callable or operator in `primals`.

    Operators are given as `(gast operator class, symbol, python callable)`.
    """
    def register(vjp):
        for primal in primals:
            if isinstance(primal, tuple):
                key, symbol, fn = primal
                _register(key, Rule(symbol, fn, vjp, domain, shapes, sample))
            else:
                name = spelling(primal)
                if name is None:
                    raise ValueError(f"srcgrad cannot spell {primal!r} in generated code")
                _register(primal, Rule(name, primal, vjp, domain, shapes, sample))
        return vjp
    return register


def defnondiff(*primals) -> None:
    """Register callables or operators whose result carries no gradient (len, np.sign, <)."""
    for primal in primals:
        if isinstance(primal, tuple):
            key, symbol, fn = primal
            _register(key, Rule(symbol, fn, None))
        else:
            _register(primal, Rule(spelling(primal) or primal.__name__, primal, None))


def replace(primal, helper: Callable, spelled: str, module: str) -> None:
    """Generated code calls `helper` where the user calls `primal` (spelled `spelled`), and
    the supported-function table lists it in `module`'s group."""
    REPLACED[primal] = (helper, spelled)
    REWRITTEN[spelled] = module


_LATER: list[tuple[str, str, Callable, str]] = []  # (module, attribute, helper, group)


def replace_later(module: str, attribute: str, helper: Callable, group: str) -> None:
    """`replace` for `module.attribute`, done once `module` is imported (by the user's code:
    srcgrad itself does not import scipy.special, which takes about 0.1 s)."""
    _LATER.append((module, attribute, helper, group))
    REWRITTEN[f"{module}.{attribute}"] = group


def replacement(obj):
    """(helper, user spelling) generated code calls instead of library callable `obj`, or None."""
    for entry in [e for e in _LATER if e[0] in sys.modules]:
        module, attribute, helper, group = entry
        replace(getattr(sys.modules[module], attribute), helper, f"{module}.{attribute}", group)
        _LATER.remove(entry)
    try:
        return REPLACED.get(obj)
    except TypeError:
        return None


def lookup(key) -> Rule | None:
    """The rule for a callable or an operator class, or None."""
    try:
        return REGISTRY.get(key)
    except TypeError:  # unhashable callables have no rules
        return None


def table() -> str:
    """The supported-function table (Markdown), generated from the registry so it cannot drift."""
    groups: dict[str, list[str]] = {}
    for rule in REGISTRY.values():
        if rule.custom or rule.name in runtime.__all__ or rule.primal is None:
            continue  # user rules, helpers generated code calls, generated functions
        module = rule.vjp.__module__.rsplit(".", 1)[-1] if rule.vjp else "no gradient"
        groups.setdefault(module, [])
        if rule.name not in groups[module]:
            groups[module].append(rule.name)
    for spelled, module in REWRITTEN.items():
        groups.setdefault(module, []).append(spelled)
    titles = {"arith": "operators and builtins", "numpy_ufuncs": "elementwise functions",
              "reductions": "reductions", "shapes": "shape functions",
              "linalg": "products and linear algebra", "einsum": "Einstein summation", "joining": "joining arrays",
              "decompositions": "matrix decompositions (one rule per result)",
              "matrices": "building matrices, interpolation", "special": "special functions",
              "ordering": "sorting, selecting, cumulative products", "everyday": "dtype conversion",
              "no gradient": "flow through, no gradient (integers, masks, constructors)"}
    lines = ["# Functions srcgrad differentiates", "",
             "Generated by `python -m srcgrad rules` from the rule registry; do not edit.", "",
             "| group | functions |", "|---|---|"]
    for module in sorted(groups, key=lambda m: (m == "no gradient", m)):
        names = ", ".join(f"`{n}`" for n in sorted(groups[module]))
        lines.append(f"| {titles.get(module, module)} | {names} |")
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=None)
def fingerprint() -> str:
    """A hash of the rule and runtime sources, part of the generated-code cache key."""
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted(here.glob("*.py")) + sorted((here.parent / "runtime").glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
