"""End-to-end gradients of NumPy reductions with `axis`/`keepdims`, shape functions,
cumsum, clip and the two-argument functions logaddexp, hypot, arctan2.

Each corpus function is module-level straight-line code, written the way a user
would write it, and is checked with ``check_gradient`` (finite differences and
autograd) with jit=False and, where numba compiles the primal calls, jit=True.
Where numba cannot compile a primal form (np.mean/max/min/prod with an axis,
keepdims=True, np.squeeze, np.clip of a Python float), srcgrad must warn with
`SrcgradWarning`, fall back to Python and still give the right gradient.

The file also checks the new runtime helpers' plain-NumPy twins against their
numba twins, the keepdims variants of the reduction rules directly against
finite differences, and that ties in max/min along an axis share the gradient.
"""

import math

import numba
import numpy as np
import pytest

import srcgrad
from gradcheck import check_fallback_gradient, assert_close, check_corpus, check_gradient, numerical_grad
from srcgrad.rules import REGISTRY
from srcgrad.runtime import (axis_extremum_share, cumsum_grad, diff_grad, expand_to, flatten_copy,
                             clip_mask,
                             reshape_like, untranspose)

WEIGHTS = np.array([0.5, -1.25, 2.0, 0.75])


def _rng(seed):
    return np.random.default_rng(seed)


def _distinct(seed, *shape):
    """Values with no ties anywhere (pairwise gaps of at least 0.2)."""
    n = int(np.prod(shape))
    base = np.linspace(-2.0, 2.0, n) * n / 10.0
    return _rng(seed).permutation(base).reshape(shape)


def _away_from(seed, shape, points, gap=0.15):
    """Uniform values in (-2, 2), none within `gap` of any of `points`."""
    x = _rng(seed).uniform(-2.0, 2.0, size=shape)
    for p in points:
        near = np.abs(x - p) < gap
        x = np.where(near, p + np.sign(x - p + 1e-12) * 2 * gap, x)
    return x


# ---------------------------------------------------------------------------
# reductions with axis / keepdims
# ---------------------------------------------------------------------------

def sum_axis0(A):
    s = np.sum(np.sin(A), axis=0)
    return np.sum(s * s)


def sum_axis_negative_method(A):
    r = A.sum(axis=-1)
    return np.sum(np.exp(0.5 * r))


def sum_axis_positional(A):
    return np.sum(np.sum(A * A, 1) * np.arange(3.0))


def sum_axis_vector(x):
    return np.sum(x * x, axis=0) + 2.0 * np.sum(x)


def sum_axis_3d(T):
    return np.sum(np.sum(T, axis=1) ** 2)


def mean_axis(A):
    m = np.mean(A, axis=1)
    return np.sum(m ** 3)


def max_axis(A):
    return np.sum(np.max(A, axis=1) ** 2)


def min_axis_method(A):
    return np.sum(A.min(axis=0) * np.arange(1.0, 5.0))


def amax_axis_negative(T):
    return np.sum(np.sin(np.amax(T, axis=-1)))


def prod_axis(A):
    return np.sum(np.prod(A, axis=0))


def mean_keepdims_centered(A):
    c = A - np.mean(A, axis=0, keepdims=True)
    return np.sum(c * c)


def softmax_rows_keepdims(A):
    z = A - np.max(A, axis=1, keepdims=True)
    e = np.exp(z)
    p = e / np.sum(e, axis=1, keepdims=True)
    return np.sum(p * WEIGHTS)


def sum_keepdims_whole(A):
    return np.sum(np.sum(A, keepdims=True) * A)


# ---------------------------------------------------------------------------
# shape functions
# ---------------------------------------------------------------------------

def reshape_tuple(x, W):
    M = np.reshape(x, (2, 3))
    return np.sum(np.tanh(M @ W))


def reshape_method_args(x):
    M = x.reshape(3, 2)
    return np.sum(M[:, 0] * M[:, 1])


def reshape_method_tuple_minus_one(A):
    v = A.reshape((-1,))
    return np.sum(v * np.arange(12.0))


