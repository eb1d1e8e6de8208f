"""Sparse Jacobians and Hessians: detect the pattern, color, one product per color.

`jacfwd(f, sparse=True)`, `jacrev(f, sparse=True)` and `hessian(f, sparse=True)`
return a `scipy.sparse.csr_matrix` (out.size x arg.size, C order), with
`.srcgrad_products`, the number of JVPs, VJPs or HVPs used.

- **Pattern.** srcgrad's own forward-mode code runs as Python with dependency
  tangents (pattern.py): a Jacobian's row is the set of inputs its output's
  tangent was built from, a Hessian's entries the pairs its second-order tangent
  was built from. The pattern is structural (a product keeps a dependency even
  when a factor is zero at this point) and follows the branches and trip counts
  these arguments take: it is that of the derivative at these arguments, and of
  any argument that takes the same paths through the code. Anything the pattern
  run cannot evaluate makes the pattern dense (with a warning): never a missed
  nonzero.
- **Coloring.** Columns (rows for jacrev) sharing no row (column) get one color,
  greedily in order; a Hessian colors its symmetrised pattern's columns. Each
  color is one product seeded with the sum of its unit vectors.
- A pattern that needs as many colors as the dense derivative has columns warns
  once per function that sparse=True gains nothing.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np

from ..errors import SrcgradWarning
from .gradient import prepare_inputs
from .pattern import PatternUnavailable, hessian_pattern, jacobian_pattern, sparse_module
from .programs import cached_program
from .second_order import HessianVectorProduct, forward_levels

_WARNED: set = set()



def greedy_coloring(pattern) -> np.ndarray:
    """A color per column of a sparse boolean matrix; columns sharing a row differ."""
    csc, csr = pattern.tocsc(), pattern.tocsr()
    n = pattern.shape[1]
    color = np.full(n, -1, dtype=np.int64)
    for j in range(n):
        rows = csc.indices[csc.indptr[j]:csc.indptr[j + 1]]
        if len(rows):
            near = np.concatenate([csr.indices[csr.indptr[r]:csr.indptr[r + 1]] for r in rows])
            used = set(color[near].tolist())
        else:
            used = set()
        k = 0
        while k in used:
            k += 1
        color[j] = k
    return color


def _seeds(color: np.ndarray, shape):
    """For each color, the sum of the unit vectors of its columns, in `shape`."""
    for c in range(int(color.max()) + 1 if len(color) else 0):
        seed = (color == c).astype(np.float64)
        yield float(seed[0]) if shape == () else seed.reshape(shape)


def _assemble(pattern, color, products, by_row: bool):
    """The matrix with entry (r, j) read from the product of j's color (r's for rows)."""
    coo = pattern.tocoo()
    table = np.array([np.ravel(p) for p in products]) if products else np.zeros((0, 0))
    if by_row:
        data = table[color[coo.row], coo.col] if coo.nnz else np.zeros(0)
    else:
        data = table[color[coo.col], coo.row] if coo.nnz else np.zeros(0)
    out = sparse_module().csr_matrix((data, (coo.row, coo.col)), shape=pattern.shape)
    out.srcgrad_products = len(products)
    return out


def _warn_dense(func, colors: int, size: int, what: str) -> None:
    if size > 1 and colors >= size and func not in _WARNED:
        _WARNED.add(func)
        warnings.warn(f"sparse=True gains nothing for {func.__qualname__}: its {what} needs "
                      f"{colors} colors, as many products as the dense {what}", SrcgradWarning,
                      stacklevel=4)


def _unavailable(func, exc, what: str) -> None:
    warnings.warn(f"srcgrad could not detect the {what} pattern of {func.__qualname__} ({exc}); "
                  "it is taken as dense", SrcgradWarning, stacklevel=4)


def sparse_jacobian(func, name: str, mode: str, jit: bool, args, kwargs):
    """The Jacobian of `func` wrt `name` at these arguments, one JVP (or VJP) per color."""
    signature = inspect.signature(func)
    program = cached_program(func, [name], "forward", jit)
    bound, inputs = prepare_inputs(program, signature, [name], args, kwargs)
    x = bound.arguments[name]
    try:
        out, pattern = jacobian_pattern(program, inputs, np.shape(x))
    except PatternUnavailable as exc:
        _unavailable(func, exc, "Jacobian")
        _, inputs = prepare_inputs(program, signature, [name], args, kwargs)
        out = program.compiled(*inputs, np.zeros(np.shape(x)) if np.ndim(x) else 0.0)[0]
        pattern = sparse_module().csr_matrix(np.ones((np.size(out), np.size(x)), dtype=bool))
    shape = pattern.shape
    if mode == "forward":
        color = greedy_coloring(pattern)
        products = []
        for seed in _seeds(color, np.shape(x)):
            _, inputs = prepare_inputs(program, signature, [name], args, kwargs)
            products.append(program.compiled(*inputs, seed)[1])
        _warn_dense(func, len(products), shape[1], "Jacobian")
        return _assemble(pattern, color, products, by_row=False)
    reverse = cached_program(func, [name], "vjp", jit)
    color = greedy_coloring(pattern.T)
    products = []
    for seed in _seeds(color, np.shape(out)):
        _, inputs = prepare_inputs(reverse, signature, [name], args, kwargs)
        products.append(reverse.compiled(*inputs, seed)[1][0])
    _warn_dense(func, len(products), shape[0], "Jacobian")
    return _assemble(pattern, color, products, by_row=True)


def sparse_hessian(func, name: str, jit: bool, args, kwargs):
    """The Hessian of scalar `func` wrt `name` at these arguments, one HVP per color."""
    signature = inspect.signature(func)
    first, second = forward_levels(func, [name, name], jit)
    bound, inputs = prepare_inputs(first, signature, [name], args, kwargs)
    x = bound.arguments[name]
    n = int(np.size(x))
    try:
        pattern = hessian_pattern(second, inputs, np.shape(x))
    except PatternUnavailable as exc:
        _unavailable(func, exc, "Hessian")
        pattern = sparse_module().csr_matrix(np.ones((n, n), dtype=bool))
    pattern = (pattern + pattern.T).astype(bool).tocsr()
    color = greedy_coloring(pattern)
    product = HessianVectorProduct(func, name, jit=jit, what="hessian")
    products = [product(*args, seed, **kwargs) for seed in _seeds(color, np.shape(x))]
    _warn_dense(func, len(products), n, "Hessian")
    h = _assemble(pattern, color, products, by_row=False)
    products_used = h.srcgrad_products
    h = ((h + h.T) * 0.5).tocsr()
    h.srcgrad_products = products_used
    return h
