"""A function called from many places is compiled once (calls.py, OUTLINE_SITES): each call
runs its own `f__value`, each backward step its `f__vjp`. The gradients are those of
inlining, bit for bit, and match finite differences, numba on and off; a callee that
cannot be called so (it writes into a parameter, returns a tuple, reads a global) is
inlined as before."""
import math

import numpy as np
import pytest
import scipy.special as sps

import srcgrad
from tests.gradcheck import numerical_grad

SCALE = 0.5


def stage(x, y, h):
    n = x.shape[0]
    z = np.empty(n)
    for i in range(n):
        z[i] = y[i] + h * np.sin(x[i] * y[i - 1])
    return z


def run(x, h, steps):
    y = x.copy()
    for s in range(steps):
        y = stage(x, y, h)
        y = stage(x, y, 0.5 * h)
        y = stage(x, y, h)
        y = stage(x, y, 0.25)
        y = stage(y=y, x=x, h=h)
        y = stage(x, y, h)
        y = stage(x, y, 0.1)
        y = stage(x, y, h)
    return np.sum(y * y)


def run_one_site(x, h, steps):  # the same computation, `stage` inlined at its one call
    y = x.copy()
    for s in range(steps):
        cs = np.array([h, 0.5 * h, h, 0.25, h, h, 0.1, h])
        for k in range(8):
            y = stage(x, y, cs[k])
    return np.sum(y * y)


def scaled(v, c=2.0):
    return c * v


def run_scalar(a, b):
    t = scaled(a) + scaled(b) * scaled(a, 0.5) + scaled(b)
    t = t + scaled(t) + scaled(a * b) + scaled(3.0) + scaled(np.sin(t))
    return t


def act(v):  # names a library function through a module alias
    return sps.expit(v) * math.cos(v)


def run_alias(a):
    return act(a) + act(2.0 * a) + act(a * a) + act(a) + act(0.5) + act(a) + act(a + 1.0) + act(a)


def fill(out, v):  # rebinds its parameter (then writes into it): every call is inlined
    out = out.copy()
    out[0] = v
    return out[0] * 2.0


def run_writer(v):
    buf = np.zeros(1)
    return (fill(buf, v) + fill(buf, 2.0 * v) + fill(buf, v * v) + fill(buf, 1.0)
            + fill(buf, v) + fill(buf, 3.0 * v) + fill(buf, v) + fill(buf, np.sin(v)))


def pair(v):
    return v, 2.0 * v


def run_pairs(v):  # tuple results: inlined
    t = 0.0
    for k in range(2):
        a, b = pair(v)
        c, d = pair(a)
        e, f = pair(b)
        g, h = pair(c)
        i, j = pair(d)
        k1, k2 = pair(e)
        m1, m2 = pair(f)
        n1, n2 = pair(g)
        t = t + a * b + c * d + e * f + g * h + i * j + k1 * k2 + m1 * m2 + n1 * n2
    return t


def glob(v):  # reads a module global: inlined (the global becomes an input)
    return SCALE * v


def run_glob(v):
    return (glob(v) + glob(v * v) + glob(1.0) + glob(v) + glob(2.0 * v) + glob(np.sin(v))
            + glob(v) + glob(v))


def ping(x, n):  # ping and pong call each other 8 times: recursion, not outlining
    if n <= 0:
        return x
    return (pong(x, n - 1) + pong(x, n - 1) + pong(x, n - 2) + pong(x, n - 1)
            + pong(x, n - 1) + pong(x, n - 1) + pong(x, n - 1) + pong(x, n - 1))


def pong(x, n):
    if n <= 0:
        return np.sin(x)
    return 0.1 * (ping(x, n - 1) + ping(x, n - 1) + ping(x, n - 1) + ping(x, n - 1)
                  + ping(x, n - 1) + ping(x, n - 1) + ping(x, n - 1) + ping(x, n - 1))


def run_mutual(x):
    return ping(x, 2)


def pick(v, mode):  # a string parameter: its "cotangent" is 0.0, as zeros_like gives
    if mode == "sin":
        return np.sin(v)
    return v * v


def run_modes(a):
    m = "sin"
    return (pick(a, m) + pick(2.0 * a, m) + pick(a, m) + pick(a * a, "square") + pick(a, m)
            + pick(a, m) + pick(a, m) + pick(0.5, m))


def twin_a(v):
    return v * v + 1.0


def twin_b(v):
    return np.sin(v) * 3.0


twin_a.__name__ = twin_b.__name__ = "twin"  # two modules' `helper`s, as it were


def run_twins(a):
    s = twin_a(a) + twin_a(2.0 * a) + twin_a(a) + twin_a(a * a) + twin_a(a) + twin_a(a)
    t = twin_b(a) + twin_b(2.0 * a) + twin_b(a) + twin_b(a * a) + twin_b(a) + twin_b(a)
    return s * t + twin_a(0.5) + twin_a(a) + twin_b(0.5) + twin_b(a)


