"""End-to-end gradients through np.linalg (solve, inv, det, slogdet, norm, cholesky) and
np.einsum, written the way a user would, checked with ``check_gradient`` (finite
differences and autograd) with jit=True and jit=False.

numba compiles np.linalg on single 2-d matrices; where it cannot compile a primal
(np.einsum, np.linalg.norm with an axis, stacks of matrices), srcgrad must warn with
`SrcgradWarning`, fall back to Python and still give the right gradient. The rules
themselves are checked against finite differences by the registry sweep
(test_rules.py); this file also checks the linear-algebra helpers' plain-NumPy twins
against their numba twins.
"""

import numba
import numpy as np
import pytest

import srcgrad
from gradcheck import check_fallback_gradient, check_corpus, check_gradient
from srcgrad.runtime import (linalg_norm_grad, slogdet_logabs, slogdet_sign, solve_outer,
                             solve_transposed, stack_scalar, tril_half_diag)


def _rng(seed):
    return np.random.default_rng(seed)


def _square(seed, *shape):
    """Well-conditioned matrices: random entries plus n on the diagonal."""
    return _rng(seed).normal(size=shape) + shape[-1] * np.eye(shape[-1])


# ---------------------------------------------------------------------------
# numba compiles these (single matrices)
# ---------------------------------------------------------------------------

def solve_sum_squares(A, b):
    x = np.linalg.solve(A, b)
    return np.sum(x * x)


def det_squared(A):
    return np.linalg.det(A) ** 2


def inv_times(A, B):
    return np.sum(np.linalg.inv(A) @ B)


def norms(x, A):
    # matrix orders other than the default (Frobenius) are checked by the twin tests below
    return (np.linalg.norm(x) + np.linalg.norm(x, 1) * np.linalg.norm(x, ord=np.inf)
            + np.linalg.norm(A) ** 2)


def cholesky_weighted(M, W):
    S = M @ M.T + 3.0 * np.eye(3)
    return np.sum(np.linalg.cholesky(S) * W)


# ---------------------------------------------------------------------------
# numba cannot compile these: jit=True warns and runs as Python
# ---------------------------------------------------------------------------

def solve_stacked(A, B):
    X = np.linalg.solve(A, B)
    return np.sum(np.sin(X))


def row_norms(X):
    return np.sum(np.linalg.norm(X, axis=1) ** 3)


def einsum_matmul(A, B):
    return np.sum(np.sin(np.einsum('ij,jk->ik', A, B)))


def einsum_dot_outer(x, y):
    P = np.einsum('i,j->ij', x, y)
    return np.einsum('i,i->', x, y) ** 2 + np.sum(P * P)


def einsum_batch(A, B):
    C = np.einsum('bij,bjk->bik', A, B)
    return np.sum(C * C)


# ---------------------------------------------------------------------------
# jit=False only: numba compiles np.linalg.norm(A, 'fro') but raises ValueError
# ("Invalid norm order for matrices") when it runs
# ---------------------------------------------------------------------------

def matrix_norms_named(A):
    return np.linalg.norm(A @ A, 'fro') + np.linalg.norm(A, 'nuc') + np.linalg.norm(A, 2)


def _case(func, make_args, wrt=0, mode="numba"):
    return pytest.param(func, make_args, wrt, mode, id=func.__name__)


