"""A generic sweep over the derivative-rule registry (`srcgrad.rules.REGISTRY`).

* every differentiable rule is called directly on NumPy values and checked
  against central finite differences with a dot-product test, and its
  cotangents must have exactly their arguments' shapes;
* every non-differentiable primitive we rely on is registered as such;
* every rule body is a valid template: it only refers to names that generated
  modules have, its return arity matches `differentiable_params`, and
  `templates.instantiate` accepts it;
* the registry covers the required primitives;
* every runtime helper's plain-NumPy twin agrees with its numba twin.
"""

import ast
import builtins
import inspect
import itertools
import math
import textwrap
import zlib

import gast
import numba
import numpy as np
import pytest

import srcgrad.runtime as runtime
from srcgrad.rules import REGISTRY as _ALL_RULES
from srcgrad.rules import spelling

# srcgrad's own rules (rules users add with srcgrad.defvjp are tested in test_custom_rules.py;
# `linked` ties a recursive call's partials to its arguments and is not the derivative of a
# function: test_calls.py checks recursive gradients end to end instead)
REGISTRY = {key: rule for key, rule in _ALL_RULES.items()
            if not rule.custom and key is not runtime.linked and rule.primal is not None}
from srcgrad.runtime import (extremum_share, fill_like, log_or_zero, matmul_lhs_grad,
                             matmul_rhs_grad, seed_like, select_where, tie_share, unbroadcast,
                             zeros_like)
from srcgrad.rules import differentiable_params
from srcgrad.transforms.templates import instantiate


# ---------------------------------------------------------------------------
# registry helpers
# ---------------------------------------------------------------------------

def _is_operator_key(key):
    return isinstance(key, type) and issubclass(key, gast.AST)


def _label(key, rule):
    """A readable name for a registry entry: `np.sin`, `math.sin`, `abs`, `gast.Add`."""
    return f"gast.{key.__name__}" if _is_operator_key(key) else rule.name


def _scalar_only(primal):
    """`math.*` functions and builtins (max, min, abs, pow, float) take scalars only."""
    name = getattr(primal, "__name__", None)
    if not name:
        return False
    return getattr(math, name, None) is primal or getattr(builtins, name, None) is primal


def _fmt_shapes(shapes):
    return "x".join("(" + ",".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"
                    for s in shapes)


def _rule_id(vjp):
    return f"{vjp.__module__.rsplit('.', 1)[-1]}.{vjp.__qualname__}"


def _differentiable_entries():
    """(label, rule) for each distinct (primal, vjp) pair with a vjp."""
    seen = set()
    out = []
    for key, rule in REGISTRY.items():
        if rule.vjp is None or (rule.primal, rule.vjp) in seen:
            continue
        seen.add((rule.primal, rule.vjp))
        out.append((_label(key, rule), rule))
    return out


def _sweep_params():
    params = []
    for label, rule in _differentiable_entries():
        if rule.sample is not None:
            samples = rule.sample if isinstance(rule.sample, tuple) else (rule.sample,)
            for k, sample in enumerate(samples):
                suffix = getattr(sample, "__name__", str(k)).strip("_")
                params.append(pytest.param(rule, sample, id=f"{label}-sample-{suffix}"))
            continue
        shapes = rule.shapes
        if _scalar_only(rule.primal):
            shapes = [s for s in shapes if all(d == () for d in s)]
        assert shapes, f"{label}: no argument shapes left to test"
        for s in shapes:
            params.append(pytest.param(rule, s, id=f"{label}-{_fmt_shapes(s)}"))
    return params


SWEEP = _sweep_params()
VJPS = sorted({rule.vjp for rule in REGISTRY.values() if rule.vjp is not None}, key=_rule_id)


def _draw(rng, shape, lo, hi):
    if shape == ():
        return float(rng.uniform(lo, hi))
    return rng.uniform(lo, hi, size=shape)


def _is_float_value(x):
    if isinstance(x, np.ndarray):
        return x.dtype == np.float64
    return isinstance(x, float)


