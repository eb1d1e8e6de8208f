"""Everyday Python in the functions srcgrad differentiates (issue 15): helpers with *args and
**kwargs, nonlocal in nested helpers, try/except around code that is not differentiated,
and Python's sum(...) of array terms.

Each program is checked against central finite differences and autograd (this module's
`np` is swapped for autograd.numpy while autograd traces, so the helpers trace too),
numba on and off; where numba is meant to compile, the test asserts that it did. One
compiled value_and_grad per program, shared by the tests; small sizes.
"""
import numpy as np
import pytest

import srcgrad
from gradcheck import assert_close, numerical_grad

R = np.random.default_rng(7)
X4 = R.uniform(0.2, 1.0, size=4)
C34 = R.normal(size=(3, 4))


# --- *args and **kwargs in helpers ---------------------------------------------------------

def _model(t, *params, scale=1.0, **opts):
    a, b = params
    y = scale * (a * t + b)
    if "shift" in opts:
        y = y + opts["shift"]
    return y * opts.get("gain", 1.0)


def varargs_model(p, t):
    fit = _model(t, p[0], p[1], scale=2.0, gain=0.5)
    shifted = _model(t, p[1], p[0], shift=p[0])
    return np.sum(fit ** 2) + np.sum(shifted ** 2)


def _power_sum(x, w, power=2):
    return np.sum((w * x) ** power)


def _mean_square(*terms):
    s = 0.0
    for t in terms:
        s = s + np.sum(t * t)
    return s / len(terms)


def forwarding(w, x):
    def call(*args, **kw):  # passes everything on
        return _power_sum(*args, **kw)
    return call(x, w) + call(x, w, power=3) + _mean_square(w, x, w * x)


# --- nonlocal in nested helpers --------------------------------------------------------------

def running_energy(x):
    total, count = 0.0, 0

    def add(v, weight=1.0):
        nonlocal total, count
        total = total + weight * v ** 2
        count += 1
    for i in range(x.shape[0]):
        add(x[i])
    add(np.sum(x), weight=0.5)
    return total / count


def _roughness(x, lam):
    acc, prev = 0.0, x[0]

    def step(v):
        nonlocal acc, prev
        acc = acc + lam * (v - prev) ** 2
        prev = v
    for i in range(1, x.shape[0]):
        step(x[i])
    return acc


def closure_in_helper(x):
    lam = 100.0  # the helper's step() reads the helper's lam, never this one
    return _roughness(x, 0.5) + _roughness(np.sin(x), 0.25) + lam * 0.0


# --- try/except around code that is not differentiated --------------------------------------

def tolerant_power(x, order):
    try:
        k = order + 1
    except Exception:
        k = 2
    try:
        weight = 1.0 / len(x)  # reads x only for its length: allowed
    except:  # noqa: E722
        weight = 1.0
    total = 0.0
    for i in range(x.shape[0]):
        try:  # compiled, the index is checked as Python checks it
            ahead = float(np.arange(x.shape[0])[i + 1])
        except Exception:
            ahead = -1.0
        total = total + np.abs(x[i]) ** k * ahead
    return weight * total


def parsed_option(x, spec):
    try:
        power = float(spec)
    except (TypeError, ValueError):
        power = 2.0
    return np.sum(x ** power)


# --- sum(...) of array terms, from Python's start 0 ------------------------------------------

def mixture_mean(w, centers):
    k = centers.shape[0]
    mean = sum(w[j] * centers[j] for j in range(k))
    spread = sum(centers, 0.5 * np.sum(w))  # the rows of an array, a differentiable start
    shifted = sum((np.tanh(c) for c in centers), mean)  # an array start
    return np.sum(mean ** 2) + np.sum(spread * np.tanh(mean)) + np.sum(shifted * spread)


# (function, arguments, wrt, whether numba compiles it)
CASES = [
    (varargs_model, (np.array([0.5, -1.2]), X4), 0, True),
    (forwarding, (0.3 * X4 + 0.1, X4), 0, True),
    (running_energy, (X4 - 0.5,), 0, True),
    (closure_in_helper, (X4,), 0, True),
    (tolerant_power, (X4 - 0.6, 2), 0, True),
    (parsed_option, (X4, "3"), 0, False),
    (mixture_mean, (X4[:3], C34), (0, 1), True),
]
IDS = [case[0].__name__ for case in CASES]
_PROGRAMS = {}


def _program(func, wrt, jit):
    key = (func, wrt, jit)
    if key not in _PROGRAMS:
        _PROGRAMS[key] = srcgrad.value_and_grad(func, wrt=wrt, jit=jit)
    return _PROGRAMS[key]


def _autograd(func, args, wrt):
    """autograd's gradient, this module's np swapped for autograd.numpy while it traces."""
    autograd = pytest.importorskip("autograd")
    import autograd.numpy as anp
    saved, globals()["np"] = np, anp
    try:
        return autograd.grad(func, wrt)(*args)
    finally:
        globals()["np"] = saved


