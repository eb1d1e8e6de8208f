"""Correctness corpus for owned adjoint buffers (srcgrad/transforms/owned.py).

The pass drops the reset `_adj_m[S] = zeros_like(...)` of a slice write's
adjoint when nothing reads those slots again, reads a slot's cotangent as a
view instead of a copy when nothing writes into the buffer while the view
lives, and keeps a new sum as the adjoint's buffer instead of copying it.
Wrong rules would show where slots overlap, where the adjoint is read after
the reset, or where a buffer lives on across iterations; so the functions
write complementary and overlapping slices of scratch arrays made per
iteration (1-d and 2-d, bounds that go negative, like det's minors; the
benchmark's recursive det itself is checked by test_bench_smoke.py), read the
scratch array before the writes, keep it across iterations. Each is checked
against central finite differences and autograd, numba on and off.
"""

import numpy as np
import pytest

from gradcheck import check_corpus, check_corpus_case


def _rng(seed):
    return np.random.default_rng(seed)


def complementary_halves(x, s):
    """m[:j] and m[j:] of a fresh array per step: both resets are dead."""
    total = 0.0
    for j in range(s):
        m = np.zeros(x.shape[0])
        m[:j] = x[:j] * 2.0
        m[j:] = np.sin(x[j:])
        total = total + np.sum(m * m) * (j + 1.0)
    return total


def negative_bounds(x):
    """The split point runs negative: `:k` and `k:` still cover the array once."""
    total = 0.0
    for j in range(x.shape[0]):
        k = j - 3
        m = np.zeros(x.shape[0])
        m[:k] = x[:k] * x[:k]
        m[k:] = np.cos(x[k:])
        total = total + np.sum(m * np.arange(x.shape[0]))
    return total


def overlapping_slices(x):
    """m[:k + 2] and m[k:] overlap: the first write's slots are partly overwritten."""
    total = 0.0
    k = 2
    for j in range(3):
        m = np.zeros(x.shape[0])
        m[:k + 2] = x[:k + 2] * (3.0 + j)
        m[k:] = np.tanh(x[k:] * (j + 1.0))
        total = total + np.sum(m * m)
    return total


def read_before_writes(x):
    """The scratch array is read before its slice writes: the backward sweep adds that
    read's cotangent after the writes' resets, which stay."""
    total = 0.0
    k = 2
    for j in range(1, x.shape[0]):
        m = x * 1.5
        y = np.sum(np.sin(m))
        m[:k] = x[:k] * x[j]
        m[k:] = (2.0 + j) * x[k:]
        total = total + y * np.sum(m * m)
    return total


def kept_across_steps(x, s):
    """One scratch array for the whole loop, its slices rewritten at every step."""
    m = np.zeros(x.shape[0])
    total = 0.0
    k = 2
    for j in range(s):
        m[:k] = m[:k] * 0.5 + x[:k] * j
        m[k:] = np.exp(0.1 * x[k:]) + m[k:] * 0.25
        total = total + np.sum(m * x)
    return total


def column_minors(A):
    """det's minors: column blocks `:, :j` and `:, j:` of a matrix made per column."""
    n = A.shape[0]
    total = 0.0
    for j in range(n):
        minor = np.zeros((n - 1, n - 1))
        minor[:, :j] = A[1:, :j]
        minor[:, j:] = A[1:, j + 1:]
        total = total + A[0, j] * np.sum(minor * minor) * (j + 1.0)
    return total


def while_scratch(x):
    """A while loop's body makes the scratch array (the rules' loop case for `while`)."""
    total = 0.0
    k = 2
    j = 0
    while j < 4:
        m = np.zeros(x.shape[0])
        m[:k] = np.cos(x[:k] * j)
        m[k:] = x[k:] * (j + 1.0)
        total = total + np.sum(m * x)
        j += 1
    return total


def sum_then_rows(x, W):
    """An adjoint that starts as a new product and is then updated row by row."""
    y = W * x
    total = 0.0
    for i in range(W.shape[0]):
        y[i] = np.sin(y[i]) * (i + 1.0)
        total = total + np.sum(y[i] * x)
    return total + np.sum(y * y)


def _case(func, make_args, wrt=0):
    return pytest.param(func, make_args, wrt, id=func.__name__)


CASES = [
    _case(complementary_halves, lambda: (_rng(1).normal(size=6), 5)),
    _case(negative_bounds, lambda: (_rng(2).normal(size=6),)),
    _case(overlapping_slices, lambda: (_rng(3).normal(size=6),)),
    _case(read_before_writes, lambda: (_rng(4).normal(size=5),)),
    _case(kept_across_steps, lambda: (_rng(5).normal(size=5), 4)),
    _case(column_minors, lambda: (_rng(6).normal(size=(4, 4)),)),
    _case(while_scratch, lambda: (_rng(7).normal(size=5),)),
    _case(sum_then_rows, lambda: (_rng(8).normal(size=3), _rng(9).normal(size=(4, 3))), (0, 1)),
]


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func, make_args, wrt", CASES)
def test_gradient(func, make_args, wrt, jit):
    check_corpus_case(func, make_args, wrt, jit)


def test_dead_resets_and_copies_are_gone():
    """The forms the rules produce (and keep) in the generated code (in the forward sweep
    where a loop is reversed in place: transforms/immediate.py)."""
    import srcgrad

    source = srcgrad.grad(column_minors, jit=False).source
    assert "zeros_like(_adj_minor[" not in source and "snapshot(_adj_minor" not in source
    assert "unbroadcast(_adj_minor[:, j:]" in source, source
    backward = _backward(srcgrad.grad(while_scratch, jit=False).source)
    assert "zeros_like(_adj_m[" not in backward and "snapshot(_adj_m" not in backward
    source = srcgrad.grad(overlapping_slices, jit=False).source
    assert "zeros_like(_adj_m[" in source, source  # an overlapped slot is reset
    backward = _backward(srcgrad.grad(read_before_writes, jit=False).source)
    assert "snapshot(_adj_m[" in backward, backward
    backward = _backward(srcgrad.grad(sum_then_rows, wrt=(0, 1), jit=False).source)
    assert ", True)" in backward, backward  # zeros_plus(y, <a new product>, True)


def _backward(source):
    return source[source.index("# backward sweep"):]


def test_corpus_size_and_distinct_names():
    check_corpus(CASES, globals(), minimum=8)