def _copy(x):
    if isinstance(x, tuple):  # the values a joining function joins
        return tuple(_copy(e) for e in x)
    return x.copy() if isinstance(x, np.ndarray) else x


def _same(a, b):
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(_same, a, b))
    return np.array_equal(a, b)


# ---------------------------------------------------------------------------
# 1. every differentiable rule against central finite differences
# ---------------------------------------------------------------------------

def _sample(rule, shapes, request):
    """(the test's own generator, the rule's arguments): from its sample callable, or
    drawn in its domain with the given shapes (see _sweep_params)."""
    rng = np.random.default_rng(zlib.crc32(request.node.callspec.id.encode()))
    if rule.sample is not None:
        return rng, list(shapes(rng))
    lo, hi = rule.domain
    return rng, [_draw(rng, s, lo, hi) for s in shapes]


@pytest.mark.parametrize("rule, shapes", SWEEP)
def test_rule_matches_finite_differences(rule, shapes, request):
    rng, args = _sample(rule, shapes, request)

    ans = rule.primal(*args)
    g = float(rng.normal()) if np.ndim(ans) == 0 else rng.normal(size=np.shape(ans))

    snapshot = [_copy(a) for a in (g, ans, *args)]
    out = rule.vjp(g, ans, *args)
    for before, now in zip(snapshot, (g, ans, *args)):
        assert _same(before, now), "the rule mutated one of its inputs"

    n = len(differentiable_params(rule.vjp))
    if n == 1:
        cots = (out,)
    else:
        assert isinstance(out, tuple) and len(out) == n, \
            f"expected a tuple of {n} cotangents, got {out!r}"
        cots = out
    assert len(args) >= n
    cots = tuple(cots) + (None,) * (len(args) - n)

    for i, x, c, f in _argument_slots(rule, args, cots):
        if not _is_float_value(x):
            assert c is None, f"argument {i} is not a float value but gets a cotangent"
            continue
        # Shape convention: a float for a scalar argument, an ndarray of the same shape
        # for an array argument.
        if c is not None:
            if isinstance(x, np.ndarray):
                assert isinstance(c, np.ndarray), \
                    f"cotangent {i} is {type(c).__name__}, argument is an array of shape {x.shape}"
                assert c.shape == x.shape, f"cotangent {i} has shape {c.shape}, not {x.shape}"
                assert c.dtype == np.float64, f"cotangent {i} has dtype {c.dtype}"
            else:
                assert isinstance(c, float) and not isinstance(c, np.ndarray), \
                    f"cotangent {i} of a scalar argument is {type(c).__name__} {np.shape(c)}"
            assert np.all(np.isfinite(c))

        # Dot-product test: <g, J v> by central differences vs <cot, v>.
        v = float(rng.normal()) if not isinstance(x, np.ndarray) else rng.normal(size=x.shape)
        eps = 1e-6 * max(1.0, float(np.max(np.abs(x))))
        terms = np.asarray(g) * (np.asarray(f(x + eps * v)) - np.asarray(f(x - eps * v))) / (2 * eps)
        numeric = float(np.sum(terms))
        analytic = 0.0 if c is None else float(np.sum(np.asarray(c) * v))
        scale = float(np.sum(np.abs(terms))) + (0.0 if c is None else float(np.sum(np.abs(c * v))))
        assert abs(numeric - analytic) <= 1e-6 * scale + 1e-10, (
            f"argument {i}: finite differences give {numeric!r}, the rule gives {analytic!r}")


def _float32(x):
    if isinstance(x, tuple):
        return tuple(_float32(e) for e in x)
    return x.astype(np.float32) if isinstance(x, np.ndarray) and x.dtype == np.float64 else x