@pytest.mark.parametrize("jit", [True, False], ids=["numba", "python"])
@pytest.mark.parametrize("func, args, wrt, compiles", CASES, ids=IDS)
def test_everyday_python(func, args, wrt, compiles, jit):
    vg = _program(func, wrt, jit)
    if jit and not compiles:
        with pytest.warns(srcgrad.SrcgradWarning, match="numba could not compile"):
            value, grad = vg(*args)
    else:
        value, grad = vg(*args)
    assert vg.backend == ("numba" if jit and compiles else "python")
    assert np.isclose(value, func(*args), rtol=1e-12, atol=1e-14)
    assert_close(grad, numerical_grad(func, args, wrt), rtol=1e-5, atol=1e-7,
                 what=f"{func.__name__} vs finite differences")
    if not isinstance(wrt, tuple):
        assert_close(grad, _autograd(func, args, wrt), rtol=1e-8, atol=1e-10,
                     what=f"{func.__name__} vs autograd")
    else:
        for k, g in zip(wrt, grad):
            assert_close(g, _autograd(func, args, k), rtol=1e-8, atol=1e-10,
                         what=f"{func.__name__} (argument {k}) vs autograd")


def test_forward_mode_matches():
    """The same constructs through jvp (forward mode), against the reverse-mode gradient."""
    for func, args, wrt, _ in CASES[:5]:
        tangent = np.linspace(-1.0, 1.0, np.size(args[0])).reshape(np.shape(args[0]))
        _, jvp = srcgrad.jvp(func, args, (tangent,) + tuple(
            np.zeros_like(a) if isinstance(a, np.ndarray) else 0 for a in args[1:]), jit=False)
        _, grad = _program(func, wrt, False)(*args)
        assert np.isclose(jvp, np.sum(grad * tangent), rtol=1e-10), func.__name__


def test_sum_of_no_array_terms():
    """Python's sum of no terms is its start, 0; compiled code needs an array there, so it
    raises saying so instead of returning a broadcast zero, and the function runs again as
    Python (backend/raised.py): Python's numbers, with a warning."""
    empty = np.zeros((0, 4))
    value, (gw, gc) = _program(mixture_mean, (0, 1), False)(X4[:0], empty)
    assert value == mixture_mean(X4[:0], empty) == 0.0 and gw.shape == (0,)
    with pytest.warns(srcgrad.SrcgradWarning, match="sum.. of no array terms"):
        value, (gw, gc) = _program(mixture_mean, (0, 1), True)(X4[:0], empty)
    assert value == 0.0 and gw.shape == (0,)


# --- what stays refused, with the user's line ------------------------------------------------

def _line_of(func, text):
    import inspect
    lines, first = inspect.getsourcelines(func)
    return first + next(k for k, line in enumerate(lines) if text in line)


def differentiated_in_try(x):
    try:
        y = np.log(x)
    except FloatingPointError:
        y = x
    return np.sum(y)


def _needs_key(x, **opts):
    return x * opts["scale"]


def missing_keyword(x):
    return np.sum(_needs_key(x, shift=1.0))


def _as_dict(x, **opts):
    return x * len(dict(opts))


def kwargs_as_dict(x):
    return np.sum(_as_dict(x, a=1.0))


def _keywords_only(x, **opts):
    return x * opts.get("a", 1.0)


def extra_positional(x):
    return np.sum(_keywords_only(x, 2.0))


def assigned_on_one_path(x):
    try:
        scale = float(len(x))
    except TypeError:
        pass
    return np.sum(x) * scale


@pytest.mark.parametrize("transform", ["grad", "jvp"])
def test_differentiated_code_inside_try_names_its_line(transform):
    x = X4.copy()
    with pytest.raises(srcgrad.MissingRuleError, match="the try statement at .*") as info:
        if transform == "grad":
            srcgrad.grad(differentiated_in_try, jit=False)(x)
        else:
            srcgrad.jvp(differentiated_in_try, (x,), (np.ones_like(x),), jit=False)
    assert f"test_everyday_python.py:{_line_of(differentiated_in_try, 'try:')}" in str(
        info.value)
    assert "does not differentiate through it" in str(info.value)


@pytest.mark.parametrize("func, text, words", [
    (missing_keyword, 'opts["scale"]', "opts['scale'] where the call passes no scale="),
    (kwargs_as_dict, "dict(opts)", "using **opts as a dict"),
    (assigned_on_one_path, "try:", "assigns 'scale' on some paths only"),
    (extra_positional, "_keywords_only(x, 2.0)", "with 2 positional arguments"),
], ids=["missing-keyword", "kwargs-as-dict", "one-path", "extra-positional"])
def test_refused_forms_name_the_line(func, text, words):
    with pytest.raises(srcgrad.SrcgradSyntaxError) as info:
        srcgrad.grad(func, jit=False)
    owner = {missing_keyword: _needs_key, kwargs_as_dict: _as_dict}.get(func, func)
    assert words in str(info.value)
    assert info.value.lineno == _line_of(owner, text)