def ravel_flatten(A):
    a = np.ravel(A)
    b = A.flatten()
    c = A.ravel()
    return np.sum(a * b) + np.sum(np.sin(c))


def transpose_axes(T):
    U = np.transpose(T, (2, 0, 1))
    return np.sum(U * U * np.arange(4.0).reshape((4, 1, 1)))


def transpose_method_args(T):
    U = T.transpose(1, 2, 0)
    return np.sum(np.cos(U) * np.arange(2.0))


def swapaxes_3d(T):
    U = np.swapaxes(T, 0, 2)
    return np.sum(np.sum(U, axis=0) ** 2)


def expand_dims_outer(x, y):
    P = np.expand_dims(x, 1) * np.expand_dims(y, 0)
    return np.sum(np.sin(P))


def squeeze_column(A):
    v = np.squeeze(A)
    return np.sum(v * v * np.arange(3.0))


# ---------------------------------------------------------------------------
# cumsum, clip, two-argument functions
# ---------------------------------------------------------------------------

def cumsum_flat(x):
    return np.sum(np.cumsum(x) ** 2)


def cumsum_axis(A):
    return np.sum(np.sin(np.cumsum(A, axis=1)))


def cumsum_matrix_flattened(A):
    return np.sum(np.cumsum(A) * np.arange(12.0))


def clip_scalar_bounds(x):
    return np.sum(np.clip(x, -0.5, 0.8) ** 2)


def clip_array_bounds(x, lo, hi):
    return np.sum(np.clip(x, lo, hi) * WEIGHTS)


def clip_method_one_sided(x):
    return np.sum(x.clip(-1.0, 1.0) + np.clip(x, 0.0, None) ** 2)


def clip_scalar_input(s):
    return np.clip(s, -0.5, 0.5) * s


def logaddexp_pair(x, y):
    return np.sum(np.logaddexp(x, y) * WEIGHTS)


def hypot_pair(x, y):
    return np.sum(np.hypot(x, 2.0 * y))


def arctan2_angles(y, x):
    return np.sum(np.arctan2(y, x) ** 2)


def math_hypot_atan2(a, b):
    return math.hypot(a, b) * math.atan2(a, b) + math.atan2(b, 1.5)


def constants_mixed_in(x):
    """Array constructors carry no gradient; the values built from x do."""
    n = x.shape[0]
    grid = np.linspace(0.0, 1.0, n) + np.arange(n) * 0.5
    lift = np.full(n, 0.25) + np.ones(n) - np.zeros(n)
    M = np.eye(n) * 2.0 + np.outer(x, grid)
    return np.sum(M @ (x * lift)) + np.sum(grid * x)


# "numba": numba compiles it, checked with jit=True and jit=False.
# "fallback": numba cannot compile a primal; jit=True must warn and fall back.
# "numba-fd": like "numba", but checked against finite differences only (autograd does
#             not differentiate np.clip with respect to its bounds).
# var, std, diff (found missing by a new user, 2026-12-07)

def var_std_axes(A):
    return np.sum(np.var(A, axis=0)) + np.sum(A.std(axis=1, ddof=1) ** 2) + np.std(A)


def layer_norm_rows(A):
    mu = np.mean(A, axis=-1, keepdims=True)
    sd = np.std(A, axis=-1, keepdims=True)
    return np.sum(np.tanh((A - mu) / sd))


def diff_chain(x):
    return np.sum(np.diff(x) ** 2) + np.sum(np.diff(x, n=2) ** 3)


def diff_rows_axis0(A):  # numba's np.diff has no axis: plain Python runs
    return np.sum(np.sin(np.diff(A, axis=0)))


def _case(func, make_args, wrt=0, mode="numba"):
    return pytest.param(func, make_args, wrt, mode, id=func.__name__)