@pytest.mark.parametrize("rule, shapes", SWEEP)
def test_rule_keeps_float32(rule, shapes, request):
    """Called on float32 arrays, a rule gives float32 cotangents (autograd#163, #671), near
    the float64 ones."""
    rng, args = _sample(rule, shapes, request)
    ans = rule.primal(*args)
    g = float(rng.normal()) if np.ndim(ans) == 0 else rng.normal(size=np.shape(ans))
    n = len(differentiable_params(rule.vjp))
    wide = rule.vjp(g, ans, *args)
    narrow = rule.vjp(_float32(g), rule.primal(*map(_float32, args)), *map(_float32, args))
    wide, narrow = ((wide,), (narrow,)) if n == 1 else (wide, narrow)
    for i, x, c, c64 in zip(range(n), args, narrow, wide):
        for xk, ck, ck64 in (zip(x, c, c64) if isinstance(x, tuple) and c is not None
                             else [(x, c, c64)]):
            if not (isinstance(xk, np.ndarray) and xk.dtype == np.float64) or ck is None:
                continue
            assert isinstance(ck, np.ndarray) and ck.dtype == np.float32, \
                f"argument {i}: a float32 array gets a {getattr(ck, 'dtype', type(ck))} cotangent"
            np.testing.assert_allclose(ck, ck64, rtol=2e-3, atol=2e-3 * np.max(np.abs(ck64)))


def _argument_slots(rule, args, cots):
    """(label, value, cotangent, primal as a function of that value) for each argument.

    A tuple argument (np.concatenate((a, b))) stands for its elements: item k of
    its cotangent belongs to element k (rules/joining.py).
    """
    for i, (x, c) in enumerate(zip(args, cots)):
        if not isinstance(x, tuple) or c is None:  # a tuple option: np.reshape(x, (3, 4))
            yield i, x, c, (lambda xi, i=i: rule.primal(*args[:i], xi, *args[i + 1:]))
            continue
        assert len(c) == len(x), f"argument {i}: one cotangent per element"
        for k, xk in enumerate(x):
            def f(xi, i=i, k=k):
                seq = args[i][:k] + (xi,) + args[i][k + 1:]
                return rule.primal(*args[:i], seq, *args[i + 1:])
            yield f"{i}[{k}]", xk, c[k], f


# ---------------------------------------------------------------------------
# 2. non-differentiable primitives are registered without a rule
# ---------------------------------------------------------------------------

NONDIFF = [np.sign, np.floor, np.ceil, np.round, np.isnan, np.zeros, np.ones, np.zeros_like,
           np.arange, np.shape, np.size, len, int, bool, math.floor,
           gast.Eq, gast.NotEq, gast.Lt, gast.LtE, gast.Gt, gast.GtE, gast.Is, gast.IsNot,
           gast.In, gast.NotIn, gast.FloorDiv, gast.Not]


@pytest.mark.parametrize(
    "key", NONDIFF,
    ids=[f"gast.{k.__name__}" if _is_operator_key(k) else (spelling(k) or k.__name__)
         for k in NONDIFF])
def test_nondifferentiable_registered(key):
    assert key in REGISTRY, f"{key!r} is not registered"
    assert REGISTRY[key].vjp is None


def test_callable_spellings_resolve():
    """Generated code spells a primal by `rule.name`; that must name the primal itself."""
    namespace = _generated_namespace()
    for key, rule in REGISTRY.items():
        if _is_operator_key(key):
            continue
        assert rule.primal is key
        assert eval(rule.name, namespace) is key, f"{rule.name} does not name {key!r}"


# ---------------------------------------------------------------------------
# 3-4. rule bodies are valid templates
# ---------------------------------------------------------------------------

def _vjp_tree(vjp):
    tree = ast.parse(textwrap.dedent(inspect.getsource(vjp))).body[0]
    assert isinstance(tree, ast.FunctionDef) and tree.name == vjp.__name__
    return tree


def _generated_namespace():
    """What a name means inside a generated module (its header imports exactly these)."""
    names = dict(vars(builtins))
    names.update(np=np, math=math)
    names.update({name: getattr(runtime, name) for name in runtime.__all__})
    return names


