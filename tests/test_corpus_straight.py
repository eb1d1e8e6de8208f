"""End-to-end gradient corpus: straight-line Python + NumPy functions.

Every function below is straight-line code (no loops, branches, conditional
expressions, boolean operators, comprehensions, lambdas, in-place element
writes or calls to other user-defined functions) and returns a scalar.  Each
one is differentiated by srcgrad, with and without numba, and checked against
central finite differences and, where it can trace the function, autograd
(see ``gradcheck.check_gradient``).

Inputs are drawn from ``np.random.default_rng(seed)`` and kept away from
non-differentiable points: no ties for max/min/maximum/minimum, nothing at 0
for abs/sign/where, arcsin/arccos arguments in (-0.9, 0.9), log arguments
positive.
"""

import ast
import inspect
import math
from math import exp as mexp

import numpy as np
import numpy as onp
import pytest

from gradcheck import away_from_zero, check_corpus, check_gradient

# Module-level constants read by some of the functions (srcgrad must treat
# them as constants, not as differentiated inputs).
SCALE = 0.75
OFFSET = 1.5
WEIGHTS = np.array([0.5, -1.25, 2.0, 0.75])


# ---------------------------------------------------------------------------
# input helpers (not part of the corpus)
# ---------------------------------------------------------------------------

def _rng(seed):
    return np.random.default_rng(seed)


def _with_gap(x, seed):
    """(x, y) with every |x_i - y_i| in [0.2, 1.0], so no ties between them."""
    return x, x + away_from_zero(_rng(seed), x.shape, 0.2, 1.0)


def _distinct(rng, n, low=-2.0, high=2.0):
    """n values with pairwise gaps of at least (high - low) / (2 n)."""
    base = np.linspace(low, high, n)
    jitter = rng.uniform(-0.2, 0.2, size=n) * (high - low) / n
    return rng.permutation(base + jitter)


# ---------------------------------------------------------------------------
# scalar arithmetic, assignment forms, globals, math module
# ---------------------------------------------------------------------------

def scalar_arith(x, y):
    return x * y + x - 3.0 * y + y / x - 2.5


def scalar_powers(x):
    return x ** 3 + x ** -0.5 + 2.0 ** x + x ** 2.5


def int_exponent(x, n):
    return x ** n + n * x - x ** (n - 1)


def unary_negation(x, y):
    z = -x * y
    return -z + (-y) ** 2 - (-(x - y))


def augmented_scalars(x, y):
    z = x
    z += y
    z *= x
    z -= 0.5 * y
    z /= 1.0 + y * y
    return z


def augmented_arrays(x, y):
    z = x * 2.0
    z += y
    z *= x
    z -= 0.25 * y
    z /= 1.5 + y * y
    return np.sum(z)


def tuple_swap(a, b):
    a, b = b, a
    c = a * 2.0 - b
    return c * a + b ** 3


def tuple_unpack(x, y):
    u, v = x * 2.0, y
    u, v = u * v, u + v
    return u * v - u / v


def reassign_chain(x):
    a = np.sin(x)
    b = a * a
    a = b + x
    b = a * b
    return np.sum(a * b)


def module_globals_scalar(x):
    return SCALE * x ** 2 + OFFSET * x - SCALE / OFFSET


def module_global_array(x):
    return np.sum(WEIGHTS * x) + np.dot(WEIGHTS, x * x) + SCALE * np.sum(x)


def math_module_funcs(x):
    return (math.sin(x) + math.exp(0.5 * x) + math.log(x) + math.sqrt(x)
            + math.tanh(x) + math.cos(x) * math.atan(x))


def math_from_import(x, y):
    return mexp(-x * x) * math.cos(y) + math.log1p(x * y)


def numpy_alias(x):
    return onp.sum(onp.sin(x) * onp.cos(x)) + onp.mean(onp.exp(-x))


def numpy_scalar_arg(x, y):
    return np.sin(x) * np.exp(y) + np.arctan(x * y)


# ---------------------------------------------------------------------------
# elementwise NumPy functions
# ---------------------------------------------------------------------------

def trig_funcs(x):
    return np.sum(np.sin(x) + np.cos(x) * np.tan(x))


def inverse_trig(x):
    return np.sum(np.arcsin(x) + np.arccos(0.5 * x) + np.arctan(3.0 * x))


def hyperbolic(x):
    return np.sum(np.sinh(x) * np.cosh(x) + np.tanh(2.0 * x))


def exp_log(x):
    return np.sum(np.exp(-x) + np.log(x) * x)


def log1p_expm1(x):
    return np.mean(np.log1p(x * x) + np.expm1(0.3 * x))


