"""Correctness corpus for reads passed to helpers and adjoints accumulated into their slots.

Three rewrites (issue 13): an inlined helper's parameter passed `a[...]` is bound
to the read itself (frontend/inline.py, `bound_to_read`), so the backward sweep
reads it again instead of recording a copy per call; a name bound to a helper's
result takes the result's last operation (`g = 1.0 / _t5`, not a copy of a
temporary: the backward sweep recomputes or records g itself); and the adjoint of a read
`v = a[I]` that starts as zeros and is only added into accumulates straight
into `_adj_a[I]` (transforms/targets.py). Wrong rules would show where the same
slot is read twice, where the array read from is written later, where a helper
rebinds its parameter, where the index is an integer array or a mask (a copy,
not a view), where the index changes between the read and its adjoint, or where
the adjoint of the whole array is read meanwhile; so each function has one of
those, with ba's shape (a helper on a row, a slice of it passed on) among them.
Each is checked against central finite differences and autograd, numba on and
off.
"""

import numpy as np
import pytest

from gradcheck import check_corpus, check_corpus_case


def _rng(seed):
    return np.random.default_rng(seed)


def _rotate(rot, pt):
    s = rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2]
    if s != 0.0:
        t = np.sqrt(s)
        r0 = pt[0] * np.cos(t) + rot[1] * pt[2] / t
        r1 = pt[1] * np.sin(t) - rot[0] * pt[2]
    else:
        r0 = pt[0] + rot[1]
        r1 = pt[1] - rot[0]
    return r0, r1


def _project(cam, x, w):
    xo = x - cam[3:6]
    r0, r1 = _rotate(cam[0:3], xo)
    return w * (r0 * cam[6] + r1 * cam[7] * cam[7])


def rows_through_helpers(cams, X, w):
    """ba's shape: a helper on rows of arrays nothing writes, passing a slice on."""
    total = 0.0
    for i in range(w.shape[0]):
        total += _project(cams[i], X[i], w[i]) ** 2
    return total


def _pair(a, b):
    return a[0] * b[1] - a[1] * b[0] + a[2] * a[2]


def same_row_twice(P):
    """One row passed twice and read directly: three adjoints add into the same slots."""
    total = 0.0
    for i in range(P.shape[0]):
        total += _pair(P[i], P[i]) * P[i, 1] + _pair(P[i], P[(i + 1) % P.shape[0]])
    return total


def _scaled(r, c):
    r = r * c  # the helper rebinds its parameter: bound as before
    return r[0] + r[1] * r[2]


def helper_rebinds(P):
    total = 0.0
    for i in range(P.shape[0]):
        total += _scaled(P[i], 1.0 + i) * P[i, 0]
    return total


def _first_two(r):
    return r[0] * r[1]


def written_after_read(P):
    """The rows read are overwritten afterwards (the helper gets a copy)."""
    Q = P.copy()
    total = 0.0
    for i in range(Q.shape[0]):
        total += _first_two(Q[i])
        Q[i] = Q[i] * 0.5 + np.sin(Q[(i + 1) % Q.shape[0]])
        total += _first_two(Q[i]) * 2.0
    return total


def gathered_rows(P, idx):
    """An integer-array index: the read is a copy, so its adjoint gets a buffer of its own."""
    total = 0.0
    for k in range(3):
        rows = P[idx]
        total += rows[0, 1] * rows[1, 0] * (k + 1.0) + rows[0, 0]
    return total


def masked_read(x):
    m = x > 0.0
    total = 0.0
    for k in range(2):
        v = x[m]
        total += v[0] * v[1] * (k + 2.0)
    return total


def index_moves(P):
    """The index of the read changes later in the iteration."""
    total = 0.0
    for i in range(P.shape[0]):
        j = i
        r = P[j]
        total += r[0] * r[2] + r[1]
        j = (i + 2) % P.shape[0]
        total += P[j, 1] * r[1]
    return total


def whole_adjoint_read(P):
    """A row's adjoint is built while the whole array's adjoint is also used."""
    total = 0.0
    for i in range(P.shape[0]):
        r = P[i]
        total += r[0] * r[1] + np.sum(P * r[2])
    return total


