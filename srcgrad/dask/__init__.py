"""srcgrad on Dask: the value and gradient of a loss summed over shards of data that
live across a cluster (issue 19; the optional extra `srcgrad[dask]`).

    import srcgrad.dask
    value, grad = srcgrad.dask.value_and_grad(loss, params, X, y)

- `loss(params, *shard)` returns a scalar for one shard; the total is the sum over
  the shards, and so is its gradient with respect to `params`.
- The shards are dask arrays chunked along the data axis (axis 0; every array the
  same chunks there, other axes are put in one chunk), a list of `dask.delayed`
  objects each computing one shard (a tuple of arguments, or one argument), or a
  dask bag whose elements are shards.
- Each shard's value and gradient is computed where its data is, by srcgrad's
  compiled `value_and_grad(loss)`, pickled once per call and carried by every
  shard's task (api/pickling.py: it travels with its source and generated code;
  each worker process builds and compiles it once). The partial sums are added on
  the workers in a tree, `split_every` at a time, so one (value, gradient) pair
  comes back. Task keys are new at every call (the same key computed again while
  the last call's is being released confuses the scheduler).
- It runs on the active Dask scheduler (a `distributed.Client`, else Dask's
  default) and composes with `scipy.optimize.minimize(..., jac=True)`.
- `worker_times(client)`: per worker process, the time spent making gradients,
  in first calls (numba compiling) and in the other calls (tasks.times).

`import srcgrad` does not import this package, nor Dask.
"""
from __future__ import annotations

import pickle
from collections import OrderedDict

import numpy as np

try:
    import dask
    import dask.array as da
    import dask.bag as db
    from dask.delayed import Delayed
except ImportError as exc:  # pragma: no cover - the [dask] extra is missing
    raise ImportError("srcgrad.dask needs Dask: pip install 'srcgrad[dask]' "
                      f"(dask and distributed); {exc}") from exc

from ..api.derivatives import value_and_grad as _local_value_and_grad
from . import tasks

__all__ = ["value_and_grad", "worker_times"]

_GRADIENTS: OrderedDict = OrderedDict()  # (loss, jit) -> value_and_grad(loss), the last few
_KEEP = 16


def value_and_grad(loss, params, *data, split_every: int = 8, jit: bool = True):
    """(sum over shards of loss(params, *shard), its gradient with respect to params)."""
    if split_every < 2:
        raise ValueError(f"split_every must be at least 2, got {split_every}")
    gradient = _GRADIENTS.pop((loss, jit), None)
    if gradient is None:
        gradient = _local_value_and_grad(loss, 0, jit=jit)
    _GRADIENTS[loss, jit] = gradient
    while len(_GRADIENTS) > _KEEP:
        _GRADIENTS.popitem(last=False)
    payload = pickle.dumps(gradient, protocol=pickle.HIGHEST_PROTOCOL)  # in every task
    parts = _parts(payload, params, data)
    while len(parts) > 1:
        parts = [dask.delayed(tasks.add, pure=False)(*parts[k:k + split_every])
                 for k in range(0, len(parts), split_every)]
    value, grad = dask.compute(parts[0])[0]
    return float(value), _shaped(grad, params)


def _parts(payload: bytes, params, data) -> list:
    """One delayed (value, gradient) per block of shards."""
    if not data:
        raise TypeError("srcgrad.dask.value_and_grad(loss, params, *data): give the data, as "
                        "dask arrays, a list of dask.delayed shards or a dask bag")
    if len(data) == 1 and isinstance(data[0], db.Bag):
        blocks = data[0].to_delayed()
    elif len(data) == 1 and isinstance(data[0], (list, tuple)) and data[0] and all(
            isinstance(d, Delayed) for d in data[0]):
        blocks = [[shard] for shard in data[0]]
    elif all(isinstance(d, da.Array) for d in data):
        columns = [_blocks(d, data[0]) for d in data]
        return [dask.delayed(tasks.shard_value_and_grad, pure=False)(payload, params, *shard)
                for shard in zip(*columns)]
    else:
        kinds = ", ".join(type(d).__name__ for d in data)
        raise TypeError(f"srcgrad.dask.value_and_grad: the data must be dask arrays, a list of "
                        f"dask.delayed shards, or one dask bag; got {kinds}")
    return [dask.delayed(tasks.partition_value_and_grad, pure=False)(payload, params, b)
            for b in blocks]


def _blocks(array, first) -> list:
    """The blocks of `array` along axis 0 (one chunk along every other axis)."""
    if array.ndim == 0:
        raise ValueError("srcgrad.dask.value_and_grad: a 0-d dask array has no data axis")
    if array.chunks[0] != first.chunks[0]:
        raise ValueError(f"srcgrad.dask.value_and_grad: the data arrays must have the same "
                         f"chunks along axis 0 (the shards); got {array.chunks[0]} and "
                         f"{first.chunks[0]}. Rechunk one like the other.")
    if any(n > 1 for n in array.numblocks[1:]):
        array = array.rechunk({axis: -1 for axis in range(1, array.ndim)})
    return list(array.to_delayed().reshape(-1))


def _shaped(grad, params):
    if np.ndim(params) == 0:
        return float(grad)
    return np.asarray(grad, dtype=np.float64).reshape(np.shape(params))


def worker_times(client=None) -> dict:
    """{worker: timings} for each worker process of `client` (a distributed Client), or
    {"local": timings} of this process without one (tasks.times says what they are)."""
    if client is None:
        return {"local": tasks.times()}
    return client.run(tasks.times)
