"""Part of pass 3 (resolve.py): calls generated code spells another way, for everyday code.

`library_call` and `method_call` are called by resolve's `_Resolver`; each returns
the rewritten node, or None to leave the call to resolve. Guarantees:
- A library function with a runtime twin (`rules.REPLACED`: scipy.special's
  ufuncs, np.logaddexp.reduce) is called as that helper.
- `np.linalg.eigh/svd/qr/lstsq(A, ...)` become a tuple display of one helper per
  result (`(eigh_values(A), eigh_vectors(A))`), each with its own rule;
  `svd(..., compute_uv=False)` is `svd_s(A)`.
- `np.random.default_rng(seed)` is `new_generator(seed)`; a Generator method call
  on a local name (`rng.normal(size=3)`) is kept as written, its callee recorded
  as a `RandomDraw` (no rule: the reverse pass refuses a draw that receives a
  differentiable argument, so a draw is a constant and never a silent zero).
- `"...".format(a, b)` is `format_text("...", a, b)`.
"""
from __future__ import annotations

import copy

import gast
import numpy as np

from .. import runtime
from ..rules import replacement

# Generator methods (numba draws from a Generator passed in natively).
RANDOM_METHODS = frozenset({
    "random", "integers", "normal", "standard_normal", "uniform", "exponential",
    "standard_exponential", "gamma", "standard_gamma", "beta", "poisson", "binomial", "choice",
    "permutation", "shuffle", "laplace", "logistic", "lognormal", "chisquare", "geometric",
    "multivariate_normal", "dirichlet", "standard_t", "weibull", "rayleigh", "triangular"})


class RandomDraw:
    """Stands for `<generator>.<method>` in `Resolved.callees`: a draw, no derivative rule."""

    def __init__(self, method: str):
        self.__name__ = self.__qualname__ = method
        self.method = method


_DRAWS: dict[str, RandomDraw] = {}


def random_draw(method: str) -> RandomDraw:
    """One stand-in per method, so inlined callees drawing alike merge into one name."""
    return _DRAWS.setdefault(method, RandomDraw(method))


def _keyword(node, name, default):
    for k in node.keywords:
        if k.arg == name:
            return k.value
    return default


def _helpers(resolver, node, names, args):
    """A tuple display calling each helper (a runtime name) on copies of `args`."""
    calls = [resolver._call(n, getattr(runtime, n), [copy.deepcopy(a) for a in args], [], node)
             for n in names]
    return gast.copy_location(gast.Tuple(elts=calls, ctx=gast.Load()), node)


def _decomposition(resolver, obj, node):
    args = node.args
    if obj is np.linalg.eigh and len(args) == 1 and not node.keywords:
        return _helpers(resolver, node, ("eigh_values", "eigh_vectors"), args)
    if obj is np.linalg.qr and len(args) == 1 and not node.keywords:
        return _helpers(resolver, node, ("qr_q", "qr_r"), args)
    if obj is np.linalg.lstsq and len(args) in (2, 3):
        rcond = args[2] if len(args) == 3 else _keyword(node, "rcond", None)
        rest = args[:2] + ([rcond] if rcond is not None else [])
        return _helpers(resolver, node, ("lstsq_solution", "lstsq_residuals", "lstsq_rank",
                                         "lstsq_sv"), rest)
    if obj is np.linalg.svd and len(args) == 1:
        uv = _keyword(node, "compute_uv", gast.Constant(value=True, kind=None))
        full = _keyword(node, "full_matrices", gast.Constant(value=True, kind=None))
        if isinstance(uv, gast.Constant) and uv.value is False:
            return resolver._call("svd_s", runtime.svd_s, args, [], node)
        if isinstance(uv, gast.Constant) and uv.value is True:
            u = resolver._call("svd_u", runtime.svd_u, [copy.deepcopy(args[0]), full], [], node)
            s = resolver._call("svd_s", runtime.svd_s, [copy.deepcopy(args[0])], [], node)
            vt = resolver._call("svd_vt", runtime.svd_vt,
                                [copy.deepcopy(args[0]), copy.deepcopy(full)], [], node)
            return gast.copy_location(gast.Tuple(elts=[u, s, vt], ctx=gast.Load()), node)
    return None


def library_call(resolver, obj, node):
    """A library call spelled as a runtime helper, or None."""
    replaced = replacement(obj)
    if replaced is not None:
        helper = replaced[0]
        return resolver._call(helper.__name__, helper, node.args, node.keywords, node)
    if obj is np.random.default_rng:
        return resolver._call("new_generator", runtime.new_generator, node.args, node.keywords,
                              node)
    return _decomposition(resolver, obj, node)


def method_call(resolver, node):
    """`"...".format(...)` or a draw `rng.normal(...)` on a local name, or None."""
    func = node.func
    if (func.attr == "format" and isinstance(func.value, gast.Constant)
            and isinstance(func.value.value, str)):
        if node.keywords:
            resolver.fail(node, "str.format with keyword arguments is not supported; pass the "
                          "values by position or use an f-string", syntax=True)
        args = [func.value] + [resolver.visit(a) for a in node.args]
        return resolver._call("format_text", runtime.format_text, args, [], node)
    if (func.attr in RANDOM_METHODS and isinstance(func.value, gast.Name)
            and func.value.id in resolver.locals):
        node.args = [resolver.visit(a) for a in node.args]
        node.keywords = [resolver.visit(k) for k in node.keywords]
        resolver.callees[f"{func.value.id}.{func.attr}"] = random_draw(func.attr)
        return node
    return None
