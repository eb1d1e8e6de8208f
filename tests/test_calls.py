"""Calls into user code: inlining, closures, nested functions, recursion, stop_gradient.

Every function is checked by `check_gradient` (central finite differences,
and autograd where it traces) with numba on and off.
"""
import numpy as np
import pytest

import srcgrad
import calls_helpers
from calls_helpers import cube, make_affine, scaled_tanh, softplus
from gradcheck import check_gradient

affine = make_affine(2.0, -0.5)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def dense(W, x, b=0.25):
    return sigmoid(W @ x + b)


def first_above(xs, level):
    """A helper with its own loop and an early return."""
    for i in range(xs.shape[0]):
        if xs[i] > level:
            return xs[i] * xs[i]
    return 0.0


def polar(x, y):
    r = np.sqrt(x * x + y * y)
    return r, np.arctan2(y, x)


def count_and_scale(x):
    """Integers, shapes and comparisons flow through a call untouched."""
    n = len(x)
    m = int(x.shape[0] / 2)
    k = 0
    for i in range(n):
        if i >= m:
            k += 1
    return x * float(k) / n


def norm2(v):
    return np.sqrt(np.sum(v * v))


def doubled_head(u):
    u = u.copy()  # its own array before writing into it
    u[0] = u[0] * 2.0
    return u


def bump(u):
    u[0] = u[0] * 2.0  # writes into the caller's array
    return u


# ---- the functions differentiated ----------------------------------------------------

def mlp(W, x):
    h = dense(W, x)
    return np.sum(dense(W, h, b=-0.1) * h)


def loop_of_calls(W, x):
    s = 0.0
    for t in range(3):
        x = dense(W, x * 0.5, b=0.1 * t)
        if np.sum(x) > 1.0:
            s = s + softplus(np.sum(x), beta=2.0)
        else:
            s = s + scaled_tanh(np.sum(x))
    return s


def imported_and_closures(x):
    return np.sum(affine(scaled_tanh(x)) + cube(x)) + softplus(x[0])


def with_early_return_helper(xs):
    return first_above(xs, 0.5) + first_above(xs * 2.0, 10.0)


def tuple_result(x, y):
    r, theta = polar(x, y)
    return r * np.sin(theta) + r


def nested_functions(x, a):
    def scale(u, k=2.0):
        return a * u ** k   # reads `a` from the enclosing function
    sq = lambda u: u * u  # noqa: E731
    total = 0.0
    for i in range(2):
        total = total + scale(x) + sq(x + i)
    return total


def while_condition_call(x):
    y = x
    while sigmoid(y) < 0.9:
        y = y * 1.5 + 0.1
    return y * y


def arrays_shared_with_callees(x):
    y = x * 1.0
    s = norm2(y)  # norm2 reads y; the caller writes into y afterwards
    y[0] = s * 3.0
    return np.sum(doubled_head(y) * y) + s


def integer_flow(x):
    return np.sum(count_and_scale(x) * x)


def det(A):
    """Determinant by expansion of minors along the first row (recursive)."""
    n = A.shape[0]
    if n == 1:
        return A[0, 0]
    total = 0.0
    for j in range(n):
        total = total + (-1.0) ** j * A[0, j] * det(minor(A, j))
    return total


def minor(A, j):
    n = A.shape[0]
    m = np.zeros((n - 1, n - 1))
    m[:, :j] = A[1:, :j]
    m[:, j:] = A[1:, j + 1:]
    return m


def power(x, n):
    if n == 0:
        return 1.0
    return x * power(x, n - 1)


def even_term(x, n):
    """Mutual recursion: even_term and odd_term call each other."""
    if n <= 0:
        return 1.0
    return np.cos(x) * odd_term(x, n - 1)


def odd_term(x, n):
    return x + even_term(x * 0.5, n - 1)


def uses_recursion(x, A):
    return power(x, 3) * det(A * x) + even_term(x, 4)


def stopped(x, y):
    return np.sum(srcgrad.stop_gradient(x * y) * x) + np.sum(srcgrad.stop_gradient(y))


RNG = np.random.default_rng(7)
W = RNG.normal(size=(3, 3)) * 0.6
X = RNG.normal(size=3)
A = RNG.normal(size=(4, 4))

