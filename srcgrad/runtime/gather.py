"""Adjoints of reads with integer-array and boolean-mask indices (gathers).

The adjoint of `y = x[idx]` adds `g` into `_adj_x` at `idx`. With an integer
array, `_adj_x[idx] += g` would drop repeated indices (NumPy writes each slot
once), so the reverse pass calls `add_at(_adj_x, idx, g)` instead whenever the
index may hold an array: every occurrence adds, like `np.add.at`.
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from ..errors import SrcgradError
from ._types import is_number as _is_number


def _advanced(part) -> bool:
    return isinstance(part, (np.ndarray, list))


# --- add_at: adj[index] += g, adding once per occurrence of a repeated index ------------

def add_at(adj, index, g):
    parts = index if isinstance(index, tuple) else (index,)
    if isinstance(adj, np.ndarray) and any(_advanced(p) for p in parts):
        np.add.at(adj, index, g)
    else:
        adj[index] += g


def _basic(t) -> bool:
    return isinstance(t, (types.Integer, types.SliceType, types.NoneType, types.EllipsisType))


def _positions(index):
    pass  # only called from numba code; see the overload below


@overload(_positions)
def _positions_impl(index):
    if isinstance(index.dtype, types.Boolean):
        return lambda index: np.nonzero(index)[0]
    return lambda index: index


@overload(add_at)
def _add_at(adj, index, g):
    scalar_g = _is_number(g)
    if isinstance(adj, types.List) or _basic(index) or (
            isinstance(index, types.BaseTuple) and all(_basic(t) for t in index)):
        def basic(adj, index, g):
            adj[index] += g
        return basic
    if isinstance(index, types.Array):
        if index.ndim != 1:
            return None  # numba reads only 1-d index arrays; Python handles the rest

        if scalar_g:
            def each(adj, index, g):
                pos = _positions(index)
                for k in range(pos.size):
                    adj[pos[k]] += g
            return each

        def one(adj, index, g):
            pos = _positions(index)
            for k in range(pos.size):
                adj[pos[k]] += g[k]
        return one
    if not isinstance(index, types.BaseTuple):
        return None
    arrays = [p for p, t in enumerate(index) if isinstance(t, types.Array)]
    others = [t for t in index if not isinstance(t, types.Array)]
    # One 1-d index array among slices: its axis keeps its place in g (x[:, idx]).
    if len(arrays) != 1 or index[arrays[0]].ndim != 1 or scalar_g \
            or not all(isinstance(t, types.SliceType) for t in others):
        return None
    p = arrays[0]
    slot = ", ".join("pos[k]" if q == p else f"index[{q}]" for q in range(len(index)))
    source = "\n".join([
        "def impl(adj, index, g):",
        f"    pos = _positions(index[{p}])",
        "    for k in range(pos.size):",
        f"        adj[{slot}] += g[{':, ' * p}k]",
    ])
    scope = {"_positions": _positions}
    exec(source, scope)  # noqa: S102  (generated from the index tuple's layout only)
    return scope["impl"]


# --- check_write_index: y[idx] = v with an integer-array idx is not differentiated ------

def check_write_index(index, message):
    """Raise if `index` holds an integer array (a repeated index would be written twice)."""
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if _advanced(part) and np.asarray(part).dtype.kind in "iu":
            raise SrcgradError(message)


@overload(check_write_index)
def _check_write_index(index, message):
    parts = list(index) if isinstance(index, types.BaseTuple) else [index]
    if any(isinstance(t, types.Array) and isinstance(t.dtype, types.Integer) for t in parts):
        def impl(index, message):
            raise SrcgradError(message)
        return impl
    return lambda index, message: None
