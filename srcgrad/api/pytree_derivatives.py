"""`jvp`, `vjp`, `jacfwd` and `jacrev` for calls with structured arguments (derivatives.py
hands them over when `structured.Calls.applies`).

They run the layout of the call (structured.py) and follow JAX's conventions for
pytrees: a tangent has its primal's structure (read leaf by leaf along the same
paths); `vjp_fn` returns each differentiated primal's cotangent in its structure
(None for the others); a Jacobian with respect to a structure is that structure
with, at each float leaf, the Jacobian `out.shape + leaf.shape`.
"""
from __future__ import annotations

import numpy as np

from .arguments import _plain
from .shaping import basis, like, tree, zeros_of
from .structured import calls_of, differentiated


def jvp(func, arguments: dict, tangents: dict, jit: bool):
    wrt = differentiated(arguments)
    layout = calls_of(func, "forward", jit).layout(arguments, wrt)
    tans = layout.flat_like(tangents, arguments, like)
    out, tangent_out = layout.program.compiled(*layout.inputs(arguments), *tans)
    return tree(out), tree(tangent_out)


def vjp(func, arguments: dict, jit: bool):
    wrt = differentiated(arguments)
    layout = calls_of(func, "vjp", jit).layout(arguments, wrt)
    program = layout.program
    out = tree(program.compiled.call_helper(f"{program.resolved.tree.name}__value",
                                            *layout.inputs(arguments)))

    def vjp_fn(cotangent):
        if isinstance(out, tuple):
            raise TypeError(f"{func.__qualname__} returns a tuple; srcgrad.vjp differentiates "
                            "functions returning one value")
        ct = like(cotangent, out, "the cotangent")
        _, grads = program.compiled(*layout.inputs(arguments), ct)
        parts = dict(zip(wrt, layout.derivatives(arguments, dict(zip(layout.flat_wrt, grads)))))
        return tuple(parts.get(name) for name in arguments)
    return out, vjp_fn


def jacobians(func, arguments: dict, names: list, mode: str, jit: bool) -> tuple:
    """One Jacobian per name in `names` (a structure of them for a structured argument),
    by forward mode (one JVP per input element) or reverse mode ("vjp": one per output
    element)."""
    layout = calls_of(func, mode, jit).layout(arguments, names)
    compiled, values = layout.program.compiled, layout.values(arguments)
    flat = {}
    if mode == "forward":
        for w in layout.flat_wrt:
            columns, out = [], 0.0
            for e in basis(np.shape(values[w])):
                tans = [e if n == w else zeros_of(values[n]) for n in layout.flat_wrt]
                out, tangent = compiled(*layout.inputs(arguments), *tans)
                columns.append(np.asarray(tangent, dtype=np.float64))
            shape = np.shape(out) + np.shape(values[w])
            flat[w] = np.stack(columns, axis=-1).reshape(shape) if columns else np.zeros(shape)
    else:
        program = layout.program
        out = program.compiled.call_helper(f"{program.resolved.tree.name}__value",
                                           *layout.inputs(arguments))
        rows = {w: [] for w in layout.flat_wrt}
        for e in basis(np.shape(out)):
            _, grads = compiled(*layout.inputs(arguments), e)
            for w, g in zip(layout.flat_wrt, grads):
                rows[w].append(np.asarray(g, dtype=np.float64))
        for w in layout.flat_wrt:
            flat[w] = np.stack(rows[w]).reshape(np.shape(out) + np.shape(values[w]))
    return layout.derivatives(arguments, flat, shape=lambda jac, _: _plain(jac))
