"""Correctness corpus for the fusion pass (srcgrad/transforms/fuse.py).

The pass moves single-use elementwise temporaries into their readers, and
drops an `unbroadcast` that a chain of products hands to another
`unbroadcast`. The second step is where a wrong rule would give a wrong
gradient, and only when shapes really broadcast: the functions here chain
products, quotients and signs through operands stretched along leading axes
((m,) against (n, m)), along size-1 axes ((n, 1) against (n, m)), scalars
against arrays and arrays against 0-d values, with sums and non-linear
functions between, in loops and in helpers. Each is checked against central
finite differences and autograd, numba on and off.
"""

import numpy as np
import pytest

from gradcheck import check_corpus, check_corpus_case


def _rng(seed):
    return np.random.default_rng(seed)


def column_times_matrix(a, B, c):
    """(n, 1) * (n, m), then a row (m,) divides: both unbroadcasts sum."""
    t = a * B
    u = t / c
    v = -u * 0.5
    return np.sum(np.sin(v) * B)


def leading_axis_chain(w, X):
    """(m,) against (n, m) through a chain of products and a quotient."""
    s = 2.0 * w * X
    r = s / (1.0 + w * w)
    return np.sum(np.tanh(r) * X)


def scalar_scale_chain(k, x):
    """A scalar parameter scaling an array: every unbroadcast of k sums to a number."""
    y = k * x
    z = y * k / 3.0
    q = -(z * x)
    return np.sum(np.exp(q * 0.1))


def zero_d_against_vector(x, y):
    """np.sum(x) (a number) times an array, then back."""
    m = np.sum(x) * y
    p = m * y / 2.0
    return np.sum(p * p) + np.sum(m)


def _scaled(v, s):
    return v * s / 2.0


def chain_through_helper(a, B):
    """The chain crosses an inlined helper's boundary."""
    t = _scaled(B, a)
    u = _scaled(t, a * a)
    return np.sum(np.cos(u))


def euler_broadcast(x0, rates, steps):
    """A loop whose update broadcasts a column of rates over a matrix state."""
    y = x0
    for step in range(steps):
        d = rates * y
        y = y + 0.05 * d / (1.0 + 0.1 * step)
    return np.sum(y * y)


def mixed_sum_chain(a, B):
    """A cotangent used twice (not fused) between fused chains."""
    t = a * B
    u = t * 3.0
    w = np.sin(u) + u * 0.5
    return np.sum(w * t)


def stretched_constant_chain(a, w, B):
    """Single-use chains whose inner unbroadcast really sums: (n, 1) and (m,) operands
    scaled by constants, then stretched over (n, m)."""
    t = (a * 2.0) * B
    u = -(w / 3.0) * B
    return np.sum(np.sin(t) * np.cos(u))


def _case(func, make_args, wrt=0):
    return pytest.param(func, make_args, wrt, id=func.__name__)


CASES = [
    _case(column_times_matrix, lambda: (_rng(1).normal(size=(3, 1)), _rng(2).normal(size=(3, 4)),
                                        1.5 + _rng(3).uniform(size=4)), (0, 1, 2)),
    _case(leading_axis_chain, lambda: (_rng(4).normal(size=4), _rng(5).normal(size=(3, 4))),
          (0, 1)),
    _case(scalar_scale_chain, lambda: (0.7, _rng(6).normal(size=5)), (0, 1)),
    _case(zero_d_against_vector, lambda: (_rng(7).normal(size=3), _rng(8).normal(size=4)),
          (0, 1)),
    _case(chain_through_helper, lambda: (_rng(9).normal(size=(2, 1)), _rng(10).normal(size=(2, 3))),
          (0, 1)),
    _case(euler_broadcast, lambda: (_rng(11).normal(size=(3, 4)), _rng(12).normal(size=(3, 1)), 6),
          (0, 1)),
    _case(stretched_constant_chain,
          lambda: (_rng(15).normal(size=(3, 1)), _rng(16).normal(size=4),
                   _rng(17).normal(size=(3, 4))), (0, 1, 2)),
    _case(mixed_sum_chain, lambda: (_rng(13).normal(size=3), _rng(14).normal(size=(2, 3))), (0, 1)),
]


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func, make_args, wrt", CASES)
def test_gradient(func, make_args, wrt, jit):
    check_corpus_case(func, make_args, wrt, jit)


def test_chains_are_fused():
    import srcgrad

    source = srcgrad.grad(column_times_matrix, wrt=(0, 1, 2), jit=False).source
    forward = source[:source.index("# backward sweep")]
    assert "v = -u * 0.5" in forward, source  # user names stay; their temporaries fuse
    assert "unbroadcast(unbroadcast(" not in source, source
    source = srcgrad.grad(stretched_constant_chain, wrt=(0, 1, 2), jit=False).source
    backward = source[source.index("# backward sweep"):]
    assert "_adj_a = unbroadcast(" in backward and "* 2.0, a)" in backward, source


def test_corpus_size_and_distinct_names():
    check_corpus(CASES, globals(), minimum=8)
