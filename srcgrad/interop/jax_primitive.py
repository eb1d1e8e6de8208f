"""srcgrad's generated code as a JAX primitive, computed on the host through jax.pure_callback.

Imported by srcgrad.to_jax only (it imports JAX). Why a primitive: JAX lets a function carry
custom_jvp or custom_vjp, not both; a custom_jvp whose tangent is a pure_callback cannot be
transposed (no reverse mode), and a custom_vjp function inside a custom_jvp rule is not
transposable either ("Transpose rule for 'custom_vjp_call' not implemented", JAX 0.10). A
primitive carries its own JVP, transpose and batching rules, so every combination of
jax.jvp/jax.vjp/jax.grad/jacfwd/jacrev/hessian/vmap up to second order composes.

One primitive, `srcgrad_call`, with a static `kind`; operands are f's arguments x, then:

| kind         | then  | result                     | linear in | JVP in x (second order) |
|--------------|-------|----------------------------|-----------|-------------------------|
| `value`      |       | f(x)                       |           | jvp(x, dx)              |
| `jvp`        | t     | J t                        | t         | second_jvp(x, t, dx)    |
| `vjp`        | c     | J^T c, one per float arg   | c         | second_vjp(x, c, dx)    |
| `second_jvp` | t, u  | D^2 f[t, u]                | t and u   | third order: an error   |
| `second_vjp` | c, t  | c . D^2 f[t, .]            | c and t   | third order: an error   |

Transposes stay in the table: jvp <-> vjp; second_jvp in u (or t) is second_vjp(x, ct, t)
(or u, by symmetry); second_vjp in c is second_jvp(x, t, ct), in t second_vjp(x, c, ct). A
batched operand is mapped over with lax.map (one host call per element, the primitive inside,
so the result stays differentiable). The host side is host.py.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

srcgrad_call = Primitive("srcgrad_call")
srcgrad_call.multiple_results = True

# The operand groups after f's arguments: a group of "tangent"s (one per float argument) or
# one "cotangent" (of the output's shape).
_GROUPS = {"value": (), "jvp": ("tangent",), "vjp": ("cotangent",),
           "second_jvp": ("tangent", "tangent"), "second_vjp": ("cotangent", "tangent")}
_OUTPUT_SHAPED = ("value", "jvp", "second_jvp")


class Bridge:
    """What the primitive's rules know of one bridged function (hashed by identity)."""

    def __init__(self, host, args: list, out):
        self.host, self.args, self.out = host, args, out  # jax.ShapeDtypeStructs
        self.name = host.func.__qualname__

    def split(self, kind: str, operands):
        """(f's arguments, [each operand group]) of a bind's operands."""
        k, d = len(self.args), len(self.host.positions)
        groups, at = [], k
        for group in _GROUPS[kind]:
            size = d if group == "tangent" else 1
            groups.append(list(operands[at:at + size]))
            at += size
        return list(operands[:k]), groups

    def results(self, kind: str) -> list:
        if kind in _OUTPUT_SHAPED:
            return [self.out]
        return [self.args[k] for k in self.host.positions]

    def on_host(self, kind: str, *operands) -> list:
        args, groups = self.split(kind, [np.asarray(o) for o in operands])
        host, shape = self.host, self.out.shape
        if kind == "value":
            outs = [host.value(args)]
        elif kind == "jvp":
            outs = [host.jvp(args, groups[0])]
        elif kind == "vjp":
            outs = host.vjp(args, groups[0][0], shape)
        elif kind == "second_jvp":
            outs = [host.second_jvp(args, groups[0], groups[1])]
        else:
            outs = host.second_vjp(args, groups[0][0], groups[1], shape)
        return [np.asarray(o, dtype=s.dtype).reshape(s.shape)
                for o, s in zip(outs, self.results(kind))]


def call(bridge: Bridge, kind: str, *operands) -> list:
    return srcgrad_call.bind(*operands, bridge=bridge, kind=kind)


def _callback(*operands, bridge, kind):
    return jax.pure_callback(functools.partial(bridge.on_host, kind), bridge.results(kind),
                             *operands, vmap_method="sequential")


