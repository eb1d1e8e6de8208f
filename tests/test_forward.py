"""Forward mode and the derivative operators built on it: jvp, vjp, jacfwd, jacrev, hessian,
grad of grad.

- Every function of the end-to-end corpora (straight-line, loops and branches,
  NumPy coverage, calls and recursion, linalg, joining) is run through forward
  mode (Python) and its Jacobian-vector product compared with reverse mode's
  gradient (itself checked against finite differences in those files).
- A smaller set runs compiled (numba) against central finite differences.
- jacfwd and jacrev agree to 1e-8; Hessians match finite differences of the
  gradient and are symmetric; third derivatives match closed forms.
"""
import inspect
import math
import warnings

import numpy as np
import pytest

import srcgrad
import test_calls
import test_corpus_loops
import test_corpus_straight
import test_joining_indexing
import test_linalg
import test_numpy_coverage
from gradcheck import numerical_grad


def _positions(func, wrt):
    params = list(inspect.signature(func).parameters)
    items = list(wrt) if isinstance(wrt, tuple) else [wrt]
    return [params.index(w) if isinstance(w, str) else w for w in items]


def _random_like(rng, value):
    return float(rng.normal()) if np.ndim(value) == 0 else rng.normal(size=np.shape(value))


def _cross_check(func, args, wrt):
    rng = np.random.default_rng(0)
    positions = _positions(func, wrt)
    floats = [k for k, a in enumerate(args) if not isinstance(a, (int, np.integer, bool))
              and not (isinstance(a, np.ndarray) and a.dtype != np.float64)]
    tangents = tuple(_random_like(rng, a) if k in positions else
                     (0.0 if np.ndim(a) == 0 else np.zeros(np.shape(a))) if k in floats else None
                     for k, a in enumerate(args))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", srcgrad.SrcgradWarning)
        out, tangent = srcgrad.jvp(func, tuple(args), tangents, jit=False)
        grads = srcgrad.grad(func, wrt=tuple(positions), jit=False)(*args)
    expected = sum(float(np.sum(np.asarray(g) * np.asarray(tangents[k])))
                   for k, g in zip(positions, grads))
    assert out == pytest.approx(func(*args), rel=1e-12, abs=1e-12)
    assert tangent == pytest.approx(expected, rel=1e-9, abs=1e-9)


def _corpus():
    cases = []
    for module in (test_corpus_straight, test_corpus_loops, test_numpy_coverage,
                   test_joining_indexing, test_linalg):
        for case in module.CASES:
            func, make_args, wrt = case.values[:3]
            cases.append(pytest.param(func, make_args, wrt, marks=case.marks,
                                      id=f"{module.__name__[5:]}-{func.__name__}"))
    for func, args, wrt in test_calls.CASES:
        cases.append(pytest.param(func, lambda args=args: args, wrt, id=f"calls-{func.__name__}"))
    return cases


@pytest.mark.parametrize("func, make_args, wrt", _corpus())
def test_forward_mode_agrees_with_reverse_mode(func, make_args, wrt):
    _cross_check(func, make_args(), wrt)


# ---- compiled, against finite differences ---------------------------------------------

def rnn(W, x, h0):
    h = h0
    total = 0.0
    for t in range(x.shape[0]):
        h = np.tanh(W @ h + x[t])
        if np.sum(h) > 0.0:
            total = total + np.sum(h * h)
        else:
            total = total - np.max(h)
    return total


def newton_sqrt(a):
    y = a
    steps = 0
    while abs(y * y - a) > 1e-12 and steps < 50:
        y = 0.5 * (y + a / y)
        steps += 1
    return y


def scatter(x):
    y = np.zeros(4)
    for i in range(3):
        y[i + 1] = y[i] * 0.5 + x[i] ** 2
    ys = []
    for v in y:
        ys.append(np.sin(v))
    return ys[1] * ys[3] + y[2]


RNG = np.random.default_rng(3)
W0 = RNG.normal(size=(3, 3)) * 0.5
X0 = RNG.normal(size=(4, 3))
H0 = RNG.normal(size=3)
A0 = RNG.normal(size=(3, 3)) + 3 * np.eye(3)

