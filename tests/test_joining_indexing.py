"""End-to-end gradients of joining (np.concatenate, np.stack, np.hstack, np.vstack),
arrays built from scalars (np.array([[a, b], [c, d]])), and reads through integer-array
and boolean-mask indices (x[idx] with repeated indices, x[mask], A[:, idx]).

Each corpus function is checked with ``check_gradient`` (finite differences and
autograd), with and without numba. The runtime helpers' numba twins are checked
against their NumPy twins, and the unsupported forms (a list variable or a nested
display passed to np.concatenate, a write through an integer-array index) against
their error messages.
"""
from pathlib import Path

import numba
import numpy as np
import pytest

import srcgrad
from gradcheck import assert_close, check_corpus, check_gradient, numerical_grad
from srcgrad.runtime import (add_at, concatenate_grad, hstack_grad, stack_grad,
                             vstack_grad)

WEIGHTS = np.array([0.5, -1.25, 2.0, 0.75, 1.5])
GRID = np.array([[1.0, -0.5], [0.25, 2.0], [-1.5, 0.75]])


def _rng(seed):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------------------
# joining
# ---------------------------------------------------------------------------

def concat_scaled(a, b):
    c = np.concatenate([a, b * 2.0])
    return np.sum(c * c * WEIGHTS)


def concat_columns(A, B):
    C = np.concatenate((A, np.sin(B)), axis=1)
    return np.sum(np.tanh(C) * C)


def stack_pairs(x, y):
    S = np.stack((x, y * y), axis=1)
    return np.sum(S ** 3 * GRID)


def hstack_vstack(u, v):
    H = np.hstack((u, v))
    V = np.vstack([u, v * u])
    return np.sum(H * H) + np.sum(V[1] * V[0] * GRID[:, 0])


def roll_by_joining(x):
    for i in range(3):
        x = np.concatenate((x[1:], np.sin(x[:1])))
    return np.sum(x * WEIGHTS[:4])


# ---------------------------------------------------------------------------
# arrays from scalars
# ---------------------------------------------------------------------------

def matrix_from_scalars(a, b, c, d):
    M = np.array([[a, b], [c * d, d]])
    return np.sum(M @ M)


def vector_from_elements(x, s):
    v = np.array((x[0] * x[1], np.sin(x[2]), s, 1.0))
    return np.sum(v * v * WEIGHTS[:4])


# ---------------------------------------------------------------------------
# integer-array and boolean-mask reads
# ---------------------------------------------------------------------------

def gather_repeated(x, idx):
    y = x[idx]
    return np.sum(y * y * WEIGHTS)


def masked_parts(x, mask):
    return np.sum(x[mask] ** 3) + np.sum(np.exp(x[~mask]))


def gather_rows_columns(A, idx):
    return np.sum(np.sin(A[:, idx]) * A[idx, :].T)


def gather_in_loop(x, idx, k):
    s = x[k] * 2.0
    for i in range(len(idx)):
        j = idx[i]
        s = s + x[j] * x[j]
    return s


IDX = np.array([0, 3, 3, -1, 1])  # repeated and negative indices


def _case(func, make_args, wrt=0):
    return pytest.param(func, make_args, wrt, id=func.__name__)


CASES = [
    _case(concat_scaled, lambda: (_rng(1).normal(size=2), _rng(2).normal(size=3)), (0, 1)),
    _case(concat_columns, lambda: (_rng(3).normal(size=(2, 3)), _rng(4).normal(size=(2, 2))),
          (0, 1)),
    _case(stack_pairs, lambda: (_rng(5).normal(size=3), _rng(6).normal(size=3)), (0, 1)),
    _case(hstack_vstack, lambda: (_rng(7).normal(size=3), _rng(8).normal(size=3)), (0, 1)),
    _case(roll_by_joining, lambda: (_rng(9).normal(size=4),)),
    _case(matrix_from_scalars, lambda: (0.3, -1.2, 0.7, 1.1), (0, 1, 2, 3)),
    _case(vector_from_elements, lambda: (_rng(10).normal(size=3), 0.4), (0, 1)),
    _case(gather_repeated, lambda: (_rng(11).normal(size=4), IDX)),
    _case(masked_parts, lambda: (_rng(12).normal(size=5),
                                 np.array([True, False, True, True, False]))),
    _case(gather_rows_columns, lambda: (_rng(13).normal(size=(4, 4)), np.array([2, 0, 2]))),
    _case(gather_in_loop, lambda: (_rng(14).normal(size=4), IDX, 2)),
]


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func, make_args, wrt", CASES)
def test_gradient(func, make_args, wrt, jit):
    check_gradient(func, make_args(), wrt=wrt, jit=jit)


