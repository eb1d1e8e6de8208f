"""Property tests (hypothesis) for the helpers every gradient relies on.

`unbroadcast(g, x)` must undo NumPy broadcasting exactly, for any pair of
broadcast-compatible shapes, in plain Python and compiled by numba alike; a
reduction's cotangent put back by `expand_to` must match the transpose of the
reduction (a dot-product identity).
"""
import numba
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from srcgrad.runtime import expand_to, unbroadcast

unbroadcast_jit = numba.njit(lambda g, x: unbroadcast(g, x))
expand_to_jit = numba.njit(lambda g, x, axis: expand_to(g, x, axis, False))


@st.composite
def broadcast_pairs(draw):
    """(shape of x, shape of the broadcast result g) with x broadcastable to g."""
    out = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    ndim = draw(st.integers(min_value=0, max_value=len(out)))
    x = tuple(1 if draw(st.booleans()) else n for n in out[len(out) - ndim:])
    return x, out


@settings(max_examples=60, deadline=None)
@given(broadcast_pairs(), st.integers(0, 2**31 - 1))
def test_unbroadcast_is_the_transpose_of_broadcasting(shapes, seed):
    xshape, gshape = shapes
    rng = np.random.default_rng(seed)
    x = rng.normal(size=xshape) if xshape else float(rng.normal())
    g = rng.normal(size=gshape)
    v = rng.normal(size=xshape) if xshape else float(rng.normal())
    # <g, broadcast(v)> == <unbroadcast(g), v> for every v: the adjoint identity.
    lhs = float(np.sum(g * np.broadcast_to(v, gshape)))
    for helper in (unbroadcast, unbroadcast_jit):
        back = helper(g, x)
        assert np.shape(back) == np.shape(x)
        assert isinstance(back, float) == (not xshape)
        np.testing.assert_allclose(float(np.sum(np.asarray(back) * v)), lhs, rtol=1e-10, atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), st.data())
def test_expand_to_is_the_transpose_of_sum_over_an_axis(shape, data):
    axis = data.draw(st.integers(min_value=-len(shape), max_value=len(shape) - 1))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31 - 1)))
    x = rng.normal(size=shape)
    g = rng.normal(size=np.sum(x, axis=axis).shape)
    v = rng.normal(size=shape)
    lhs = float(np.sum(g * np.sum(v, axis=axis)))
    for back in (expand_to(g, x, axis, False), expand_to_jit(g, x, axis) if g.ndim else None):
        if back is None:
            continue
        assert back.shape == x.shape
        np.testing.assert_allclose(float(np.sum(back * v)), lhs, rtol=1e-10, atol=1e-10)
