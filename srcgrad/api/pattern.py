"""Sparsity patterns by running srcgrad's forward-mode code with dependency tangents.

A `Dep` stands for a tangent's structure, not its value: `u`, the set of inputs
(bits of an int) the first-order tangent depends on; `v`, the same for a second
tangent direction; `pairs`, the (i, j) index pairs a second-order tangent was built
from, as a DAG of unions and products u x v (flattened once at the end, so long
sums stay linear). Sums take unions; products take unions plus the cross pairs;
a product with a number keeps the dependency whatever the number (zero included),
so the pattern never misses a structural nonzero.

The generated function runs as Python with tangent inputs of Deps (object arrays)
and with `zeros_like` making zero tangents that can hold Deps. Anything that cannot
run on Deps (a comparison of tangents, a NumPy routine without object support)
raises `PatternUnavailable`, and the caller takes the pattern as dense.
"""
from __future__ import annotations

import types
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix


def sparse_module():
    """scipy.sparse, imported at the first sparse derivative (not at `import srcgrad`)."""
    import scipy.sparse
    return scipy.sparse


class PatternUnavailable(Exception):
    """The pattern run could not evaluate the code on dependency tangents."""


def _join(*nodes):
    nodes = [n for n in nodes if n is not None]
    if not nodes:
        return None
    return nodes[0] if len(nodes) == 1 else ("join", *nodes)


def _cross(u: int, v: int):
    return ("cross", u, v) if u and v else None


class Dep:
    __slots__ = ("u", "v", "pairs")

    def __init__(self, u: int = 0, v: int = 0, pairs=None):
        self.u, self.v, self.pairs = u, v, pairs

    def _sum(self, other):
        if isinstance(other, Dep):
            return Dep(self.u | other.u, self.v | other.v, _join(self.pairs, other.pairs))
        if isinstance(other, np.ndarray):
            return NotImplemented  # elementwise, through NumPy
        return self

    def _product(self, other):
        if isinstance(other, Dep):
            return Dep(self.u | other.u, self.v | other.v,
                       _join(self.pairs, other.pairs, _cross(self.u, other.v),
                             _cross(other.u, self.v)))
        return self._sum(other)

    __add__ = __radd__ = __sub__ = __rsub__ = _sum
    __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __matmul__ = __rmatmul__ = _product

    def __pow__(self, other):
        return self._product(self)._sum(other)

    def __neg__(self):
        return self

    __pos__ = __abs__ = conjugate = __neg__

    def __repr__(self):
        return f"Dep(u={self.u:#x}, v={self.v:#x})"


EMPTY = Dep()


def _zeros_like(x):
    if isinstance(x, list):
        return [_zeros_like(e) for e in x]
    return 0.0 if np.ndim(x) == 0 else np.full(np.shape(x), EMPTY, dtype=object)


def _seed(shape, field: str):
    """A tangent whose element k depends on input k alone (in `field`, "u" or "v")."""
    size = int(np.prod(shape))
    deps = np.empty(size, dtype=object)
    for k in range(size):
        deps[k] = Dep(**{field: 1 << k})
    return deps[0] if shape == () else deps.reshape(shape)


def _run(program, *args):
    """Call the generated function as Python, every function of its module seeing a
    `zeros_like` that makes Dep-holding zeros."""
    fn = program.compiled.python
    namespace = dict(fn.__globals__, zeros_like=_zeros_like)
    for key, value in list(namespace.items()):
        if isinstance(value, types.FunctionType) and value.__globals__ is fn.__globals__:
            namespace[key] = types.FunctionType(value.__code__, namespace, value.__name__,
                                                value.__defaults__, value.__closure__)
    try:
        return namespace[fn.__name__](*args)
    except Exception as exc:  # any failure: the caller takes the pattern as dense
        raise PatternUnavailable(f"{type(exc).__name__}: {exc}") from None


def bits(mask: int) -> list[int]:
    """The set bits of an int, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _matrix(rows: dict, shape) -> csr_matrix:
    r, c = [], []
    for i, mask in rows.items():
        cols = bits(mask)
        r += [i] * len(cols)
        c += cols
    data = np.ones(len(r), dtype=bool)
    return sparse_module().csr_matrix((data, (np.array(r, dtype=np.int64),
                                           np.array(c, dtype=np.int64))), shape=shape)


def jacobian_pattern(program, inputs, shape):
    """(the function's value, its Jacobian's pattern): rows are the value's elements
    (C order), columns the elements of the argument of `shape`."""
    value, tangent = _run(program, *inputs, _seed(shape, "u"))
    flat = np.ravel(np.asarray(tangent, dtype=object))
    if flat.size != np.size(value):
        raise PatternUnavailable(f"the tangent has {flat.size} elements, not {np.size(value)}")
    rows = {i: d.u for i, d in enumerate(flat) if isinstance(d, Dep) and d.u}
    return value, _matrix(rows, (int(np.size(value)), int(np.prod(shape))))


def _flatten(node, rows: dict, seen: set) -> None:
    stack = [node]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node[0] == "cross":
            for i in bits(node[1]):
                rows[i] = rows.get(i, 0) | node[2]
        else:
            stack.extend(node[1:])


def hessian_pattern(second, inputs, shape) -> csr_matrix:
    """The pairs (i, j) the second-order tangent of `second` (forward over forward
    code) was built from, for tangents along the argument of `shape`."""
    (_, _), (_, entry) = _run(second, *inputs, _seed(shape, "u"), _seed(shape, "v"))
    rows: dict = {}
    if isinstance(entry, np.ndarray) and entry.dtype == object and entry.ndim == 0:
        entry = entry.item()
    if isinstance(entry, Dep):
        _flatten(entry.pairs, rows, set())
    elif np.ndim(entry) != 0:
        raise PatternUnavailable("the function is not scalar")
    n = int(np.prod(shape))
    return _matrix(rows, (n, n))