def test_corpus_size_and_distinct_names():
    check_corpus(CASES, globals(), minimum=10)


def test_generated_code_reads_well():
    source = srcgrad.grad(concat_scaled, wrt=(0, 1), jit=False).source
    assert "c = np.concatenate((a, _t1))" in source  # the display stays, as a tuple
    assert "concatenate_grad(_adj_c, (a, _t1), 0)" in source
    source = srcgrad.grad(matrix_from_scalars, wrt=(0, 1, 2, 3), jit=False).source
    assert "M = np.array(((a, b), (c * d, d)))" in source  # c * d fused into its one reader
    assert "_adj_M[1][0]" in source
    source = srcgrad.grad(gather_rows_columns, jit=False).source
    assert "add_at(_adj_A, (slice(None), idx)," in source
    source = srcgrad.grad(roll_by_joining, jit=False).source
    assert "_adj_x[1:] +=" in source  # a slice stays an in-place update


# ---------------------------------------------------------------------------
# runtime helpers: NumPy twin vs numba twin
# ---------------------------------------------------------------------------

@numba.njit
def _nb_add_at(adj, index, g):
    add_at(adj, index, g)
    return adj


def _py_add_at(adj, index, g):
    add_at(adj, index, g)
    return adj


_R = _rng(99)
ADD_AT_CASES = [
    (np.zeros(5), np.array([0, 1, 1, -1]), _R.normal(size=4)),
    (np.zeros(5), np.array([True, False, True, False, True]), _R.normal(size=3)),
    (np.zeros(5), 2, 1.5),
    (np.zeros((4, 3)), np.array([0, 3, 3]), _R.normal(size=(3, 3))),
    (np.zeros((4, 3)), (slice(None), np.array([0, 2, 2])), _R.normal(size=(4, 3))),
    (np.zeros((4, 3)), (slice(1, 3), np.array([True, False, True])), _R.normal(size=(2, 2))),
]


