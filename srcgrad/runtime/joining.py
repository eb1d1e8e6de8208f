"""Cotangents of joining functions (concatenate, stack, hstack, vstack).

Each helper takes the result's cotangent `g` and the tuple of joined values
and returns a tuple with one cotangent per value, shaped like it (a float for
a scalar): the slab of `g` the value was copied into. The reverse pass gives
element k of that tuple to element k of the call's display
(`np.concatenate((a, b))`).

The numba twins are generated per tuple length (numba indexes a tuple of
differently typed arrays only by constants). numba joins arrays of one rank
only, so they handle arrays; scalars (np.hstack((x, 1.0))) compile in neither
the primal nor here, and the whole gradient runs as Python.
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from ..errors import SrcgradError
from ._types import is_none as _is_none

# The backward sweep reads the joined values' shapes as they are then; they differ from the
# forward sweep's only when an array changes shape from one loop iteration to the next.
CHANGED_SHAPES = ("srcgrad cannot differentiate this join: the values it joins have changed "
                  "shape since it ran, as when an array grows in a loop "
                  "(y = np.concatenate((y, z))); preallocate the array (np.zeros) and write "
                  "into it instead")


def _slabs(g, widths, axis, likes):
    """Consecutive slabs of `g` along `axis`, `widths[k]` wide, each shaped like `likes[k]`."""
    g = np.asarray(g)
    if sum(widths) != g.shape[axis]:
        raise SrcgradError(CHANGED_SHAPES)
    out, lo = [], 0
    for width, like in zip(widths, likes):
        piece = np.take(g, np.arange(lo, lo + width), axis=axis)  # a copy
        lo += width
        if piece.size != np.size(like):
            raise SrcgradError(CHANGED_SHAPES)
        out.append(float(piece.reshape(())) if np.ndim(like) == 0
                   else piece.reshape(np.shape(like)))
    return tuple(out)


def concatenate_grad(g, arrays, axis):
    if axis is None:  # np.concatenate(..., axis=None) joins the flattened values
        return _slabs(np.ravel(g), [np.size(a) for a in arrays], 0, arrays)
    ax = axis % np.ndim(g)
    return _slabs(g, [np.shape(a)[ax] for a in arrays], ax, arrays)


def stack_grad(g, arrays, axis):
    return _slabs(g, [1] * len(arrays), axis % np.ndim(g), arrays)


def hstack_grad(g, arrays):
    ax = 0 if np.ndim(g) == 1 else 1  # hstack joins 1-d values along axis 0, others along 1
    return _slabs(g, [np.shape(np.atleast_1d(a))[ax] for a in arrays], ax, arrays)


def vstack_grad(g, arrays):
    return _slabs(g, [np.shape(np.atleast_2d(a))[0] for a in arrays], 0, arrays)


# --- numba twins ----------------------------------------------------------------------

@register_jitable
def _slab(g, ax, lo, hi, shape):
    """g[..., lo:hi, ...] (along axis `ax`) as a new C-contiguous array of `shape`."""
    gs = g.shape
    pre, post = 1, 1
    for d in range(ax):
        pre *= gs[d]
    for d in range(ax + 1, g.ndim):
        post *= gs[d]
    size = 1
    for n in shape:
        size *= n
    if (hi - lo) * pre * post != size or hi > gs[ax]:
        raise SrcgradError(CHANGED_SHAPES)
    g3 = np.ascontiguousarray(g).reshape((pre, gs[ax], post))
    return np.ascontiguousarray(g3[:, lo:hi, :]).reshape(shape)


def _generated(arrays, params, axis_line, width, source="g"):
    """An implementation for a tuple of len(arrays) arrays; `width(k)` is element k's width.

    The slabs are cut from `source` (an expression of g) along axis `axis_line`.
    """
    if not isinstance(arrays, types.BaseTuple) or not all(
            isinstance(t, types.Array) for t in arrays):
        return None
    lines = [f"def impl({params}):", f"    src = {source}", f"    ax = {axis_line}", "    lo = 0"]
    for k in range(len(arrays)):
        lines += [f"    w{k} = {width(k)}",
                  f"    p{k} = _slab(src, ax, lo, lo + w{k}, arrays[{k}].shape)",
                  f"    lo += w{k}"]
    lines += ["    if lo != src.shape[ax]:", "        raise SrcgradError(CHANGED_SHAPES)",
              f"    return ({''.join(f'p{k}, ' for k in range(len(arrays)))})"]
    scope = {"_slab": _slab, "np": np, "SrcgradError": SrcgradError,
             "CHANGED_SHAPES": CHANGED_SHAPES}
    exec("\n".join(lines), scope)  # noqa: S102  (generated from the tuple's length only)
    return scope["impl"]


@overload(concatenate_grad)
def _concatenate_grad(g, arrays, axis):
    if _is_none(axis):  # the values were flattened and joined
        return _generated(arrays, "g, arrays, axis", "0", lambda k: f"arrays[{k}].size",
                          source="np.ascontiguousarray(g).reshape(g.size)")
    return _generated(arrays, "g, arrays, axis", "axis + g.ndim if axis < 0 else axis",
                      lambda k: f"arrays[{k}].shape[ax]")


@overload(stack_grad)
def _stack_grad(g, arrays, axis):
    return _generated(arrays, "g, arrays, axis", "axis + g.ndim if axis < 0 else axis",
                      lambda k: "1")


@overload(hstack_grad)
def _hstack_grad(g, arrays):
    return _generated(arrays, "g, arrays", "0 if g.ndim == 1 else 1",
                      lambda k: f"arrays[{k}].shape[ax]")


@overload(vstack_grad)
def _vstack_grad(g, arrays):
    if not isinstance(arrays, types.BaseTuple):
        return None
    return _generated(arrays, "g, arrays", "0",
                      lambda k: "1" if arrays[k].ndim < 2 else f"arrays[{k}].shape[0]")