CASES = [
    _case(sum_axis0, lambda: (_rng(1).normal(size=(3, 4)),)),
    _case(sum_axis_negative_method, lambda: (_rng(2).normal(size=(3, 4)),)),
    _case(sum_axis_positional, lambda: (_rng(3).normal(size=(3, 4)),)),
    _case(sum_axis_vector, lambda: (_rng(4).normal(size=5),)),
    _case(sum_axis_3d, lambda: (_rng(5).normal(size=(2, 3, 4)),)),
    _case(mean_axis, lambda: (_rng(6).normal(size=(3, 4)),)),  # compiled since issue 15
    _case(max_axis, lambda: (_distinct(7, 3, 4),)),  # compiled since issue 15
    _case(min_axis_method, lambda: (_distinct(8, 3, 4),)),  # compiled since issue 15
    _case(amax_axis_negative, lambda: (_distinct(9, 2, 3, 4),)),  # compiled since issue 15
    _case(prod_axis, lambda: (_rng(10).uniform(0.5, 1.5, size=(3, 4)),)),  # compiled since issue 15
    _case(mean_keepdims_centered, lambda: (_rng(11).normal(size=(3, 4)),)),  # compiled since issue 15
    _case(softmax_rows_keepdims, lambda: (_distinct(12, 3, 4),)),  # compiled since issue 15
    _case(sum_keepdims_whole, lambda: (_rng(13).normal(size=(2, 3)),)),  # compiled since issue 15
    _case(reshape_tuple, lambda: (_rng(14).normal(size=6), _rng(15).normal(size=(3, 2))),
          (0, 1)),
    _case(reshape_method_args, lambda: (_rng(16).normal(size=6),)),
    _case(reshape_method_tuple_minus_one, lambda: (_rng(17).normal(size=(3, 4)),)),
    _case(ravel_flatten, lambda: (_rng(18).normal(size=(3, 4)),)),
    _case(transpose_axes, lambda: (_rng(19).normal(size=(2, 3, 4)),)),
    _case(transpose_method_args, lambda: (_rng(20).normal(size=(2, 3, 4)),)),
    _case(swapaxes_3d, lambda: (_rng(21).normal(size=(2, 3, 4)),)),
    _case(expand_dims_outer, lambda: (_rng(22).normal(size=3), _rng(23).normal(size=4)),
          (0, 1)),
    _case(squeeze_column, lambda: (_rng(24).normal(size=(3, 1)),), mode="fallback"),
    _case(cumsum_flat, lambda: (_rng(25).normal(size=5),)),
    _case(cumsum_axis, lambda: (_rng(26).normal(size=(3, 4)),)),
    _case(cumsum_matrix_flattened, lambda: (_rng(27).normal(size=(3, 4)),)),
    _case(clip_scalar_bounds, lambda: (_away_from(28, 8, (-0.5, 0.8)),)),
    _case(clip_array_bounds,
          lambda: (np.array([-1.5, -0.2, 0.3, 1.7]), np.array([-1.0, -0.6, 0.6, -1.0]),
                   np.array([1.0, 0.5, 1.2, 1.2])),
          (0, 1, 2), mode="numba-fd"),
    _case(clip_method_one_sided, lambda: (_away_from(29, 8, (-1.0, 0.0, 1.0)),)),
    _case(clip_scalar_input, lambda: (0.3,), mode="fallback"),
    _case(logaddexp_pair, lambda: (_rng(30).normal(size=4), _rng(31).normal(size=4)), (0, 1)),
    _case(hypot_pair, lambda: (_rng(32).normal(size=5), _rng(33).normal(size=5)), (0, 1)),
    _case(arctan2_angles,
          lambda: (_rng(34).normal(size=5), _rng(35).uniform(0.3, 2.0, size=5)), (0, 1)),
    _case(math_hypot_atan2, lambda: (0.7, -1.3), (0, 1)),
    _case(constants_mixed_in, lambda: (_rng(36).normal(size=4),)),
    _case(var_std_axes, lambda: (_rng(37).normal(size=(3, 4)),)),
    _case(layer_norm_rows, lambda: (_rng(38).normal(size=(2, 5)),)),
    _case(diff_chain, lambda: (_rng(39).normal(size=7),)),
    _case(diff_rows_axis0, lambda: (_rng(40).normal(size=(4, 3)),), mode="fallback"),
]


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func, make_args, wrt, mode", CASES)
def test_gradient(func, make_args, wrt, mode, jit):
    if jit and mode == "fallback":
        check_fallback_gradient(func, make_args(), wrt)
        return
    if mode == "numba-fd":
        args = make_args()
        g = srcgrad.grad(func, wrt=wrt, jit=jit)
        got = g(*args)
        assert g.backend == ("numba" if jit else "python")
        assert_close(got, numerical_grad(func, args, wrt), rtol=1e-5, atol=1e-7,
                     what=f"{func.__name__} vs finite differences")
        return
    check_gradient(func, make_args(), wrt=wrt, jit=jit)


