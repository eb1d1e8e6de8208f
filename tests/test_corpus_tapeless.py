"""Correctness corpus for undo steps that need no tape (srcgrad/transforms/inverses.py).

Two rules let the forward sweep record less:

- integer counters (`idx = 0` resets, `idx += 1` steps) are undone by
  arithmetic (`idx = idx - 1`); only their resets record what they overwrite;
- writes back of array elements (`qx[j] = _tape_qx_at2.pop()`) that no later
  backward read can observe are dropped with their tapes.

Each function here is a shape where a wrong rule would give a wrong gradient:
counters reset inside loops and read as indices, stepped by other constants
and in branches, read after their loop (not a counter then), float
accumulators that look like counters; scratch arrays written in place and
read between groups of writes, across `while` loops and through helpers.
Every function is checked against central finite differences and autograd
(where it can trace it), with numba and without; `test_counters_need_no_tape`
checks the generated code took the rule where it should.
"""

import numpy as np
import pytest

from gradcheck import check_corpus, check_corpus_case


def _rng(seed):
    return np.random.default_rng(seed)


def triangle_counter(L, x):
    """A packed lower triangle read through a counter reset per row block (gmm's Q)."""
    n = x.shape[0]
    total = 0.0
    for r in range(3):
        v = x * (r + 1.0)
        idx = 0
        for i in range(n):
            for j in range(i + 1, n):
                v[j] += L[idx] * v[i]
                idx += 1
        total += np.sum(v * v)
    return total


def while_counter(x, budget):
    """A counter bound at the top and stepped in a `while` loop with a data-dependent end."""
    k = 0
    s = 0.0
    acc = 0.0
    while s < budget and k < x.shape[0]:
        s += x[k] * x[k]
        acc += np.sin(x[k]) * s
        k += 1
    return acc + k * s


def branch_steps(x, w):
    """Steps of different sizes in both arms of a branch; the counter indexes w."""
    j = 4
    acc = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            j -= 2
        else:
            j = j + 3
        acc += w[j] * x[i] * x[i]
    return acc


def counter_read_after(x):
    """A counter reset in a loop and read after it: not a counter (mentioned outside)."""
    total = 0.0
    for r in range(2):
        idx = 0
        for i in range(x.shape[0]):
            total += x[idx] * x[i] * (r + 1.0)
            idx += 1
    return total * idx


def two_resets(x):
    """Resets to different constants, one of them in a branch."""
    total = 0.0
    for r in range(3):
        c = 1
        if x[r] > 0.0:
            c = 2
        for i in range(x.shape[0] - 2):
            total += np.cos(x[c]) * x[i] * (c + 0.5)
            c += 1
            c = c - 1
    return total


def float_accumulator(x):
    """A float stepped like a counter: `t += 0.1` is not exact, so it keeps its tape."""
    t = 0.0
    acc = 0.0
    for i in range(x.shape[0]):
        t += 0.1
        acc += np.sin(t * x[i])
    return acc


def _packed_step(v, L, n):
    idx = 0
    for i in range(n):
        for j in range(i + 1, n):
            v[j] += L[idx] * v[i]
            idx += 1
    return v


def counter_in_helper(L, x):
    """The triangle through an inlined helper, twice per call."""
    n = x.shape[0]
    total = 0.0
    for r in range(2):
        v = _packed_step(x * (r + 1.0), L, n)
        w = _packed_step(np.tanh(v), L, n)
        total += np.sum(w * v)
    return total


def scratch_read_between(x, a):
    """A scratch array written in two groups with a read between them."""
    n = x.shape[0]
    total = 0.0
    for step in range(3):
        buf = np.zeros(n)
        for j in range(n):
            buf[j] = np.sin(x[j] * a + step)
        total += np.sum(buf * buf)
        for j in range(n):
            buf[j] = buf[j] * buf[j] + a
        total += np.sum(np.cos(buf))
    return total


def scratch_in_while(x, a):
    """Writes into a scratch array inside a `while` loop, read after the loop each step."""
    n = x.shape[0]
    total = 0.0
    for step in range(2):
        buf = x * a
        j = 1
        while j < n:
            buf[j] = buf[j] * buf[j - 1] + 0.5
            j += 1
        total += np.sum(np.sin(buf))
    return total


def scratch_read_each_iteration(x, a):
    """A scratch array read in the same loop that writes it (the writes back are live)."""
    n = x.shape[0]
    total = 0.0
    for step in range(2):
        buf = x * (a + step)
        for j in range(1, n):
            buf[j] = np.sin(buf[j - 1]) * buf[j]
            total += buf[j] * buf[j - 1]
    return total


def _case(func, make_args, wrt=0):
    return pytest.param(func, make_args, wrt, id=func.__name__)


CASES = [
    _case(triangle_counter, lambda: (_rng(1).normal(size=10) * 0.3, _rng(2).normal(size=5)),
          (0, 1)),
    # running sums 0.49, 0.85, 1.49, 1.58, 2.27 pass the budget 2.0 after five steps
    _case(while_counter, lambda: (np.array([0.7, -0.6, 0.8, 0.3, -0.83, 0.5, 0.9]), 2.0)),
    _case(branch_steps, lambda: (np.array([0.5, -0.7, 0.9, 1.1, -0.4, 0.3]),
                                 _rng(3).normal(size=14)), (0, 1)),
    _case(counter_read_after, lambda: (_rng(4).normal(size=5),)),
    _case(two_resets, lambda: (np.array([0.6, -0.8, 0.4, 1.2, -0.3, 0.7]),)),
    _case(float_accumulator, lambda: (_rng(5).normal(size=6),)),
    _case(counter_in_helper, lambda: (_rng(6).normal(size=6) * 0.3, _rng(7).normal(size=4)),
          (0, 1)),
    _case(scratch_read_between, lambda: (_rng(8).normal(size=5), 0.7), (0, 1)),
    _case(scratch_in_while, lambda: (_rng(9).normal(size=5) * 0.5, 0.9), (0, 1)),
    _case(scratch_read_each_iteration, lambda: (_rng(10).normal(size=5), 0.8), (0, 1)),
]


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func, make_args, wrt", CASES)
def test_gradient(func, make_args, wrt, jit):
    check_corpus_case(func, make_args, wrt, jit)


@pytest.mark.parametrize("func, undo", [
    (triangle_counter, "idx = idx - 1"), (while_counter, "k = k - 1"),
    (branch_steps, "j = j + 2"), (two_resets, "c = c - 1"), (counter_in_helper, "- 1")])
def test_counters_need_no_tape(func, undo):
    import srcgrad

    source = srcgrad.value_and_grad(func, wrt=0, jit=True).source
    assert undo in source, source


def test_dead_writes_back_leave_no_tape():
    import srcgrad

    source = srcgrad.value_and_grad(triangle_counter, wrt=(0, 1), jit=True).source
    assert "_tape_v_at" not in source, source
    live = srcgrad.value_and_grad(scratch_read_between, wrt=(0, 1), jit=True).source
    assert "buf[j] = _tape_buf_at" in live, live  # the second group's: read in between


def test_corpus_size_and_distinct_names():
    check_corpus(CASES, globals(), minimum=10)