def sqrt_square(x):
    return np.sum(np.sqrt(x + 2.0) * np.square(x))


def abs_sign(x):
    return np.sum(np.abs(x) * 2.0 + np.sign(x) * x ** 2)


def np_power(x, y):
    return np.sum(np.power(x, 3.0) + np.power(2.0, y) + np.power(x, y))


def maximum_minimum(x, y):
    return np.sum(np.maximum(x, y) * 2.0 + np.minimum(x, 0.5) - np.minimum(y, x))


def leaky_relu_where(x):
    return np.sum(np.where(x > 0, x, 0.1 * x))


def where_two_branches(x, y):
    return np.sum(np.where(x > y, x * y, x - y))


def where_condition_only(x, y):
    return np.sum(np.where(y > 0, x, 2.0 * x))


def division_arrays(x, y):
    return np.sum(1.0 / x + x / y - y / (x * x))


def pi_constant(x):
    return np.sum(np.sin(np.pi * x)) + np.pi * x[0]


def scalar_np_funcs(x):
    return np.sqrt(x) + np.log(x) * np.tanh(x) + np.abs(x - 3.0) + np.sign(x) * x


# ---------------------------------------------------------------------------
# reductions and linear algebra
# ---------------------------------------------------------------------------

def sum_mean_methods(x):
    return x.sum() * x.mean() + (x * x).sum()


def max_min_whole(x):
    return np.max(x) - 2.0 * np.min(x) + np.sum(x * x)


def dot_methods(x, y):
    return x.dot(y) + np.dot(x, x) * y.dot(y)


def matmul_function(A, x):
    y = np.matmul(A, x)
    return y @ y


def matvec_dot(A, x):
    return np.sum(np.dot(A, x) * x[0]) + np.dot(x, x)


def outer_product(u, v):
    return np.sum(np.outer(u, v) ** 2) + np.sum(np.outer(u, u))


def transpose_matmul(A, B):
    return np.sum(A.T @ B) + np.sum(A.T * A.T)


def transpose_method_dot(A, v):
    return np.sum(A.T.dot(v) ** 2)


def matrix_mean(A, v):
    return (A @ v).mean() + A.mean() * v.sum()


def matrix_elementwise(A):
    return np.sum(np.exp(-A * A) * A) + np.mean(np.cos(A))


def zero_dim_array(x0, y):
    return np.sum(np.sin(x0) * x0 + x0 ** 2) * y + y ** 2


def zero_dim_reduction(x0):
    return np.mean(np.exp(x0) * 3.0) + np.max(x0) + np.sum(x0 * x0)


# ---------------------------------------------------------------------------
# indexing reads
# ---------------------------------------------------------------------------

def index_ints(x):
    return x[0] * x[2] + x[-1] ** 2 - x[1] / 3.0


def index_2d_int_args(A, i, j):
    return A[i, j] * A[j, i] + np.sum(A[i]) + A[0, 1]


def slices_1d(x):
    return np.sum(x[1:4] * x[0:3]) + np.sum(x[:-1] * x[1:]) + np.sum(x[-2:])


def rows_cols(A):
    return np.sum(A[:, 0] * A[:, 1]) + np.sum(A[1] ** 2) + A[0, -1] + np.sum(A[:, -1])


def submatrix(A):
    return np.sum(A[1:3, 0:2] @ A[0:2, 1:3])


# ---------------------------------------------------------------------------
# broadcasting
# ---------------------------------------------------------------------------

def broadcast_scalar_array(s, x):
    return np.sum(s * x + s ** 2 / (1.0 + x * x))


def broadcast_col_row(c, r):
    return np.sum(np.tanh(c + r) * (c * r))


def broadcast_vec_mat(b, M):
    return np.sum((M + b) ** 2) + np.sum(M * b)


def broadcast_zero_dim(x0, v):
    return np.sum(x0 * v + np.exp(x0 - v))


# ---------------------------------------------------------------------------
# realistic models
# ---------------------------------------------------------------------------

def logistic_regression_loss(w, b, X, y):
    z = X @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def softplus(x):
    return np.sum(np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0))


def mlp_2layer(W1, b1, W2, b2, x):
    h = np.tanh(W1 @ x + b1)
    out = W2 @ h + b2
    return np.sum(out * out) * 0.5


def rosenbrock(p):
    return (1.0 - p[0]) ** 2 + 100.0 * (p[1] - p[0] ** 2) ** 2


def gaussian_logpdf(x, mu, sigma):
    z = (x - mu) / sigma
    return np.sum(-0.5 * z * z - np.log(sigma) - 0.5 * np.log(2.0 * np.pi))