def tuple_slices(A):
    """A slice inside a tuple index, element reads of it, and a while loop's counter."""
    total = 0.0
    i = 0
    while i < A.shape[0]:
        v = A[i, 1:4]
        total += v[0] * v[2] - v[1] * v[1]
        i += 1
    return total


def rows_of_rows(T):
    """A read of a read: rows of a matrix read from a 3-d array."""
    total = 0.0
    for i in range(T.shape[0]):
        M = T[i]
        for j in range(M.shape[0]):
            r = M[j]
            total += r[0] * r[1] * (i + j + 1.0)
    return total


def _gate(z):
    return 1.0 / (1.0 + np.exp(-z))


def results_named(x, W):
    """lstm's shape: names bound to a helper's result (its last operation, after C3),
    read by the backward sweep of later statements."""
    h = x * 0.5
    total = 0.0
    for t in range(3):
        g = _gate(W[t] * h)
        u = _gate(h + g)
        h = g * u + h * (1.0 - g)
        total += np.sum(h * g)
    return total


def _step(v):
    return v * 0.9 + np.sin(v)


def result_reads_target(x):
    """`v = f(v)` in a loop: the result's operation reads the name it is bound to."""
    v = x * 1.0
    total = 0.0
    for t in range(3):
        v = _step(v)
        total += np.sum(v * v) * (t + 1.0)
    return total


def _case(func, make_args, wrt=0):
    return pytest.param(func, make_args, wrt, id=func.__name__)


def _cams(seed, n):
    cams = _rng(seed).normal(scale=0.3, size=(n, 8))
    return cams


CASES = [
    _case(rows_through_helpers, lambda: (_cams(1, 4), _rng(2).normal(size=(4, 3)),
                                         _rng(3).uniform(0.5, 1.5, size=4)), (0, 1, 2)),
    _case(same_row_twice, lambda: (_rng(4).normal(size=(4, 3)),)),
    _case(helper_rebinds, lambda: (_rng(5).normal(size=(3, 3)),)),
    _case(written_after_read, lambda: (_rng(6).normal(size=(4, 2)),)),
    _case(gathered_rows, lambda: (_rng(7).normal(size=(4, 2)), np.array([2, 2, 0]))),
    _case(masked_read, lambda: (np.array([0.5, -1.0, 1.5, 0.7]),)),
    _case(index_moves, lambda: (_rng(8).normal(size=(5, 3)),)),
    _case(whole_adjoint_read, lambda: (_rng(9).normal(size=(3, 3)),)),
    _case(tuple_slices, lambda: (_rng(10).normal(size=(3, 5)),)),
    _case(rows_of_rows, lambda: (_rng(11).normal(size=(2, 3, 2)),)),
    _case(results_named, lambda: (_rng(12).normal(size=3), _rng(13).normal(size=(3, 3))),
          (0, 1)),
    _case(result_reads_target, lambda: (_rng(14).normal(size=4),)),
]


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func, make_args, wrt", CASES)
def test_gradient(func, make_args, wrt, jit):
    check_corpus_case(func, make_args, wrt, jit)


def test_forms():
    """What the rewrites produce, and where they stay away."""
    import srcgrad

    source = srcgrad.grad(rows_through_helpers, wrt=(0, 1, 2), jit=False).source
    assert "cam___project1 = cams[i]" in source and "_tape_cam" not in source, source
    assert "_adj_cam___project1 = _adj_cams[i]" in source, source
    backward = _backward(srcgrad.grad(helper_rebinds, jit=False).source)
    assert "_adj_r___scaled1 = _adj_P[i]" not in backward, backward
    backward = _backward(srcgrad.grad(gathered_rows, wrt=0, jit=False).source)
    assert "= _adj_P[idx]" not in backward, backward
    backward = _backward(srcgrad.grad(tuple_slices, jit=False).source)
    assert "_adj_v = _adj_A[i, 1:4]" in backward, backward
    source = srcgrad.grad(results_named, wrt=(0, 1), jit=False).source
    assert "g = 1.0 / " in source and "_tape_g" not in source, source


def _backward(source):
    return source[source.index("# backward sweep"):]


def test_corpus_size_and_distinct_names():
    check_corpus(CASES, globals(), minimum=12)