def _eager(*operands, bridge, kind):
    """Outside jax.jit: the host computes at once (no XLA computation to compile)."""
    return [jnp.asarray(o) for o in bridge.on_host(kind, *operands)]


def _abstract(*avals, bridge, kind):
    return [jax.core.ShapedArray(s.shape, s.dtype) for s in bridge.results(kind)]


def _is_zero(values) -> bool:
    return all(type(v) is ad.Zero for v in values)


def _total(terms: list) -> list:
    return [functools.reduce(lambda a, b: a + b, parts) for parts in zip(*terms)]


def _jvp(primals, tangents, *, bridge, kind):
    outs = call(bridge, kind, *primals)
    args, groups = bridge.split(kind, primals)
    targs, tgroups = bridge.split(kind, tangents)
    terms = []
    for i, tgroup in enumerate(tgroups):  # the linear operands: the same map of their tangents
        if not _is_zero(tgroup):
            moved = [g if j != i else [ad.instantiate_zeros(t) for t in tgroup]
                     for j, g in enumerate(groups)]
            terms.append(call(bridge, kind, *args, *[o for g in moved for o in g]))
    dx = [targs[k] for k in bridge.host.positions]
    if not _is_zero(dx):
        dx = [ad.instantiate_zeros(t) for t in dx]
        if kind in ("second_jvp", "second_vjp"):
            raise NotImplementedError(
                f"srcgrad.to_jax({bridge.name}) gives derivatives up to second order "
                "(jax.hessian, jax.jacfwd(jax.jacrev(f)), ...); this asks for a third")
        second = {"value": "jvp", "jvp": "second_jvp", "vjp": "second_vjp"}[kind]
        terms.append(call(bridge, second, *args, *[o for g in groups for o in g], *dx))
    if not terms:
        return outs, [ad.Zero.from_primal_value(o) for o in outs]
    return outs, _total(terms)


def _transposed(bridge, kind, args, groups, i, cts) -> list:
    """The transpose of `kind` in its operand group `i`, applied to the cotangents `cts`."""
    other = groups[1 - i] if len(groups) == 2 else []
    if kind == "jvp":
        return call(bridge, "vjp", *args, cts[0])
    if kind == "vjp":
        return call(bridge, "jvp", *args, *cts)
    if kind == "second_jvp":
        return call(bridge, "second_vjp", *args, cts[0], *other)
    if i == 0:  # second_vjp in c
        return call(bridge, "second_jvp", *args, *other, *cts)
    return call(bridge, "second_vjp", *args, *other, *cts)  # second_vjp in t


def _transpose(cts, *operands, bridge, kind):
    args, groups = bridge.split(kind, operands)
    undefined = [i for i, g in enumerate(groups) if any(ad.is_undefined_primal(o) for o in g)]
    if any(ad.is_undefined_primal(a) for a in args) or len(undefined) != 1:
        raise NotImplementedError(f"srcgrad.to_jax({bridge.name}): {kind} is not linear in "
                                  "the operands JAX asks to transpose")
    i = undefined[0]
    if _is_zero(cts):
        result = [None] * len(groups[i])
    else:
        result = _transposed(bridge, kind, args, groups, i, [ad.instantiate_zeros(c) for c in cts])
    out = [None] * len(args)
    for j, group in enumerate(groups):
        out += list(result) if j == i else [None] * len(group)
    return out


def _batch(values, dims, *, bridge, kind):
    mapped = [k for k, d in enumerate(dims) if d is not None]  # None: not mapped

    def one(elements):
        operands = list(values)
        for k, element in zip(mapped, elements):
            operands[k] = element
        return call(bridge, kind, *operands)
    outs = jax.lax.map(one, [jnp.moveaxis(values[k], dims[k], 0) for k in mapped])
    return outs, [0] * len(outs)


srcgrad_call.def_impl(_eager)
srcgrad_call.def_abstract_eval(_abstract)
mlir.register_lowering(srcgrad_call, mlir.lower_fun(_callback, multiple_results=True))
ad.primitive_jvps[srcgrad_call] = _jvp
ad.primitive_transposes[srcgrad_call] = _transpose
batching.primitive_batchers[srcgrad_call] = _batch
