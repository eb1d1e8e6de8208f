"""srcgrad.Variable under Python's in-place operators and NumPy's `out=`: TensorFlow's
semantics (`v += d` makes a new value, the Variable is unchanged), with a warning that
names .assign; NumPy writing into a Variable is a clear TypeError (it recursed)."""
import numpy as np
import pytest

import srcgrad


def test_in_place_operators_rebind_to_a_new_value_and_leave_the_variable():
    v = srcgrad.Variable(np.ones(2), name="w")
    kept = v
    with pytest.warns(srcgrad.SrcgradWarning, match=r"`\+=` on w:0 .*\.assign"):
        v += 1.0
    np.testing.assert_array_equal(v, [2.0, 2.0])
    assert isinstance(v, np.ndarray)
    np.testing.assert_array_equal(kept.numpy(), [1.0, 1.0])
    s = srcgrad.Variable(2.0)
    with pytest.warns(srcgrad.SrcgradWarning, match=r"`\*=`"):
        s *= 3
    assert s == 6.0


def test_numpy_out_into_a_variable_is_a_type_error():
    v = srcgrad.Variable(np.ones(2))
    with pytest.raises(TypeError, match=r"cannot write into a srcgrad.Variable .*assign"):
        np.add(np.ones(2), 1.0, out=v)
