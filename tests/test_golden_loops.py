"""Golden source of a loop that calls a helper: what issue 13's changes made of it.

- The helper's parameter `x` is only read, so the inlined copy reads the
  caller's `x` itself: no `x__rate1 = x`, no tape for it, and the copy's adjoint
  accumulates straight into `_adj_x`.
- `n = x.shape[0]` is recomputed in the backward sweep instead of recorded.
- The carried `y` is recorded before each overwrite into an array indexed by
  the step (`record_at(_tape_y, step, y)`).
- An adjoint later updated in place starts as `zeros_plus(v, e)`: the sum
  `zeros_like(v) + e` in a buffer of its own, in one pass; `zeros_plus(v, e,
  True)` when e is a new array already (owned.py), kept instead of copied.
If a deliberate change to the generated code breaks it, review the new text and
update EXPECTED.
"""
import golden_model
import numpy as np
import pytest

import srcgrad
from gradcheck import check_gradient

EXPECTED = """\
def euler__grad(x, s):
    # y = np.ones(x.shape[0])   (golden_model.py:22)
    _t2 = x.shape[0]
    y = np.ones(_t2)
    # for step in range(s):   (golden_model.py:23)
    _tape_y = tape_array(y, trip_count(0, s, 1))
    for step in range(s):
        # n = x.shape[0]   (golden_model.py:14)
        _t3 = x.shape
        n__rate1 = _t3[0]
        # z = np.empty(n)   (golden_model.py:15)
        z__rate1 = np.empty(n__rate1)
        # for i in range(n):   (golden_model.py:16)
        for i__rate1 in range(n__rate1):
            # z[i] = x[i] * y[i]   (golden_model.py:17)
            _t4 = x[i__rate1]
            _t5 = y[i__rate1]
            _t6 = _t4 * _t5
            z__rate1[i__rate1] = _t6
        # y = y + 0.1 * rate(x, y)   (golden_model.py:24)
        _t8 = y + 0.1 * z__rate1
        record_at(_tape_y, step, y)
        y = _t8
    # return np.sum(y)   (golden_model.py:25)
    _t9 = np.sum(y)
    # backward sweep
    _adj__t9 = seed_like(_t9)
    # grad of: return np.sum(y)   (golden_model.py:25)
    _adj_y = zeros_plus(y, expand_to(_adj__t9, y, None, False))
    # grad of: for step in range(s):   (golden_model.py:23)
    _adj_x = zeros_like(x)
    for step in range(s - 1, -1, -1):
        # grad of: y = y + 0.1 * rate(x, y)   (golden_model.py:24)
        _adj__t8 = _adj_y
        y = _tape_y[step]
        _adj_y = zeros_plus(y, unbroadcast(_adj__t8, y))
        _adj_z__rate1 = zeros_plus(z__rate1, unbroadcast(_adj__t8 * 0.1,
            z__rate1), True)
        # grad of: for i in range(n):   (golden_model.py:16)
        _t3 = x.shape
        n__rate1 = _t3[0]
        for i__rate1 in range(n__rate1 - 1, -1, -1):
            # grad of: z[i] = x[i] * y[i]   (golden_model.py:17)
            _adj__t6 = unbroadcast(snapshot(_adj_z__rate1[i__rate1]), _t6)
            _adj_z__rate1[i__rate1] = zeros_like(_adj_z__rate1[i__rate1])
            _t5 = y[i__rate1]
            _adj__t4 = unbroadcast(_adj__t6 * _t5, _t4)
            _t4 = x[i__rate1]
            _adj_y[i__rate1] += unbroadcast(_adj__t6 * _t4, _t5)
            _adj_x[i__rate1] += _adj__t4
    return _t9, (_adj_x,)
"""


def test_loop_with_a_helper_is_stable_and_readable():
    source = srcgrad.grad(golden_model.euler, jit=False).source
    assert source[source.index("def euler__grad"):] == EXPECTED


@pytest.mark.parametrize("jit", [False, True])
def test_loop_with_a_helper_gradient(jit):
    check_gradient(golden_model.euler, (np.array([0.3, -1.2, 0.7]), 5), 0, jit=jit)