CASES = [
    _case(solve_sum_squares, lambda: (_square(1, 3, 3), _rng(2).normal(size=3)), (0, 1)),
    _case(det_squared, lambda: (_square(3, 3, 3),)),
    _case(inv_times, lambda: (_square(4, 3, 3), _rng(5).normal(size=(3, 2))), (0, 1)),
    _case(norms, lambda: (np.array([0.5, -1.7, 1.1, -0.3]), _rng(6).normal(size=(3, 2))),
          (0, 1)),
    _case(cholesky_weighted, lambda: (_rng(7).normal(size=(3, 3)), _rng(8).normal(size=(3, 3))),
          (0, 1)),
    _case(solve_stacked, lambda: (_square(9, 2, 3, 3), _rng(10).normal(size=(2, 3, 2))), (0, 1),
          mode="fallback"),
    _case(row_norms, lambda: (_rng(11).normal(size=(3, 4)),), mode="fallback"),
    _case(einsum_matmul, lambda: (_rng(12).normal(size=(2, 3)), _rng(13).normal(size=(3, 4))),
          (0, 1), mode="fallback"),
    _case(einsum_dot_outer, lambda: (_rng(14).normal(size=3), _rng(15).normal(size=3)), (0, 1),
          mode="fallback"),
    _case(einsum_batch, lambda: (_rng(16).normal(size=(2, 2, 3)), _rng(17).normal(size=(2, 3, 2))),
          (0, 1), mode="fallback"),
    _case(matrix_norms_named, lambda: (_square(18, 3, 3),), mode="fallback"),
]


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func, make_args, wrt, mode", CASES)
def test_gradient(func, make_args, wrt, mode, jit):
    if jit and mode == "fallback":
        check_fallback_gradient(func, make_args(), wrt)
        return
    check_gradient(func, make_args(), wrt=wrt, jit=jit)


def test_corpus_distinct_names():
    check_corpus(CASES, globals(), minimum=11)


# ---------------------------------------------------------------------------
# forms that need resolve.py to rewrite the call (enabled once it does)
# ---------------------------------------------------------------------------

def slogdet_unpacked(A):
    sign, logdet = np.linalg.slogdet(A)
    return sign * logdet ** 2


def einsum_transpose_trace(A, B):
    return np.sum(np.einsum('ij->ji', A) * B) + np.einsum('ii->', B @ A) ** 2


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
def test_slogdet_unpacked(jit):
    A = _square(19, 3, 3) * np.array([[-1.0], [1.0], [1.0]])  # a negative determinant
    assert np.linalg.det(A) < 0
    check_gradient(slogdet_unpacked, (A,), jit=jit)


def test_einsum_one_operand():
    args = (_rng(20).normal(size=(2, 3)), _rng(21).normal(size=(3, 2)))
    expected = check_gradient(einsum_transpose_trace, args, wrt=(0, 1), jit=False)
    g = srcgrad.grad(einsum_transpose_trace, wrt=(0, 1), jit=True)
    with pytest.warns(srcgrad.SrcgradWarning, match="numba could not compile"):
        got = g(*args)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------
# clear errors for what the rules do not cover
# ---------------------------------------------------------------------------

def _einsum_three(A, B, C):
    return np.sum(np.einsum('ij,jk,kl->il', A, B, C))


def _norm_axis_pair(T):
    return np.sum(np.linalg.norm(T, axis=(1, 2)))


def test_einsum_with_three_operands_is_a_clear_error():
    A = np.ones((2, 2))
    with pytest.raises(srcgrad.SrcgradError, match="np.einsum"):
        srcgrad.grad(_einsum_three, jit=False)(A, A, A)


def test_matrix_norm_of_a_stack_is_a_clear_error():
    with pytest.raises(ValueError, match="np.linalg.norm over a pair of axes"):
        srcgrad.grad(_norm_axis_pair, jit=False)(np.ones((2, 3, 3)))


# ---------------------------------------------------------------------------
# runtime helpers: plain-NumPy twin vs numba twin
# ---------------------------------------------------------------------------