def test_corpus_size_and_distinct_names():
    check_corpus(CASES, globals(), minimum=20)


# ---------------------------------------------------------------------------
# ties, keepdims rule variants, method spellings
# ---------------------------------------------------------------------------

def _max_rows(A):
    return np.sum(np.max(A, axis=1) * np.array([1.0, 2.0]))


def _min_cols(A):
    return np.sum(A.min(axis=0))


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
def test_ties_along_an_axis_share_the_gradient(jit):
    A = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, -1.0]])
    d = srcgrad.grad(_max_rows, jit=jit)
    g = d(A)
    assert d.backend == ("numba" if jit else "python")  # compiled since issue 15
    np.testing.assert_allclose(g, [[0.0, 0.5, 0.5, 0.0], [2 / 3, 2 / 3, 2 / 3, 0.0]])
    B = np.array([[1.0, 0.0], [1.0, 2.0], [4.0, 0.0]])
    np.testing.assert_allclose(srcgrad.grad(_min_cols, jit=False)(B),
                               [[0.5, 0.5], [0.5, 0.0], [0.0, 0.5]])


@pytest.mark.parametrize("primal", [np.sum, np.mean, np.max, np.min, np.prod])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_keepdims_rules_match_finite_differences(primal, axis):
    rng = _rng(99)
    a = _distinct(100, 3, 4) * 0.2 + 1.5  # positive and without ties
    rule = REGISTRY[primal]
    ans = primal(a, axis=axis, keepdims=True)
    g = rng.normal(size=ans.shape)
    ct = rule.vjp(g, ans, a, axis, keepdims=True)
    assert isinstance(ct, np.ndarray) and ct.shape == a.shape and ct.dtype == np.float64
    v = rng.normal(size=a.shape)
    eps = 1e-6
    numeric = np.sum(g * (primal(a + eps * v, axis=axis, keepdims=True)
                          - primal(a - eps * v, axis=axis, keepdims=True))) / (2 * eps)
    assert abs(numeric - np.sum(ct * v)) <= 1e-6 * (np.sum(np.abs(ct * v)) + 1e-3)


def test_reshape_with_unsupported_order_is_a_clear_error():
    def f(A):
        return np.sum(np.reshape(A, (3, 4), order="F") ** 2)
    with pytest.raises(srcgrad.SrcgradError, match="np.reshape"):
        srcgrad.grad(f, jit=False)(np.ones((4, 3)))


# ---------------------------------------------------------------------------
# runtime helpers: plain-NumPy twin vs numba twin
# ---------------------------------------------------------------------------

_R = np.random.default_rng(4321)
_NB = {
    "expand_to": numba.njit(lambda g, x, axis, keepdims: expand_to(g, x, axis, keepdims)),
    "axis_extremum_share": numba.njit(
        lambda x, ans, axis, keepdims: axis_extremum_share(x, ans, axis, keepdims)),
    "reshape_like": numba.njit(lambda g, x: reshape_like(g, x)),
    "untranspose": numba.njit(lambda g, x, axes: untranspose(g, x, axes)),
    "cumsum_grad": numba.njit(lambda g, x, axis: cumsum_grad(g, x, axis)),
    "clip_mask": numba.njit(lambda a, lo, hi: clip_mask(a, lo, hi)),
    "flatten_copy": numba.njit(lambda a: flatten_copy(a)),
    "diff_grad": numba.njit(lambda g, a, n, axis: diff_grad(g, a, n, axis)),
}
_PY = {"expand_to": expand_to, "axis_extremum_share": axis_extremum_share,
       "reshape_like": reshape_like, "untranspose": untranspose, "cumsum_grad": cumsum_grad,
       "clip_mask": clip_mask, "flatten_copy": flatten_copy, "diff_grad": diff_grad}
