"""srcgrad.defvjp: custom reverse rules for callables srcgrad cannot (or should not) trace."""
import math
import os

import numba
import numpy as np
import pytest
from gradcheck import numerical_grad

import srcgrad

BASENAME = os.path.basename(__file__)


# A compiled kernel with no Python source srcgrad could read, and its rule.
@numba.njit
def soft_clip(x, limit):
    return limit * np.tanh(x / limit)


def _sech2(z):
    c = np.cosh(z)
    return 1.0 / (c * c)


@srcgrad.defvjp(soft_clip)
def soft_clip_vjp(g, ans, x, limit):
    z = x / limit
    # The rule's own helper `_sech2` is injected into the generated module.
    return g * _sech2(z), g * (np.tanh(z) - z * _sech2(z))


def clipped_energy(x, limit):
    e = 0.0
    for i in range(len(x)):
        e = e + soft_clip(x[i], limit) ** 2
    return e


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
def test_custom_rule_inside_a_loop_matches_finite_differences(jit):
    x = np.array([0.3, -1.2, 2.5, 0.8])
    g = srcgrad.grad(clipped_energy, wrt=(0, 1), jit=jit)
    dx, dlimit = g(x, 1.5)
    fx, flimit = numerical_grad(clipped_energy, (x, 1.5), (0, 1))
    np.testing.assert_allclose(dx, fx, rtol=1e-6)
    np.testing.assert_allclose(dlimit, flimit, rtol=1e-6)
    assert g.backend == ("numba" if jit else "python")
    assert "soft_clip(" in g.source and "_sg_soft_clip_vjp__sech2" in g.source


# A C routine (erfc from the math module has no srcgrad rule of its own).
def erfc_vjp(g, ans, x):
    return -g * 2.0 / math.sqrt(math.pi) * math.exp(-x * x)


def gaussian_cdf(x, mu):
    return 0.5 * math.erfc((mu - x) / math.sqrt(2.0))


def test_rule_for_a_c_function_without_source():
    assert math.erfc not in {k for k, r in srcgrad.rules.REGISTRY.items() if not r.custom}
    srcgrad.defvjp(math.erfc, erfc_vjp)
    g = srcgrad.grad(gaussian_cdf, wrt=(0, 1))
    dx, dmu = g(0.4, -0.3)
    expected = math.exp(-0.7 ** 2 / 2) / math.sqrt(2 * math.pi)
    assert dx == pytest.approx(expected, rel=1e-12)
    assert dmu == pytest.approx(-expected, rel=1e-12)
    assert g.backend == "numba"


def wrong_count_target(x, y):
    return x * y


def test_wrong_number_of_cotangents_is_reported_when_the_rule_is_registered():
    with pytest.raises(srcgrad.SrcgradError) as info:
        @srcgrad.defvjp(wrong_count_target)
        def bad_rule(g, ans, x, y):
            return g * y
    message = str(info.value)
    assert "bad_rule" in message and "returns 1 cotangent(s)" in message
    assert "takes 2 argument(s) (x, y)" in message


@numba.njit
def scaled(x):
    return 2.0 * x


@srcgrad.defvjp(scaled)
def scaled_wrong_shape(g, ans, x):
    return np.sum(g) * 2.0  # a scalar for an array argument


def uses_scaled(x):
    return np.sum(scaled(x) ** 2)  # MARK:uses-scaled


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
def test_wrong_cotangent_shape_is_reported_when_the_rule_runs(jit):
    g = srcgrad.grad(uses_scaled, jit=jit)
    with pytest.raises(srcgrad.SrcgradError) as info:
        g(np.array([1.0, 2.0, 3.0]))
    message = str(info.value)
    assert "scaled_wrong_shape" in message and "'x'" in message and "shape" in message
    line = uses_scaled.__code__.co_firstlineno + 1
    assert f"{BASENAME}:{line}" in message


def no_rule_anywhere(x):
    return np.sum(np.sinc(x) ** 2)


def test_missing_rule_points_to_defvjp():
    with pytest.raises(srcgrad.MissingRuleError) as info:
        srcgrad.grad(no_rule_anywhere)
    assert "@srcgrad.defvjp(np.sinc)" in str(info.value)


@numba.njit
def _softplus_one(x):
    return np.log1p(np.exp(x))


@srcgrad.defvjp(_softplus_one)
def _softplus_one_vjp(g, ans, x):
    return (g / (1.0 + np.exp(-x)),)  # one cotangent per argument, as a 1-tuple (JAX's way)


def _softplus_loss(w):
    return np.sum(_softplus_one(w) ** 2) + _softplus_one(w[0]) ** 2


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_a_rule_of_one_argument_may_return_a_one_tuple(jit):
    w = np.array([0.3, -1.0, 2.0])
    g = srcgrad.grad(_softplus_loss, jit=jit)
    got = g(w)
    assert g.backend == ("numba" if jit else "python")
    sp = np.log1p(np.exp(w))
    expected = 2 * sp / (1 + np.exp(-w))
    expected[0] *= 2
    np.testing.assert_allclose(got, expected, rtol=1e-12)