_NB = {
    "stack_scalar": numba.njit(lambda s: stack_scalar(s)),
    "solve_transposed": numba.njit(lambda a, g: solve_transposed(a, g)),
    "solve_outer": numba.njit(lambda z, x, a: solve_outer(z, x, a)),
    "tril_half_diag": numba.njit(lambda x: tril_half_diag(x)),
    "slogdet": numba.njit(lambda a: (slogdet_sign(a), slogdet_logabs(a))),
    "linalg_norm_grad": numba.njit(lambda g, ans, x, ord: linalg_norm_grad(g, ans, x, ord,
                                                                            None, False)),
}
_PY = {
    "stack_scalar": stack_scalar, "solve_transposed": solve_transposed, "solve_outer": solve_outer,
    "tril_half_diag": tril_half_diag,
    "slogdet": lambda a: (slogdet_sign(a), slogdet_logabs(a)),
    "linalg_norm_grad": lambda g, ans, x, ord: linalg_norm_grad(g, ans, x, ord, None, False),
}
_A = _square(30, 3, 3)
_X = _rng(31).normal(size=(3, 4))
_V = np.array([0.5, -1.7, 1.1, -0.3])


def _norm_case(x, ord, label):
    return ("linalg_norm_grad", (0.7, np.linalg.norm(x, ord), x, ord), label)


TWIN_CASES = [
    ("stack_scalar", (1.5,), "scalar"),
    ("solve_transposed", (_A, _V[:3]), "vector"),
    ("solve_transposed", (_A, _X), "matrix"),
    ("solve_outer", (_V[:3], _V[1:], _A), "vector"),
    ("solve_outer", (_X[:, :2].copy(), _X[:, 2:].copy(), _A), "matrix"),
    ("tril_half_diag", (_X,), "wide"),
    ("slogdet", (_A * np.array([[-1.0], [1.0], [1.0]]),), "negative"),
    _norm_case(_V, None, "vector-default"),
    _norm_case(_V, 3, "vector-3"),
    _norm_case(_V, 1, "vector-1"),
    _norm_case(_V, np.inf, "vector-inf"),
    _norm_case(_V, -np.inf, "vector-minus-inf"),
    _norm_case(_X, None, "matrix-default"),
    _norm_case(_X, 1, "matrix-1"),
    _norm_case(_X, -1, "matrix-minus-1"),
    _norm_case(_X, 2, "matrix-2"),
    _norm_case(_X, -2, "matrix-minus-2"),
    _norm_case(_X, np.inf, "matrix-inf"),
    _norm_case(_X, -np.inf, "matrix-minus-inf"),
]


def _assert_same(py, nb, where):
    if isinstance(py, tuple):
        for k, (p, q) in enumerate(zip(py, nb, strict=True)):
            _assert_same(p, q, f"{where}[{k}]")
        return
    assert isinstance(py, np.ndarray) == isinstance(nb, np.ndarray), where
    if isinstance(py, np.ndarray):
        assert py.shape == nb.shape and py.dtype == nb.dtype, where
    else:
        assert isinstance(py, float) and isinstance(nb, float), where
    # the SVD's singular vectors are unique up to sign; the products compared here are not
    np.testing.assert_allclose(py, nb, rtol=1e-10, atol=1e-12, err_msg=where)


@pytest.mark.parametrize("helper, args",
                         [pytest.param(h, a, id=f"{h}-{i}") for h, a, i in TWIN_CASES])
def test_runtime_twins_agree(helper, args):
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    py = _PY[helper](*args)
    nb = _NB[helper](*args)
    for b, a in zip(before, args):
        assert np.array_equal(b, a), "the helper mutated its input"
    _assert_same(py, nb, helper)


def _det_only(A):
    return np.linalg.det(A)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_det_derivative_at_a_singular_matrix_is_the_cofactor_matrix(jit):
    A = np.array([[1.0, 2.0, 0.5], [2.0, 4.0, 1.0], [0.3, -0.7, 1.1]])  # rank 2
    cof = np.array([[np.linalg.det(np.delete(np.delete(A, i, 0), j, 1)) * (-1) ** (i + j)
                     for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(srcgrad.grad(_det_only, jit=jit)(A), cof, atol=1e-12)
    np.testing.assert_allclose(srcgrad.jacfwd(_det_only, jit=jit)(A), cof, atol=1e-12)