@pytest.mark.parametrize("vjp", VJPS, ids=_rule_id)
def test_rule_body_names(vjp):
    tree = _vjp_tree(vjp)
    a = tree.args
    params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
    params |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
    nodes = [n for stmt in tree.body for n in ast.walk(stmt)]
    stored = {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    loaded = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    free = loaded - params - stored
    generated = _generated_namespace()
    unknown = sorted(free - set(generated))
    assert not unknown, f"{_rule_id(vjp)} refers to {unknown}, which generated code lacks"
    # The names must also mean the same thing in the rule's module as in generated code.
    for name in free:
        here = vjp.__globals__.get(name, vars(builtins).get(name))
        assert here is generated[name], f"{_rule_id(vjp)}: {name!r} means something else there"


@pytest.mark.parametrize("vjp", VJPS, ids=_rule_id)
def test_rule_return_arity(vjp):
    tree = _vjp_tree(vjp)
    n = len(differentiable_params(vjp))
    assert n >= 1
    *body, ret = tree.body
    assert isinstance(ret, ast.Return) and ret.value is not None, "a rule must end in `return`"
    for stmt in body:
        assert not any(isinstance(node, ast.Return) for node in ast.walk(stmt)), \
            "a rule may only return at its end (the body is inlined)"
    if n == 1:
        assert not isinstance(ret.value, ast.Tuple), "one differentiable parameter, tuple returned"
    else:
        assert isinstance(ret.value, ast.Tuple) and len(ret.value.elts) == n, \
            f"{n} differentiable parameters, return is {ast.unparse(ret.value)}"

    # Each registered use of the rule passes n arguments.
    for rule in REGISTRY.values():
        if rule.vjp is vjp and rule.sample is None:
            assert all(len(s) == n for s in rule.shapes), rule.name

    # And the template instantiates to one cotangent expression per argument.
    def name(i):
        return gast.Name(id=i, ctx=gast.Load(), annotation=None, type_comment=None)

    counter = itertools.count()
    rule = next(r for r in REGISTRY.values() if r.vjp is vjp)
    args = [name(f"a{i}") for i in range(n)]
    stmts, parts = instantiate(rule, name("g"), name("ans"), args, {},
                               lambda: f"_t{next(counter)}", {})
    # one (argument, cotangent) pair per argument the rule differentiates (None entries dropped)
    returned = [ret.value] if n == 1 else ret.value.elts
    not_none = [v for v in returned if not (isinstance(v, ast.Constant) and v.value is None)]
    assert len(parts) == len(not_none)
    assert all(arg in args for _, arg, _ in parts)
    assert len(stmts) == len(body)


# ---------------------------------------------------------------------------
# 5. coverage of the required primitives
# ---------------------------------------------------------------------------

REQUIRED = (
    [getattr(np, name) for name in
     "sin cos tan arcsin arccos arctan sinh cosh tanh exp log log1p expm1 sqrt square abs "
     "sign power maximum minimum where sum mean max min dot matmul outer".split()]
    + [getattr(math, name) for name in
       "sin cos tan asin acos atan sinh cosh tanh exp expm1 log log1p log2 log10 sqrt "
       "fabs".split()]
    + [gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.MatMult, gast.USub]
)


def test_registry_covers_required():
    missing = [r for r in REQUIRED if r not in REGISTRY]
    assert not missing, f"no rule for {missing}"
    # Everything required is differentiable except np.sign.
    nondiff = [r for r in REQUIRED if REGISTRY[r].vjp is None]
    assert nondiff == [np.sign]


# ---------------------------------------------------------------------------
# 6. runtime helpers: plain-NumPy twin vs numba twin
# ---------------------------------------------------------------------------

_NB = {
    "unbroadcast": numba.njit(lambda g, x: unbroadcast(g, x)),
    "fill_like": numba.njit(lambda x, v: fill_like(x, v)),
    "zeros_like": numba.njit(lambda x: zeros_like(x)),
    "seed_like": numba.njit(lambda y: seed_like(y)),
    "select_where": numba.njit(lambda c, a, b: select_where(c, a, b)),
    "tie_share": numba.njit(lambda x, ans, other: tie_share(x, ans, other)),
    "extremum_share": numba.njit(lambda x, ans: extremum_share(x, ans)),
    "log_or_zero": numba.njit(lambda x: log_or_zero(x)),
    "matmul_grads": numba.njit(lambda g, a, b: (matmul_lhs_grad(g, a, b),
                                                matmul_rhs_grad(g, a, b))),
}
_PY = {
    "unbroadcast": unbroadcast, "fill_like": fill_like, "zeros_like": zeros_like, "seed_like": seed_like,
    "select_where": select_where, "tie_share": tie_share, "extremum_share": extremum_share,
    "log_or_zero": log_or_zero,
    "matmul_grads": lambda g, a, b: (matmul_lhs_grad(g, a, b), matmul_rhs_grad(g, a, b)),
}

_R = np.random.default_rng(1234)


def _a(*shape):
    return _R.normal(size=shape)


# (helper, args, id, marks). Distinct numba signatures are kept to ~30 compilations.
TWIN_CASES = [
    ("unbroadcast", (_a(3, 4), _a(3, 1)), "(3,4)->(3,1)", ()),
    ("unbroadcast", (_a(3, 4), _a(1, 4)), "(3,4)->(1,4)", ()),
    ("unbroadcast", (_a(3, 4), _a(3, 4)), "(3,4)->(3,4)", ()),
    ("unbroadcast", (_a(3, 4), _a(4)), "(3,4)->(4,)", ()),
    ("unbroadcast", (_a(2, 3, 4), _a(3, 1)), "(2,3,4)->(3,1)", ()),
    ("unbroadcast", (_a(2, 3, 4), _a(1, 4)), "(2,3,4)->(1,4)", ()),
    ("unbroadcast", (_a(3, 4), 0.5), "(3,4)->scalar", ()),
    ("unbroadcast", (1.5, -0.5), "scalar->scalar", ()),
    ("unbroadcast", (1.5, _a(3)), "scalar->(3,)", ()),
    ("unbroadcast", (1.5, _a(3, 1)), "scalar->(3,1)", ()),
    ("fill_like", (_a(2, 3), 0.25), "array", ()),
    ("fill_like", (0.5, 0.25), "scalar", ()),
    ("fill_like", (_a(2, 3), 1), "array-int-v", ()),
    ("fill_like", (0.5, 1), "scalar-int-v", ()),
    ("zeros_like", (_a(2, 3),), "array", ()),
    ("zeros_like", (0.5,), "scalar", ()),
    ("seed_like", (_a(3),), "array", ()),
    ("seed_like", (0.5,), "scalar", ()),
    ("select_where", (True, 1.5, -2.0), "scalar-true", ()),
    ("select_where", (False, 1.5, -2.0), "scalar-false", ()),
    ("select_where", (np.array([True, False, True]), _a(3), 0.0), "array-scalar", ()),
    ("select_where", (np.array([True, False, True]), 0.0, 1.0), "mask-scalars", ()),
    ("tie_share", (1.0, 1.0, 1.0), "scalar-tie", ()),
    ("tie_share", (1.0, 1.0, 0.5), "scalar-winner", ()),
    ("tie_share", (0.5, 1.0, 1.0), "scalar-loser", ()),
    ("tie_share", (np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.5, 3.0, 5.0]),
                   np.array([1.0, 2.5, 0.0, 5.0])), "arrays", ()),
    ("tie_share", (2.0, np.array([2.0, 3.0, 2.0]), np.array([2.0, 3.0, 1.0])),
     "scalar-x-array-ans", ()),
    ("extremum_share", (np.array([1.0, 3.0, -2.0, 3.0]), 3.0), "array-tie", ()),
    ("extremum_share", (np.array([1.0, 3.0, -2.0, 0.0]), 3.0), "array", ()),
    ("extremum_share", (0.5, 0.5), "scalar", ()),
    ("log_or_zero", (2.5,), "scalar-positive", ()),
    ("log_or_zero", (0.0,), "scalar-zero", ()),
    ("log_or_zero", (-1.5,), "scalar-negative", ()),
    ("log_or_zero", (np.array([2.0, 0.0, -1.0, 0.5]),), "array", ()),
    ("matmul_grads", (_a(2, 4), _a(2, 3), _a(3, 4)), "(2,3)@(3,4)", ()),
    ("matmul_grads", (_a(2), _a(2, 3), _a(3)), "(2,3)@(3,)", ()),
    ("matmul_grads", (_a(4), _a(3), _a(3, 4)), "(3,)@(3,4)", ()),
    ("matmul_grads", (0.75, _a(3), _a(3)), "(3,)@(3,)", ()),
    ("matmul_grads", (_a(3), 1.5, _a(3)), "scalar@(3,)", ()),
]


