"""srcgrad.defjvp: custom forward rules beside defvjp, in every mode and order.

A numba kernel with both rules is differentiated by grad, jvp, jacfwd, jacrev, hvp
and hessian, checked against finite differences; one with only a reverse rule makes
forward mode and Hessians name the missing rule; one with only a forward rule works
in forward mode and Hessians (forward over forward) and reverse mode names its
missing rule; wrong rules are refused when registered.
"""
import numba
import numpy as np
import pytest

import srcgrad


@numba.njit
def soft_clip(x, limit):
    return limit * np.tanh(x / limit)


@srcgrad.defvjp(soft_clip)
def soft_clip_vjp(g, ans, x, limit):
    z = x / limit
    s = 1.0 - np.tanh(z) ** 2
    return g * s, g * (np.tanh(z) - z * s)


@srcgrad.defjvp(soft_clip)
def soft_clip_jvp(t_x, t_limit, ans, x, limit):
    z = x / limit
    s = 1.0 - np.tanh(z) ** 2
    return t_x * s + t_limit * (np.tanh(z) - z * s)


def clipped_energy(x, limit):
    e = 0.0
    for i in range(len(x)):
        e = e + soft_clip(x[i], limit) ** 2 * x[i]
    return e


@numba.njit
def reverse_only(x):
    return x * x


@srcgrad.defvjp(reverse_only)
def reverse_only_vjp(g, ans, x):
    return 2.0 * g * x


@numba.njit
def cube(x):
    return x ** 3


@srcgrad.defjvp(cube)
def cube_jvp(t_x, ans, x):
    return 3.0 * x * x * t_x


X = np.array([0.3, -1.2, 2.5, 0.8])


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_both_rules_in_every_mode_and_order(jit):
    g = srcgrad.grad(clipped_energy, jit=jit)
    eps = 1e-6
    fd = np.array([(clipped_energy(X + eps * e, 1.5) - clipped_energy(X - eps * e, 1.5))
                   / (2 * eps) for e in np.eye(4)])
    np.testing.assert_allclose(g(X, 1.5), fd, rtol=1e-6)
    _, tangent = srcgrad.jvp(clipped_energy, (X, 1.5), (np.ones(4), 0.0), jit=jit)
    assert tangent == pytest.approx(np.sum(fd), rel=1e-8)
    fdh = np.array([(g(X + eps * e, 1.5) - g(X - eps * e, 1.5)) / (2 * eps) for e in np.eye(4)])
    h = srcgrad.hessian(clipped_energy, jit=jit)(X, 1.5)
    np.testing.assert_allclose(h, fdh, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(srcgrad.hvp(clipped_energy, jit=jit)(X, 1.5, X), h @ X,
                               rtol=1e-10)
    dlimit = srcgrad.grad(srcgrad.grad(clipped_energy, wrt=1, jit=jit), wrt=1, jit=jit)(X, 1.5)
    g1 = srcgrad.grad(clipped_energy, wrt=1, jit=jit)
    assert dlimit == pytest.approx((g1(X, 1.5 + eps) - g1(X, 1.5 - eps)) / (2 * eps), rel=1e-6)


def sum_of(x):
    return np.sum(reverse_only(x))


def sum_of_cubes(x):
    return np.sum(cube(x) * x)


def test_reverse_rule_only_names_the_missing_forward_rule():
    assert srcgrad.grad(sum_of, jit=False)(X) == pytest.approx(2 * X)
    for call in (lambda: srcgrad.jvp(sum_of, (X,), (X,), jit=False),
                 lambda: srcgrad.hessian(sum_of, jit=False)(X)):
        with pytest.raises(srcgrad.MissingRuleError,
                           match=r"no forward-mode rule for reverse_only.*@srcgrad\.defjvp"
                                 r"\(reverse_only\).*reverse_only_jvp\(t_x, ans, x\)"
                                 r"(.|\n)*test_defjvp.py:"):
            call()


def test_forward_rule_only():
    np.testing.assert_allclose(srcgrad.jacfwd(sum_of_cubes, jit=False)(X), 4 * X ** 3)
    np.testing.assert_allclose(srcgrad.hessian(sum_of_cubes, jit=False)(X), np.diag(12 * X ** 2))
    with pytest.raises(srcgrad.MissingRuleError, match=r"no reverse rule for cube.*defvjp\(cube\)"):
        srcgrad.grad(sum_of_cubes, jit=False)(X)


def test_wrong_rules_are_refused_when_registered():
    with pytest.raises(srcgrad.SrcgradError, match=r"too_many \(.*test_defjvp.py:\d+\) for cube "
                                                   r"takes 2 tangent\(s\) \(t_x, t_y\) before "
                                                   r"ans, but 1 argument\(s\)"):
        @srcgrad.defjvp(cube)
        def too_many(t_x, t_y, ans, x):
            return t_x
    with pytest.raises(TypeError, match="must take"):
        srcgrad.defjvp(cube, lambda t_x, x: t_x)
    with pytest.raises(srcgrad.SrcgradError, match="only return statement"):
        @srcgrad.defjvp(cube)
        def two_returns(t_x, ans, x):
            if x > 0:
                return t_x
            return -t_x


@numba.njit
def wrong_shape(x):
    return x * 2.0


@srcgrad.defjvp(wrong_shape)
def wrong_shape_jvp(t_x, ans, x):
    return np.sum(t_x)


def uses_wrong_shape(x):
    return wrong_shape(x)


def test_a_tangent_of_the_wrong_shape_is_an_error():
    with pytest.raises(srcgrad.SrcgradError, match="wrong_shape_jvp for wrong_shape returned a "
                                                   "tangent with the wrong shape"):
        srcgrad.jvp(uses_wrong_shape, (X,), (X,), jit=False)