@pytest.mark.parametrize("adj, index, g", ADD_AT_CASES, ids=[str(k) for k in range(6)])
def test_add_at_twins_agree_with_np_add_at(adj, index, g):
    expected = adj.copy()
    np.add.at(expected, index, g)
    np.testing.assert_allclose(_py_add_at(adj.copy(), index, g), expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(_nb_add_at(adj.copy(), index, g), expected, rtol=0, atol=1e-15)


@numba.njit
def _nb_joins(g2, a, b, g3, u, v, g1, gv):
    return (concatenate_grad(g2, (a, b), -1), concatenate_grad(g1, (u, v), None),
            stack_grad(g3, (a, a), 1), hstack_grad(g1, (u, v)), vstack_grad(gv, (u, u)))


def test_joining_twins_agree():
    a, b = _R.normal(size=(2, 3)), _R.normal(size=(2, 2))
    u, v = _R.normal(size=3), _R.normal(size=2)
    args = (_R.normal(size=(2, 5)), a, b, _R.normal(size=(2, 2, 3)), u, v, _R.normal(size=5),
            _R.normal(size=(2, 3)))
    nb = _nb_joins(*args)
    py = _nb_joins.py_func(*args)
    for got, want in zip(nb, py):
        for x, y in zip(got, want):
            assert x.shape == y.shape
            np.testing.assert_allclose(x, y, rtol=0, atol=0)


# ---------------------------------------------------------------------------
# unsupported forms are clear errors at the user's line
# ---------------------------------------------------------------------------

_LINES = Path(__file__).read_text().splitlines()


def _line(marker):
    return next(n for n, text in enumerate(_LINES, 1) if text.rstrip().endswith(f"# {marker}"))


def err_list_variable(a, b):
    parts = [a, b]
    c = np.concatenate(parts)  # E:list-variable
    return np.sum(c)


def err_tuple_variable(a, b):
    parts = (a, b)
    c = np.concatenate(parts)  # E:tuple-variable
    return np.sum(c)


def err_nested_display(a, b):
    c = np.concatenate([[a, b], a])  # E:nested-display
    return np.sum(c)


def err_index_write(x, v, idx):
    y = x * 1.0
    y[idx] = v  # E:index-write
    return np.sum(y * y)


def err_grow_in_loop(x):
    y = x[:1]
    for i in range(3):
        y = np.concatenate((y, x * y[-1]))
    return np.sum(y * y)


def test_list_variable_passed_to_concatenate():
    with pytest.raises(srcgrad.SrcgradSyntaxError) as info:
        srcgrad.grad(err_list_variable, jit=False)
    assert "passing the list variable 'parts' to np.concatenate()" in str(info.value)
    assert info.value.lineno == _line("E:list-variable")


def test_tuple_variable_passed_to_concatenate():
    with pytest.raises(srcgrad.SrcgradError) as info:
        srcgrad.grad(err_tuple_variable, jit=False)
    assert "np.concatenate(parts)" in str(info.value) and "display" in str(info.value)
    assert info.value.loc.lineno == _line("E:tuple-variable")


def test_nested_display_passed_to_concatenate():
    with pytest.raises(srcgrad.SrcgradSyntaxError) as info:
        srcgrad.grad(err_nested_display, jit=False)
    assert "nested list or tuple display inside np.concatenate()" in str(info.value)
    assert info.value.lineno == _line("E:nested-display")


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
def test_write_through_an_index_array_is_a_clear_error(jit):
    x, v = np.array([0.5, -1.0, 2.0, 1.5]), np.array([1.0, 2.0])
    g = srcgrad.grad(err_index_write, wrt=(0, 1), jit=jit)
    with pytest.raises(srcgrad.SrcgradError) as info:
        g(x, v, np.array([0, 0]))
    message = str(info.value)
    assert f"{Path(__file__).name}:{_line('E:index-write')}" in message
    assert "integer-array index" in message
    # a boolean mask selects each element once: writing through it is differentiated
    mask = np.array([True, False, False, True])
    got = srcgrad.grad(err_index_write, wrt=(0, 1), jit=jit)(x, v, mask)
    assert_close(got, (2.0 * x * ~mask, 2.0 * v))


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
def test_array_grown_in_a_loop(jit):
    # its shape changes from one iteration to the next: it goes on a stack (shape_classes.py),
    # where it was refused before ("a value it records changes shape ... grows in a loop")
    x = np.array([0.5, -0.3])
    got = srcgrad.grad(err_grow_in_loop, jit=jit)(x)
    assert_close(got, numerical_grad(err_grow_in_loop, (x,), 0))


def concatenate_flat(a, B):
    c = np.concatenate((a, B), axis=None)
    return np.sum(c * c)


def test_numba_failing_inside_its_own_typing_falls_back():
    # numba's typing of concatenate(axis=None) raises a bare AssertionError, not a NumbaError
    g = srcgrad.grad(concatenate_flat, wrt=(0, 1))
    with pytest.warns(srcgrad.SrcgradWarning, match="numba could not compile"):
        da, dB = g(np.ones(2), np.full((2, 2), 2.0))
    assert g.backend == "python"
    np.testing.assert_allclose(da, 2.0)
    np.testing.assert_allclose(dB, 4.0)
