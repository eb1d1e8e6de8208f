"""Tapes of nested counted loops (transforms/iterations.py).

A value recorded once per iteration of an inner counted loop goes into one array
preallocated for all iterations of the chain of loops, indexed by the flattened number
`i * k + j`, when every inner loop's bounds stay the same across the outer loops; else it
goes on a stack as before. Each shape below is checked against central finite differences
(and autograd where it can trace), numba on and off, and the generated code is checked to
take the path it should: recorded arrays of an invariant chain (`record_at`), a stack where
an inner bound moves with the outer loop or a loop sits in a branch.
"""

import numpy as np
import pytest

import srcgrad
from gradcheck import check_corpus_case


def triangle_inner_invariant(x, w):
    # x: (n, d), w: (k, d); qx is fresh per (i, c) and written in the triangle loop
    total = 0.0
    for i in range(x.shape[0]):
        for c in range(w.shape[0]):
            qx = np.exp(w[c]) * (x[i] - w[c])
            for a in range(x.shape[1]):
                for b in range(a + 1, x.shape[1]):
                    qx[b] += 0.3 * qx[a]
            total += np.sum(np.sin(qx) * qx)
    return total


def carried_through_nested_sin(x, w):
    # a carried scalar and a carried array updated through sin in a double loop
    s = 0.5
    v = x[0] * 1.0
    for i in range(1, x.shape[0], 2):
        for c in range(2, w.shape[0] + 2):
            s = np.sin(s * w[c - 2, 0] + np.sum(v))
            v = np.tanh(v * s + x[i])
    return s + np.sum(v * v)


def three_levels_with_counter(x, w):
    total = 0.0
    for i in range(x.shape[0]):
        idx = 0
        for c in range(w.shape[0]):
            for e in range(x.shape[1]):
                t = x[i, e] * w[c, e] + idx * 0.01
                total += t * t * np.cos(t)
                idx += 1
    return total


def inner_bound_moves(x, w):
    # the inner loop's trip count changes with i: its tape stays a stack (the sum is
    # squared: a plain sum's pair loop is reversed in place, transforms/immediate.py)
    total = 0.0
    for i in range(x.shape[0]):
        for c in range(i, x.shape[0]):
            r = x[i] - x[c] * w[0]
            total += np.sum(np.sin(r) * r)
    return total * total


def inner_loop_in_branch(x, w):
    total = 0.0
    for i in range(x.shape[0]):
        if x[i, 0] > 0.0:
            for c in range(w.shape[0]):
                r = np.cos(x[i] * w[c])
                total += np.sum(r * r)
        else:
            total += np.sum(x[i] ** 3)
    return total


def empty_inner_loop(x, w):
    total = 0.0
    for i in range(x.shape[0]):
        for c in range(w.shape[0] - 10):
            r = np.cos(x[i] * w[c])
            total += np.sum(r)
        total += np.sum(np.sin(x[i]) * w[0])
    return total


def _args():
    rng = np.random.default_rng(113)
    x = rng.normal(size=(5, 3))
    x[:, 0] = np.array([0.7, -0.4, 0.9, -1.1, 0.3])  # clear of inner_loop_in_branch's test
    return x, rng.normal(size=(3, 3)) * 0.5


CASES = [triangle_inner_invariant, carried_through_nested_sin, three_levels_with_counter,
         inner_bound_moves, inner_loop_in_branch, empty_inner_loop]


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func", CASES)
def test_gradient(func, jit):
    check_corpus_case(func, _args, (0, 1), jit)


def test_flattened_where_invariant():
    source = srcgrad.grad(triangle_inner_invariant).source
    assert "record_at(_tape_qx, i * _s4 + c, qx)" in source  # _s4 = w.shape[0], bound per i
    assert "_tape_qx = []" not in source
    assert "record_at(_tape__t9, (i * _s4 + c) * _s6 + e, _t9)" in srcgrad.grad(
        three_levels_with_counter).source
    source = srcgrad.grad(carried_through_nested_sin).source  # values about to be overwritten
    assert "_tape_s = tape_array(s, trip_count(1, _s2, 2) *" in source


def test_stack_where_a_bound_moves_or_a_branch_runs():
    assert "_tape__t7 = []" in srcgrad.grad(inner_bound_moves).source
    assert "_tape_r = []" in srcgrad.grad(inner_loop_in_branch).source