def logsumexp_stable(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def quadratic_form(x, A):
    return x @ A @ x


def frobenius_sq(A):
    return np.sum(A * A)


def softmax_cross_entropy(logits, target):
    m = np.max(logits)
    shifted = logits - m
    log_z = np.log(np.sum(np.exp(shifted)))
    return -np.sum(target * (shifted - log_z))


def ridge_loss(w, X, y, lam):
    r = X @ w - y
    return r.dot(r) / 2.0 + lam * w.dot(w)


# ---------------------------------------------------------------------------
# the case list
# ---------------------------------------------------------------------------

def _case(func, make_args, wrt=0):
    return pytest.param(func, make_args, wrt, id=func.__name__)


CASES = [
    _case(scalar_arith, lambda: (1.3, -0.7), (0, 1)),
    _case(scalar_powers, lambda: (1.7,)),
    _case(int_exponent, lambda: (1.2, 4)),
    _case(unary_negation, lambda: (0.8, -1.4), 1),
    _case(augmented_scalars, lambda: (1.1, 0.6), (0, 1)),
    _case(augmented_arrays,
          lambda: (_rng(1).normal(size=5), _rng(2).normal(size=5)), (0, 1)),
    _case(tuple_swap, lambda: (0.9, -1.6), (0, 1)),
    _case(tuple_unpack, lambda: (0.7, 1.9), ("x", "y")),
    _case(reassign_chain, lambda: (_rng(3).normal(size=4),)),
    _case(module_globals_scalar, lambda: (-0.4,)),
    _case(module_global_array, lambda: (_rng(4).normal(size=4),)),
    _case(math_module_funcs, lambda: (1.3,)),
    _case(math_from_import, lambda: (0.6, -0.8), (0, 1)),
    _case(numpy_alias, lambda: (_rng(5).normal(size=(2, 3)),)),
    _case(numpy_scalar_arg, lambda: (np.float64(0.4), np.float64(-0.3)), (0, 1)),
    _case(trig_funcs, lambda: (_rng(6).uniform(-1.0, 1.0, size=6),)),
    _case(inverse_trig, lambda: (_rng(7).uniform(-0.85, 0.85, size=5),)),
    _case(hyperbolic, lambda: (_rng(8).normal(size=(3, 2)),)),
    _case(exp_log, lambda: (_rng(9).uniform(0.3, 2.5, size=5),)),
    _case(log1p_expm1, lambda: (_rng(10).normal(size=6),)),
    _case(sqrt_square, lambda: (_rng(11).uniform(-1.0, 2.0, size=5),)),
    _case(abs_sign, lambda: (away_from_zero(_rng(12), 6),)),
    _case(np_power,
          lambda: (_rng(13).uniform(0.5, 2.0, size=4), _rng(14).uniform(-1.0, 1.5, size=4)),
          (0, 1)),
    _case(maximum_minimum,
          lambda: _with_gap(np.array([-1.3, -0.6, 0.1, 0.8, 1.4, 2.1]), 16),
          (0, 1)),
    _case(leaky_relu_where, lambda: (away_from_zero(_rng(17), 7),)),
    _case(where_two_branches,
          lambda: _with_gap(_rng(18).normal(size=6), 19),
          (0, 1)),
    _case(where_condition_only,
          lambda: (_rng(20).normal(size=5), away_from_zero(_rng(21), 5)), (0, 1)),
    _case(division_arrays,
          lambda: (_rng(22).uniform(0.5, 2.0, size=4), _rng(23).uniform(0.5, 2.0, size=4)),
          (0, 1)),
    _case(pi_constant, lambda: (_rng(24).normal(size=4),)),
    _case(scalar_np_funcs, lambda: (1.4,)),
    _case(sum_mean_methods, lambda: (_rng(25).normal(size=5),)),
    _case(max_min_whole, lambda: (_distinct(_rng(26), 7),)),
    _case(dot_methods, lambda: (_rng(27).normal(size=4), _rng(28).normal(size=4)), (0, 1)),
    _case(matmul_function,
          lambda: (_rng(29).normal(size=(3, 4)), _rng(30).normal(size=4)), (0, 1)),
    _case(matvec_dot, lambda: (_rng(31).normal(size=(3, 3)), _rng(32).normal(size=3)), (0, 1)),
    _case(outer_product, lambda: (_rng(33).normal(size=3), _rng(34).normal(size=4)), (0, 1)),
    _case(transpose_matmul,
          lambda: (_rng(35).normal(size=(3, 2)), _rng(36).normal(size=(3, 4))), (0, 1)),
    _case(transpose_method_dot,
          lambda: (_rng(37).normal(size=(3, 2)), _rng(38).normal(size=3)), (0, "v")),
    _case(matrix_mean, lambda: (_rng(39).normal(size=(2, 3)), _rng(40).normal(size=3)), (0, 1)),
    _case(matrix_elementwise, lambda: (_rng(41).normal(size=(3, 3)),)),
    _case(zero_dim_array, lambda: (np.array(0.7), 1.2), (0, 1)),
    _case(zero_dim_reduction, lambda: (np.array(-0.35),)),
    _case(index_ints, lambda: (_rng(42).normal(size=5),)),
    _case(index_2d_int_args, lambda: (_rng(43).normal(size=(3, 3)), 2, 0)),
    _case(slices_1d, lambda: (_rng(44).normal(size=6),)),
    _case(rows_cols, lambda: (_rng(45).normal(size=(3, 4)),)),
    _case(submatrix, lambda: (_rng(46).normal(size=(3, 3)),)),
    _case(broadcast_scalar_array, lambda: (0.8, _rng(47).normal(size=5)), (0, 1)),
    _case(broadcast_col_row,
          lambda: (_rng(48).normal(size=(3, 1)), _rng(49).normal(size=(1, 4))), (0, 1)),
    _case(broadcast_vec_mat,
          lambda: (_rng(50).normal(size=4), _rng(51).normal(size=(3, 4))), (0, 1)),
    _case(broadcast_zero_dim, lambda: (np.array(0.3), _rng(52).normal(size=4)), (0, 1)),
    _case(logistic_regression_loss,
          lambda: (_rng(53).normal(size=3), 0.2, _rng(54).normal(size=(8, 3)),
                   _rng(55).integers(0, 2, size=8).astype(np.float64)),
          (0, 1)),
    _case(softplus, lambda: (away_from_zero(_rng(56), 6, 0.1, 3.0),), "x"),
    _case(mlp_2layer,
          lambda: (_rng(57).normal(size=(5, 3)) * 0.5, _rng(58).normal(size=5),
                   _rng(59).normal(size=(2, 5)) * 0.5, _rng(60).normal(size=2),
                   _rng(61).normal(size=3)),
          (0, 1, 2, 3)),
    _case(rosenbrock, lambda: (np.array([-0.8, 1.3]),)),
    _case(gaussian_logpdf,
          lambda: (_rng(62).normal(size=5), 0.3, _rng(63).uniform(0.5, 2.0, size=5)),
          ("mu", "sigma")),
    _case(logsumexp_stable, lambda: (_distinct(_rng(64), 6, -3.0, 3.0),)),
    _case(quadratic_form, lambda: (_rng(65).normal(size=4), _rng(66).normal(size=(4, 4))), (0, 1)),
    _case(frobenius_sq, lambda: (_rng(67).normal(size=(3, 4)),), "A"),
    _case(softmax_cross_entropy,
          lambda: (_distinct(_rng(68), 5), np.array([0.1, 0.2, 0.4, 0.2, 0.1])), (0, 1)),
    _case(ridge_loss,
          lambda: (_rng(69).normal(size=3), _rng(70).normal(size=(6, 3)),
                   _rng(71).normal(size=6), 0.3),
          (0, 3)),
]


# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func, make_args, wrt", CASES)
def test_gradient(func, make_args, wrt, jit):
    check_gradient(func, make_args(), wrt=wrt, jit=jit)


def test_corpus_size_and_distinct_names():
    check_corpus(CASES, globals(), minimum=45)


# Node types that would make a corpus function not straight-line.
_FORBIDDEN = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.IfExp, ast.BoolOp,
              ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
              ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.Try,
              ast.With, ast.Break, ast.Continue)


@pytest.mark.parametrize("func", [case.values[0] for case in CASES],
                         ids=[case.id for case in CASES])
def test_corpus_function_is_straight_line(func):
    tree = ast.parse(inspect.getsource(func))
    fdef = tree.body[0]
    assert isinstance(fdef, ast.FunctionDef) and fdef.name == func.__name__
    user_functions = {case.values[0].__name__ for case in CASES}
    for node in ast.walk(ast.Module(body=fdef.body, type_ignores=[])):
        assert not isinstance(node, _FORBIDDEN), f"{type(node).__name__} in {func.__name__}"
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    assert not isinstance(sub, (ast.Subscript, ast.Attribute)), (
                        f"write into an array/attribute in {func.__name__}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in user_functions and not node.func.id.startswith("_"), (
                f"{func.__name__} calls user-defined function {node.func.id}")