_T = _R.normal(size=(2, 3, 4))
_TIES = np.array([[1.0, 3.0, 3.0], [0.5, 0.5, -1.0]])

TWIN_CASES = [
    ("expand_to", (_R.normal(size=(3,)), _R.normal(size=(2, 3)), 0, False), "axis0"),
    ("expand_to", (_R.normal(size=(2, 3)), _T, -1, False), "axis-1"),
    ("expand_to", (_R.normal(size=(2, 1, 4)), _T, 1, True), "keepdims"),
    ("expand_to", (0.5, _R.normal(size=(2, 3)), None, False), "whole"),
    ("expand_to", (0.5, _R.normal(size=(4,)), 0, False), "vector-axis"),
    ("expand_to", (0.5, 1.5, None, False), "scalar"),
    ("axis_extremum_share", (_TIES, np.max(_TIES, axis=1), 1, False), "ties-rows"),
    ("axis_extremum_share", (_TIES, np.min(_TIES, axis=0), 0, False), "cols"),
    ("axis_extremum_share", (_TIES, 3.0, None, False), "whole"),
    ("diff_grad", (_R.normal(size=(3, 4)), _R.normal(size=(3, 5)), 1, -1), "rows"),
    ("diff_grad", (_R.normal(size=(2,)), _R.normal(size=(4,)), 2, -1), "twice"),
    ("reshape_like", (_R.normal(size=(3, 4)), _R.normal(size=(12,))), "2d->1d"),
    ("reshape_like", (_R.normal(size=(4, 3)).T, _R.normal(size=(2, 6))), "noncontiguous"),
    ("reshape_like", (0.5, _R.normal(size=(1, 1))), "scalar->array"),
    ("untranspose", (_R.normal(size=(4, 2, 3)), _T, (2, 0, 1)), "axes"),
    ("untranspose", (_R.normal(size=(4, 2, 3)), _T, (-1, 0, -2)), "negative-axes"),
    ("untranspose", (_R.normal(size=(3, 2)), _R.normal(size=(2, 3)), None), "no-axes"),
    ("cumsum_grad", (_R.normal(size=(6,)), _R.normal(size=(2, 3)), None), "flat"),
    ("cumsum_grad", (_R.normal(size=(2, 3, 4)), _T, 1), "axis1"),
    ("cumsum_grad", (_R.normal(size=(2, 3, 4)), _T, -1), "axis-1"),
    ("cumsum_grad", (_R.normal(size=(1,)), 0.5, None), "scalar"),
    ("clip_mask", (_R.normal(size=(5,)), -0.3, 0.4), "array"),
    ("clip_mask", (_R.normal(size=(5,)), None, 0.4), "no-lo"),
    ("clip_mask", (_R.normal(size=(5,)), -0.3, None), "no-hi"),
    ("clip_mask", (0.2, -0.3, 0.4), "scalar-in"),
    ("clip_mask", (0.5, -0.3, 0.4), "scalar-out"),
    ("clip_mask", (0.5, _R.normal(size=(3,)), None), "array-bound"),
    ("flatten_copy", (_T.transpose(1, 0, 2),), "noncontiguous"),
]


def _assert_same(py, nb, where):
    assert isinstance(py, np.ndarray) == isinstance(nb, np.ndarray), (
        f"{where}: python gives {type(py).__name__}, numba gives {type(nb).__name__}")
    if isinstance(py, np.ndarray):
        assert py.shape == nb.shape and py.dtype == nb.dtype, where
    else:
        assert isinstance(py, float) and isinstance(nb, float), where
    np.testing.assert_allclose(py, nb, rtol=1e-12, atol=1e-12, err_msg=where)


@pytest.mark.parametrize("helper, args", [pytest.param(h, a, id=f"{h}-{i}")
                                          for h, a, i in TWIN_CASES])
def test_runtime_twins_agree(helper, args):
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    py = _PY[helper](*args)
    nb = _NB[helper](*args)
    for b, a in zip(before, args):
        assert np.array_equal(b, a), "the helper mutated its input"
    _assert_same(py, nb, helper)