def _assert_same(py, nb, where):
    if isinstance(py, tuple):
        assert isinstance(nb, tuple) and len(nb) == len(py), where
        for k, (p, q) in enumerate(zip(py, nb)):
            _assert_same(p, q, f"{where}[{k}]")
        return
    assert isinstance(py, np.ndarray) == isinstance(nb, np.ndarray), (
        f"{where}: python gives {type(py).__name__} {np.shape(py)}, "
        f"numba gives {type(nb).__name__} {np.shape(nb)}")
    if isinstance(py, np.ndarray):
        assert py.shape == nb.shape, f"{where}: shapes {py.shape} (python) vs {nb.shape} (numba)"
        assert py.dtype == nb.dtype, f"{where}: dtypes {py.dtype} (python) vs {nb.dtype} (numba)"
    else:
        assert isinstance(py, float) and isinstance(nb, float), (
            f"{where}: python gives {type(py).__name__}, numba gives {type(nb).__name__}")
    np.testing.assert_allclose(py, nb, rtol=1e-12, atol=1e-12, err_msg=where)


@pytest.mark.parametrize(
    "helper, args",
    [pytest.param(h, args, id=f"{h}-{i}", marks=m) for h, args, i, m in TWIN_CASES])
def test_runtime_twins_agree(helper, args):
    before = [_copy(a) for a in args]
    py = _PY[helper](*args)
    nb = _NB[helper](*args)
    for b, a in zip(before, args):
        assert np.array_equal(b, a), "the helper mutated its input"
    _assert_same(py, nb, helper)


