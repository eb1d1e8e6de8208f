"""Second order where it reached least (issue 17, remaining points): HVPs of recursive
functions by reverse over forward (the recursion's pair helper `f__jvp_all__grad_all`),
and errors of second-order code naming the user's file:line and names.

Each HVP is checked against central differences of srcgrad's gradient and against JAX
(where installed), numba on and off.
"""
import types

import numpy as np
import pytest

import srcgrad

EPS = 1e-5
X = np.array([0.3, -0.5, 0.7])
V = np.array([1.0, 0.5, -2.0])


def chain(x, n):
    """One recursive call per level, its argument changed on the way down."""
    if n == 0:
        return np.sum(np.sin(x) * x)
    return np.cos(chain(x * 0.9, n - 1)) + np.sum(x ** 3) * 0.1


def tree(x, n):
    """Two recursive calls per level (Fibonacci-shaped), the value used twice."""
    if n < 2:
        return np.sum(np.exp(x * 0.5)) + n
    a = tree(x, n - 1)
    return a * 0.5 + np.sin(tree(x, n - 2)) * a * 0.1 + x[0] * x[1]


def _fd_hvp(func, x, n, v, jit):
    gradient = srcgrad.grad(func, jit=jit)
    return (gradient(x + EPS * v, n) - gradient(x - EPS * v, n)) / (2 * EPS)


def _in_jax(func):
    """(jax, func with np standing for jax.numpy, its recursive calls too)."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    names = dict(func.__globals__, np=jnp)
    names[func.__name__] = types.FunctionType(func.__code__, names, func.__name__)
    return jax, names[func.__name__]


def _jax_hvp(func, x, n, v):
    jax, f = _in_jax(func)
    return np.asarray(jax.jvp(jax.grad(lambda y: f(y, n)), (x,), (v,))[1])


@pytest.mark.parametrize("func, n, jit", [(chain, 4, False), (tree, 5, False), (tree, 5, True)],
                         ids=["chain-python", "tree-python", "tree-numba"])
def test_recursive_hvp_is_reverse_over_forward(func, n, jit):
    product = srcgrad.hvp(func, jit=jit)
    assert product._reverse() is not None  # not n second-order JVPs
    got = product(X, n, V)
    np.testing.assert_allclose(got, _fd_hvp(func, X, n, V, jit), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, _jax_hvp(func, X, n, V), rtol=1e-11, atol=1e-13)
    h = srcgrad.hessian(func, jit=jit)(X, n)
    np.testing.assert_allclose(h @ V, got, rtol=1e-10, atol=1e-12)


def knots_of(x):
    return np.sum(np.interp(x * np.array([1.0, 2.0]), np.array([0.0, 1.0, 3.0]),
                            np.array([0.0, x, x * x])))


def test_a_missing_second_order_rule_names_the_users_line():
    with pytest.raises(srcgrad.MissingRuleError) as info:
        srcgrad.grad(srcgrad.grad(srcgrad.grad(knots_of, jit=False), jit=False), jit=False)(0.7)
    message = str(info.value)  # third order: np.interp's second tangent has no rule
    assert "test_second_order_reach.py:" in message and "np.interp(x" in message
    assert "no derivative rule yet" in message
    assert ".cache" not in message and "__jvp" not in message and "defvjp" not in message


def test_second_order_code_is_commented_with_the_users_lines():
    source = srcgrad.hvp(chain, jit=False)._reverse()[0].source
    comments = [line for line in source.splitlines() if line.strip().startswith("# ")]
    assert any("(test_second_order_reach.py:" in c for c in comments)
    assert not any("__jvp_" in c for c in comments)
    assert not any(a == b for a, b in zip(comments, comments[1:]))


def test_generated_tangent_names_read_as_the_users():
    from srcgrad.frontend.aliasing import UserNames
    names = UserNames(None)
    names.inlined.update({"_tan_best__cost__jvp1": ("_tan_best", "cost__jvp"),
                          "total__cost__jvp1": ("total", "cost__jvp"),
                          "z__h1": ("z", "h")})
    assert names.show("_tan_best__cost__jvp1") == "the tangent of 'best'"
    assert names.show("total__cost__jvp1") == "'total'"
    assert names.show("z__h1") == "'z' (in h())"


def mixed(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.sin(x[i] * y) * x[i - 1]
    return s + np.sum(x ** 3) * y


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_grad_of_grad_with_array_arguments(jit):
    """grad(grad(f)) by each level's argument: the Hessian for x at both levels, the
    mixed derivatives for x and a scalar y in either order."""
    jax, fj = _in_jax(mixed)
    y, xj = 0.7, X
    twice = srcgrad.grad(srcgrad.grad(mixed, jit=jit), jit=jit)
    h = twice(X, y)
    np.testing.assert_allclose(h, np.asarray(jax.hessian(fj)(xj, y)), rtol=1e-12, atol=1e-14)
    gradient = srcgrad.grad(mixed, jit=jit)
    columns = [(gradient(X + EPS * e, y) - gradient(X - EPS * e, y)) / (2 * EPS) for e in np.eye(3)]
    np.testing.assert_allclose(h, np.stack(columns, axis=-1), rtol=1e-6, atol=1e-8)
    x_then_y = srcgrad.grad(srcgrad.grad(mixed, wrt=0, jit=jit), wrt=1, jit=jit)(X, y)
    np.testing.assert_allclose(x_then_y, np.asarray(jax.jacfwd(jax.grad(fj, 0), 1)(xj, y)),
                               rtol=1e-12, atol=1e-14)
    y_then_x = srcgrad.grad(srcgrad.grad(mixed, wrt=1, jit=jit), wrt=0, jit=jit)(X, y)
    np.testing.assert_allclose(y_then_x, x_then_y, rtol=1e-12, atol=1e-14)


def test_third_order_with_an_array_argument():
    jax, fj = _in_jax(mixed)
    thrice = srcgrad.grad(srcgrad.grad(srcgrad.grad(mixed, jit=False), jit=False), jit=False)
    np.testing.assert_allclose(thrice(X, 0.7),
                               np.asarray(jax.jacfwd(jax.hessian(fj))(X, 0.7)),
                               rtol=1e-11, atol=1e-13)


def test_grad_of_grad_of_a_recursive_function():
    h = srcgrad.grad(srcgrad.grad(tree, jit=False), jit=False)(X, 4)
    np.testing.assert_allclose(h, srcgrad.hessian(tree, jit=False)(X, 4), rtol=1e-12, atol=1e-14)


def count__jvp_all(x, n):
    return np.sum(x) if n == 0 else count__jvp_all(x, n - 1) * 2.0


def test_a_recursive_function_may_not_take_generated_codes_name():
    with pytest.raises(srcgrad.SrcgradError, match="names ending in __jvp_all are srcgrad's"):
        srcgrad.grad(count__jvp_all, jit=False)(X, 2)