COMPILED = [
    (rnn, (W0, X0, H0)),
    (newton_sqrt, (2.3,)),
    (scatter, (np.array([0.3, -0.8, 1.1]),)),
    (test_calls.loop_of_calls, (W0, H0)),
    (test_calls.uses_recursion, (0.9, A0)),
]


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("func, args", COMPILED, ids=[c[0].__name__ for c in COMPILED])
def test_jvp_matches_finite_differences(func, args, jit):
    rng = np.random.default_rng(1)
    tangents = tuple(_random_like(rng, a) for a in args)
    out, tangent = srcgrad.jvp(func, args, tangents, jit=jit)
    eps = 1e-6
    plus = func(*(a + eps * t for a, t in zip(args, tangents)))
    minus = func(*(a - eps * t for a, t in zip(args, tangents)))
    assert tangent == pytest.approx((plus - minus) / (2 * eps), rel=1e-5, abs=1e-7)
    assert out == pytest.approx(func(*args), rel=1e-12)


def vector_valued(W, x):
    h = x
    for _ in range(2):
        h = np.tanh(W @ h) + test_calls.sigmoid(h)
    return np.concatenate([h, np.array([np.sum(h * x)])])


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_jacfwd_and_jacrev_agree(jit):
    jf = srcgrad.jacfwd(vector_valued, wrt=(0, 1), jit=jit)(W0, H0)
    jr = srcgrad.jacrev(vector_valued, wrt=(0, 1), jit=jit)(W0, H0)
    assert jf[0].shape == (4, 3, 3) and jf[1].shape == (4, 3)
    for a, b in zip(jf, jr):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-12)
    column = numerical_grad(lambda x: vector_valued(W0, x)[2], [H0], 0)
    np.testing.assert_allclose(jf[1][2], column, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_vjp_is_reusable_and_matches_jacrev(jit):
    out, vjp_fn = srcgrad.vjp(vector_valued, W0, H0, jit=jit)
    np.testing.assert_allclose(out, vector_valued(W0, H0), rtol=1e-12)
    jac = srcgrad.jacrev(vector_valued, wrt=1, jit=jit)(W0, H0)
    for k in range(2):
        ct = np.random.default_rng(k).normal(size=out.shape)
        dW, dx = vjp_fn(ct)
        np.testing.assert_allclose(dx, ct @ jac, rtol=1e-10, atol=1e-12)
        assert dW.shape == W0.shape


def test_vjp_and_jacrev_of_a_recursive_function():
    a = np.random.default_rng(2).normal(size=(3, 3))
    out, vjp_fn = srcgrad.vjp(test_calls.det, a, jit=False)
    assert out == pytest.approx(np.linalg.det(a), rel=1e-12)
    np.testing.assert_allclose(vjp_fn(2.0)[0], 2 * np.linalg.det(a) * np.linalg.inv(a).T,
                               rtol=1e-10)
    jac = srcgrad.jacrev(test_calls.uses_recursion, wrt=0, jit=False)(0.9, a)
    assert jac == pytest.approx(numerical_grad(test_calls.uses_recursion, [0.9, a], 0), rel=1e-6)


def energy(x, W):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            s = s + x[i] ** 3 * np.cos(x[i])
        else:
            s = s + np.exp(x[i]) * x[i]
    return s + np.sum(np.tanh(W @ x) ** 2) + test_calls.softplus(x[0] * x[1], beta=2.0)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_hessian_matches_finite_differences_of_the_gradient(jit):
    x = np.array([0.4, -0.7, 1.2])
    h = srcgrad.hessian(energy, jit=jit)(x, W0)
    gradient = srcgrad.grad(energy, jit=jit)
    eps = 1e-5
    fd = np.array([(gradient(x + eps * e, W0) - gradient(x - eps * e, W0)) / (2 * eps)
                   for e in np.eye(3)])
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(h, h.T, rtol=1e-12, atol=1e-14)  # each entry computed
    np.testing.assert_allclose(srcgrad.jacfwd(srcgrad.grad(energy), jit=jit)(x, W0), h,
                               rtol=1e-12)


def wave(x):
    y = x
    for k in range(3):
        if y > 0.5:
            y = np.sin(y) * x + k * 0.1
        else:
            y = test_calls.sigmoid(y) * x
    return y


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_derivatives_to_third_order(jit):
    d1 = srcgrad.grad(wave, jit=jit)
    d2 = srcgrad.grad(d1, jit=jit)
    d3 = srcgrad.grad(d2, jit=jit)
    x, eps = 0.8, 1e-4
    assert d2(x) == pytest.approx((d1(x + eps) - d1(x - eps)) / (2 * eps), rel=1e-6)
    assert d3(x) == pytest.approx((d2(x + eps) - d2(x - eps)) / (2 * eps), rel=1e-6)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_second_derivatives_through_recursion(jit):
    a = np.random.default_rng(5).normal(size=(3, 3))
    h = srcgrad.hessian(test_calls.det, jit=jit)(a)
    gradient = srcgrad.grad(test_calls.det, jit=jit)
    eps = 1e-5
    fd = np.array([(gradient(a + eps * e.reshape(3, 3)) - gradient(a - eps * e.reshape(3, 3)))
                   .ravel() / (2 * eps) for e in np.eye(9)])
    np.testing.assert_allclose(h.reshape(9, 9), fd, rtol=1e-6, atol=1e-8)
    d2 = srcgrad.grad(srcgrad.grad(test_calls.power, jit=jit), jit=jit)
    assert d2(1.3, 5) == pytest.approx(20 * 1.3 ** 3, rel=1e-12)


def test_third_derivative_closed_form():
    def g(x):
        return np.sin(x) * x ** 3
    d3 = srcgrad.grad(srcgrad.grad(srcgrad.grad(g, jit=False), jit=False), jit=False)
    x = 0.7
    expected = (6 * math.sin(x) + 18 * x * math.cos(x) - 9 * x ** 2 * math.sin(x)
                - x ** 3 * math.cos(x))
    assert d3(x) == pytest.approx(expected, rel=1e-12)


def test_mixed_second_partial():
    def f(x, y):
        return np.sin(x * y) + x ** 2 * y
    dxy = srcgrad.grad(srcgrad.grad(f, wrt=0, jit=False), wrt=1, jit=False)
    x, y = 0.3, 1.7
    expected = math.cos(x * y) - x * y * math.sin(x * y) + 2 * x
    assert dxy(x, y) == pytest.approx(expected, rel=1e-12)


def test_show_forward_mode():
    source = srcgrad.show(rnn, wrt=0, mode="forward")
    assert "def rnn__jvp(W, x, h0, _tan_W)" in source
    assert "_tan_h = " in source and "(test_forward.py:" in source


# ---- a function that calls a gradient, differentiated ---------------------------------

CUBIC = 0.5  # module data smooth reads: also read at every call through the gradient


def smooth(x, W):
    return np.sum(np.tanh(W @ x) ** 2) + np.sum(x ** 3) * CUBIC


grad_smooth = srcgrad.grad(smooth)


def gradient_norm(x, W):
    g = grad_smooth(x, W)
    return np.sum(g * g)


def quartic(x):
    return x ** 4 * np.sin(x)


d_quartic = srcgrad.grad(quartic)


def sum_of_slopes(x):
    y = 0.0
    for k in range(3):
        if k != 1:
            y = y + d_quartic(x * (k + 1))
    return y


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_gradient_of_a_function_that_calls_a_gradient(jit):
    x = np.array([0.4, -0.7, 1.2])
    got = srcgrad.grad(gradient_norm, jit=jit)(x, W0)
    np.testing.assert_allclose(got, numerical_grad(gradient_norm, [x, W0], 0), rtol=1e-6)
    h = srcgrad.hessian(smooth, jit=jit)(x, W0)  # d/dx |g|^2 = 2 H g
    np.testing.assert_allclose(got, 2 * h @ grad_smooth(x, W0), rtol=1e-9)
    slope = srcgrad.grad(sum_of_slopes, jit=jit)(0.3)
    assert slope == pytest.approx(numerical_grad(sum_of_slopes, [0.3], 0), rel=1e-6)


# ---- errors ---------------------------------------------------------------------------

def test_tangent_with_the_wrong_shape():
    with pytest.raises(ValueError, match=r"tangent of 'x' has shape \(2,\).*\(3,\)"):
        srcgrad.jvp(newton_sqrt_vector, (np.ones(3),), (np.ones(2),))


def newton_sqrt_vector(x):
    return np.sum(np.sqrt(x))


def test_primals_must_be_a_tuple():
    with pytest.raises(TypeError, match="primals must be a tuple"):
        srcgrad.jvp(newton_sqrt, 2.0, 1.0)


def test_hessian_of_a_vector_function_is_an_error():
    with pytest.raises(ValueError, match="hessian needs a scalar function"):
        srcgrad.hessian(lambda x: x * 2.0, jit=False)(np.ones(2))


def test_grad_of_grad_of_an_array_argument_is_the_hessian():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(
        srcgrad.grad(srcgrad.grad(newton_sqrt_vector, jit=False), jit=False)(x),
        srcgrad.hessian(newton_sqrt_vector, jit=False)(x), rtol=1e-12, atol=1e-14)