CASES = [
    (mlp, (W, X), (0, 1)),
    (loop_of_calls, (W, X), (0, 1)),
    (imported_and_closures, (X,), 0),
    (with_early_return_helper, (np.array([0.1, 0.7, 0.2, 0.9]),), 0),
    (tuple_result, (0.7, -1.2), (0, 1)),
    (nested_functions, (0.8, 1.3), (0, 1)),
    (while_condition_call, (0.2,), 0),
    (integer_flow, (X,), 0),
    (arrays_shared_with_callees, (X,), 0),
    (det, (A,), 0),
    (power, (1.3, 5), 0),
    (uses_recursion, (0.9, A), (0, 1)),
]


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("f, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_calls_gradient(f, args, wrt, jit):
    check_gradient(f, args, wrt, jit=jit)


def test_det_gradient_is_the_cofactor_matrix():
    g = srcgrad.grad(det)(A)
    np.testing.assert_allclose(g, np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-10)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_stop_gradient_cuts_the_path(jit):
    dx, dy = srcgrad.grad(stopped, wrt=(0, 1), jit=jit)(1.5, np.array([2.0, 3.0]))
    assert dx == pytest.approx(1.5 * 2.0 + 1.5 * 3.0)  # d/dx of c * x with c = x*y held fixed
    np.testing.assert_allclose(dy, [0.0, 0.0])


def test_callee_globals_are_read_at_every_call(monkeypatch):
    g = srcgrad.grad(imported_and_closures)
    before = g(X)
    monkeypatch.setattr(calls_helpers, "GAIN", 3.0)
    after = g(X)
    assert not np.allclose(before, after)
    check_gradient(imported_and_closures, (X,), 0, jit=True)


def test_generated_code_names_the_callee_lines():
    source = srcgrad.grad(imported_and_closures, jit=False).source
    assert "u__affine1" in source  # the callee's names, suffixed per inlined copy
    assert "z__scaled_tanh1" not in source  # a parameter only read is the caller's x
    assert "(calls_helpers.py:" in source  # comments point into the callee's file
    assert "def det__grad_all(A)" in srcgrad.grad(det, jit=False).source


def test_negative_constant_base_is_parenthesized():
    def alternating(x):
        return (-1.0) ** 3 * x + (-2.0) ** 2 * x
    assert srcgrad.grad(alternating, jit=False)(1.0) == pytest.approx(3.0)


# ---- errors --------------------------------------------------------------------------

_namespace = {"np": np}
exec("def no_source(u):\n    return u * 2.0\n", _namespace)
no_source = _namespace["no_source"]

LIMIT = 2


def uses_no_source(x):
    return no_source(x) + 1.0


def rec_vector(x, n):
    if n == 0:
        return x
    return rec_vector(x * 2.0, n - 1)


def uses_rec_vector(x):
    return np.sum(rec_vector(x, 2))


def rec_global(x, n):
    if n > LIMIT:
        return x
    return x * rec_global(x, n + 1)


def bad_keyword(x):
    return softplus(x, gamma=2.0)


def with_try(u):
    try:
        return u
    except ValueError:
        return 0.0


def calls_with_try(x):
    return with_try(x) * 2.0


def function_as_value(x):
    def sq(u):
        return u * u
    f = sq
    return f(x)


def writes_into_argument(x):
    y = x * 1.0
    bump(y)
    return np.sum(y)


def _bump_private(u):
    u[0] = 2.0 * u[0]
    return u


def writes_into_argument_private(x):
    y = x * 1.0
    _bump_private(y)
    return np.sum(y)


def test_callee_writing_into_a_caller_array_is_rejected():
    with pytest.raises(srcgrad.SrcgradSyntaxError,
                       match=r"bump\(\) writing into its parameter 'u', which is the caller's 'y'"):
        srcgrad.grad(writes_into_argument)
    # a callee named with a leading underscore was once let through (its renamed
    # parameter `u___bump_private1` was split at the wrong `__`)
    with pytest.raises(srcgrad.SrcgradSyntaxError,
                       match=r"_bump_private\(\) writing into its parameter 'u', which is the caller's 'y'"):
        srcgrad.grad(writes_into_argument_private)


def _apply_bc(u):  # works by its writes, returns nothing
    u[0] = u[1]
    u[-1] = u[-2]


def writes_boundary_in_place(u0, c):
    u = u0 * 1.0
    for _ in range(3):
        _apply_bc(u)
        u[1:-1] = u[1:-1] + c * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u * u)


def _record_first(u):  # no return: Python's None; writes only its own array
    v = np.zeros(2)
    v[0] = u[0]


def _returns_bare(u):
    if u[0] > 10.0:
        return
    w = u * 2.0


def calls_helpers_returning_none(u):
    _record_first(u)
    _returns_bare(u)
    return np.sum(np.sin(u))


def test_callee_without_return_returns_none():
    """A helper without a return (or with a bare one) returns None, as in Python; one that
    writes into the caller's array is refused with advice that keeps its effect."""
    with pytest.raises(srcgrad.SrcgradSyntaxError,
                       match=r"_apply_bc\(\) writing into its parameter 'u'.*return it, and "
                             r"assign the call's result in the caller: u = _apply_bc\(\.\.\.\)"):
        srcgrad.grad(writes_boundary_in_place)
    for jit in (True, False):
        check_gradient(calls_helpers_returning_none, (np.linspace(0.1, 1.0, 5),), 0, jit=jit)


def test_call_without_source_points_to_defvjp():
    with pytest.raises(srcgrad.MissingRuleError) as err:
        srcgrad.grad(uses_no_source)
    message = str(err.value)
    assert "no_source" in message and "srcgrad.defvjp" in message
    assert "test_calls.py" in message and "return no_source(x) + 1.0" in message


def test_recursive_function_must_return_a_scalar():
    with pytest.raises(srcgrad.SrcgradError, match="recursive function only if it returns a scalar"):
        srcgrad.grad(uses_rec_vector, jit=False)(np.ones(3))


def test_recursive_function_reading_globals_is_rejected():
    with pytest.raises(srcgrad.SrcgradError, match="reads LIMIT from outside"):
        srcgrad.grad(rec_global)


def test_unknown_keyword_names_the_parameters():
    with pytest.raises(srcgrad.SrcgradSyntaxError, match="keyword 'gamma'.*z, beta"):
        srcgrad.grad(bad_keyword)


def test_unsupported_syntax_in_a_callee_names_the_callee_line():
    with pytest.raises(srcgrad.SrcgradSyntaxError) as err:
        srcgrad.grad(calls_with_try)
    assert "with_try" in str(err.value) and "return inside a try statement" in str(err.value)
    assert err.value.loc.text.strip() == "return u"


def test_local_function_used_as_a_value_is_rejected():
    with pytest.raises(srcgrad.SrcgradSyntaxError, match="using the function 'sq' as a value"):
        srcgrad.grad(function_as_value)
