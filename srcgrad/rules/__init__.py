"""The derivative-rule registry: callable or operator -> `Rule`.

A rule is a short Python function `vjp(g, ans, *args)`: given the cotangent
`g` of the result `ans`, it returns the cotangent of each argument that has no
default (one expression, or a tuple when there are several; `None` for an
argument that gets no gradient). Arguments with defaults are options
(`axis=None`), never differentiated.

Rules are executable (the registry sweep in tests calls them on NumPy values
and checks them against finite differences) and are also templates: the
reverse pass inlines a rule's body into the generated code, so rule bodies may
use only their parameters, `np`, `math`, builtins and the helpers in
`srcgrad.runtime`.

Adding a primitive touches one rules module and nothing else.
"""
from __future__ import annotations

from .registry import (BINARY, DATA_ATTRIBUTES, METHODS, REGISTRY, REPLACED, REWRITTEN, UNARY,  # noqa: F401
                       Rule, defnondiff, defrule, differentiable_params, fingerprint, lookup,
                       replacement, spelling, table)

from . import arith, calls, numpy_ufuncs, reductions, linalg, einsum, shapes, joining  # noqa: E402,F401  (they register)
from . import matrices, ordering, decompositions, special, everyday  # noqa: E402,F401  (issue 15)
from . import helpers, forward, forward_more  # noqa: E402,F401  (forward rules refer to the reverse ones)
from . import forward_helpers, forward_helpers_linalg  # noqa: E402,F401  (issue 17: reverse rules of the forward rules' helpers)