def inner(x):  # outlined in run_nested and inside outer's own gradient
    return np.sin(x) * x


def outer(x):
    return inner(x) + inner(2.0 * x) + inner(x) + inner(x * x) + inner(x) + inner(x) \
        + inner(x) + inner(0.5 * x)


def run_nested(x):
    return (outer(x) * inner(x) + outer(2.0 * x) + outer(x) + outer(x) + outer(x)
            + outer(x * x) + outer(x) + outer(0.5) + inner(x) + inner(x) + inner(x)
            + inner(x) + inner(x) + inner(x) + inner(x))


@pytest.fixture(scope="module")
def grads():
    x = np.linspace(0.1, 1.0, 6)
    return x, {jit: srcgrad.grad(run, wrt=(0, 1), jit=jit) for jit in (True, False)}


def test_the_callee_is_compiled_once(grads):
    _, g = grads
    source = g[False].source
    assert source.count("def stage__vjp(") == 1 and source.count("def stage__value(") == 1
    assert source.count("= stage__value(x, y, ") == 8 and source.count("= stage__vjp(x, y, ") == 8
    assert "n__stage" not in source  # no inlined copy


@pytest.mark.parametrize("jit", [True, False])
def test_same_gradient_as_inlining_and_finite_differences(grads, jit):
    x, g = grads
    got = g[jit](x, 0.3, 3)
    inlined = srcgrad.grad(run_one_site, wrt=(0, 1), jit=False)
    assert "stage__vjp" not in inlined.source
    want = inlined(x, 0.3, 3)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    fd = numerical_grad(run, (x, 0.3, 3), (0, 1))
    np.testing.assert_allclose(got[0], fd[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], fd[1], rtol=1e-6)


def test_scalar_callee_with_defaults_and_constants():
    g = srcgrad.grad(run_scalar, wrt=(0, 1), jit=False)
    assert "def scaled__vjp(" in g.source
    np.testing.assert_allclose(g(0.7, -0.4), numerical_grad(run_scalar, (0.7, -0.4), (0, 1)),
                               rtol=1e-6)


def test_callee_naming_a_library_function_through_an_alias():
    g = srcgrad.grad(run_alias, jit=False)
    assert "def act__vjp(" in g.source
    np.testing.assert_allclose(g(0.3), numerical_grad(run_alias, (0.3,), 0), rtol=1e-6)


@pytest.mark.parametrize("model, where", [(run_writer, "fill"), (run_pairs, "pair"),
                                          (run_glob, "glob")])
def test_callees_that_cannot_be_outlined_are_inlined(model, where):
    g = srcgrad.grad(model, jit=False)
    assert f"{where}__vjp" not in g.source
    np.testing.assert_allclose(g(0.7), numerical_grad(model, (0.7,), 0), rtol=1e-6)


def test_forward_mode_and_vjp_still_work(grads):
    x, _ = grads
    out, tangent = srcgrad.jvp(run, (x, 0.3, 3), (np.ones_like(x), 0.0, 0), jit=False)
    assert np.isclose(out, run(x, 0.3, 3))
    fd = numerical_grad(run, (x, 0.3, 3), 0)
    np.testing.assert_allclose(tangent, fd.sum(), rtol=1e-6)
    value, vjp_fn = srcgrad.vjp(run, x, 0.3, 3, jit=False)
    np.testing.assert_allclose(vjp_fn(2.0)[0], 2.0 * fd, rtol=1e-6)


def test_mutual_recursion_many_calls():
    g = srcgrad.grad(run_mutual, jit=False)
    np.testing.assert_allclose(g(0.3), numerical_grad(run_mutual, (0.3,), 0), rtol=1e-6)


def test_two_functions_of_one_name():
    g = srcgrad.grad(run_twins, jit=False)
    assert g.source.count("def twin__vjp(") == 1  # the other one is inlined
    np.testing.assert_allclose(g(0.3), numerical_grad(run_twins, (0.3,), 0), rtol=1e-6)


def test_a_callee_outlined_by_its_caller_and_inside_another_callee():
    g = srcgrad.grad(run_nested, jit=False)
    assert g.source.count("def inner__vjp(") == 1 and "def outer__vjp(" in g.source
    np.testing.assert_allclose(g(0.3), numerical_grad(run_nested, (0.3,), 0), rtol=1e-6)


def test_a_string_parameter_compiles():
    g = srcgrad.grad(run_modes)
    assert "def pick__vjp(" in g.source
    np.testing.assert_allclose(g(0.3), numerical_grad(run_modes, (0.3,), 0), rtol=1e-6)
    assert g.backend == "numba"