# ---------------------------------------------------------------------------
# 6. forward-mode rules (rules/forward.py)
# ---------------------------------------------------------------------------

from srcgrad.rules.forward import ELEMENTWISE, LINEAR, forward_rule  # noqa: E402


def test_every_rule_has_a_forward_rule():
    missing = sorted({rule.name for rule in REGISTRY.values()
                      if rule.vjp is not None and forward_rule(rule) is None})
    assert not missing, f"no forward-mode rule for {missing}"


EXPLICIT = [p for p in SWEEP if callable(forward_rule(p.values[0]))
            and forward_rule(p.values[0]) not in (ELEMENTWISE, LINEAR)]


@pytest.mark.parametrize("rule, shapes", EXPLICIT)
def test_explicit_forward_rule_matches_finite_differences(rule, shapes, request):
    """`jvp(t..., ans, *args)` == the directional derivative of the primal along t."""
    rng, args = _sample(rule, shapes, request)
    n = len(differentiable_params(rule.vjp))
    tangents = [rng.normal(size=np.shape(a)) if isinstance(a, np.ndarray) else float(rng.normal())
                for a in args[:n]]
    ans = rule.primal(*args)
    got = forward_rule(rule)(*tangents, ans, *args)
    eps = 1e-6
    moved = [a + eps * t for a, t in zip(args, tangents)] + args[n:]
    back = [a - eps * t for a, t in zip(args, tangents)] + args[n:]
    expected = (np.asarray(rule.primal(*moved)) - np.asarray(rule.primal(*back))) / (2 * eps)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
