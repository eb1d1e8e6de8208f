"""Temporaries assigned in a branch of a counted loop (transforms/record.py,
`_record_in_branch`): recorded into an array by iteration number, made at the first
iteration that runs the branch, and loaded where the mirrored branch starts in the
backward sweep. Where a stack's undo would restore a value the load would not (the
temporary is read outside its branch, or in a second branch), it stays on a stack.

Each function is checked against central finite differences, numba on and off, with
branches that skip the first iterations, alternate, never run, and nest."""
import numpy as np
import pytest

import srcgrad
from gradcheck import check_gradient


def rotate_some(x, c):
    """ba's rodrigues shape: sqrt/cos/sin taped only where the branch runs. The sum is
    squared, so the loop keeps its backward loop and tapes (a plain sum's loop is reversed
    in place, transforms/immediate.py, with no tape)."""
    total = 0.0
    for i in range(x.shape[0]):
        s = x[i] * x[i] + c
        if x[i] > 0.2:
            theta = np.sqrt(s)
            cs = np.cos(theta)
            sn = np.sin(theta)
            r = cs * x[i] + sn * theta
        else:
            r = s * 0.5
        total += r * r
    return total * total


def nested_branches(x, n):
    y = 0.0
    for i in range(n):
        for j in range(x.shape[0]):
            v = x[j] * (i + 1.0)
            if j % 2 == 1:
                if v < 1.5:
                    t = np.tanh(v)
                    y += t * t * x[j]
                else:
                    u = np.exp(-v)
                    y += u * x[0]
    return y


def read_in_two_branches(x):
    """t is read in a second branch: its undo sits in a different block; a stack."""
    acc = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            t = np.sin(x[i]) * 2.0
        if x[i] > 0.0:
            acc += t * x[i]
    return acc


def array_in_branch(x, w):
    acc = np.zeros_like(w)
    for i in range(x.shape[0]):
        if i % 3 == 2:
            a = np.sin(w * x[i])
            acc = acc + a * a
    return np.sum(acc)


def never_runs(x):
    acc = 0.0
    for i in range(x.shape[0]):
        if x[i] > 100.0:
            t = np.cos(x[i])
            acc += t * x[i]
        acc += x[i] * 0.5
    return acc


X = np.array([0.1, 0.9, -0.4, 0.6, 0.05, 1.3, 0.3])
CASES = [
    (rotate_some, (X, 0.2), (0, 1)),
    (nested_branches, (np.array([0.3, 0.7, 0.2, 1.1]), 3), 0),
    (read_in_two_branches, (X,), 0),
    (array_in_branch, (X, np.linspace(0.2, 1.0, 4)), (0, 1)),
    (never_runs, (X,), 0),
]


@pytest.mark.parametrize("jit", [True, False])
@pytest.mark.parametrize("func, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradient(func, args, wrt, jit):
    check_gradient(func, args, wrt, jit=jit)


def _taping(func, wrt):
    source = srcgrad.grad(func, wrt=wrt, jit=False).source
    return source, [line.strip() for line in source.splitlines() if ".append(" in line]


def test_branch_temporaries_go_into_arrays_by_iteration():
    source, stacks = _taping(rotate_some, (0, 1))
    assert stacks == ["_tape_r.append(r)"] * 2  # r: assigned in both branches, a stack
    for var in ("theta", "cs", "sn"):
        assert f"record_at(_tape_{var}, i, {var})" in source
        assert f"{var} = _tape_{var}[i]" in source


def test_a_temporary_read_in_another_branch_stays_on_a_stack():
    _, stacks = _taping(read_in_two_branches, 0)
    assert stacks == ["_tape_t.append(t)"]


def test_empty_loop_and_a_branch_that_never_runs():
    g = srcgrad.grad(never_runs)
    np.testing.assert_allclose(g(X), np.full(X.shape, 0.5))
    np.testing.assert_allclose(g(np.zeros(0)), np.zeros(0))
