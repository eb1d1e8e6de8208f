"""Pass 5, analyze: which values need an adjoint (activity analysis).

A name is *active* when it depends differentiably on a `wrt` parameter
(forward) and the result depends differentiably on it (backward). Only
active names get adjoints; everything else (integers, shapes, masks, values
that do not reach the result) flows through the backward sweep untouched.

`operands(stmt)` is the single place that says which names a normalized
statement differentiates through; the reverse pass uses it too.
"""
from __future__ import annotations

from dataclasses import dataclass

import gast

from .normalize import Normalized
from .rules import lookup


@dataclass(frozen=True)
class Activity:
    active: frozenset[str]


def names_in(node) -> list[str]:
    """Names read by an expression, skipping static references such as `np.sin`."""
    if node is None:
        return []
    if isinstance(node, gast.Name):
        return [node.id]
    if isinstance(node, gast.Attribute):
        return []  # static (np.pi) or a data attribute (x.shape): never differentiable
    return [n for child in gast.iter_child_nodes(node) for n in names_in(child)]


def operation_rule(value, norm: Normalized):
    """The registry rule for a normalized right-hand side, or None (no rule known)."""
    if isinstance(value, gast.BinOp):
        return lookup(type(value.op))
    if isinstance(value, (gast.UnaryOp, gast.Compare)):
        return lookup(type(value.op if isinstance(value, gast.UnaryOp) else value.ops[0]))
    if isinstance(value, gast.Call):
        return lookup(norm.resolved.callees.get(spelled_name(value.func)))
    return None


def spelled_name(node) -> str:
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id] + parts[::-1])


def differentiable(value, norm: Normalized) -> bool:
    """Whether a right-hand side can carry a gradient at all."""
    if isinstance(value, (gast.Attribute, gast.Constant, gast.Compare)):
        return False
    rule = operation_rule(value, norm)
    if isinstance(value, gast.Call) and rule is None:
        return True  # unknown callee: the reverse pass reports it if it matters
    return rule is None or rule.vjp is not None


def operands(value, norm: Normalized) -> list[str]:
    """Names a right-hand side differentiates through (indices and options excluded)."""
    if not differentiable(value, norm):
        return []
    if isinstance(value, gast.Subscript):
        return names_in(value.value)
    if isinstance(value, gast.Call):  # keyword arguments may carry values too (np.sum(a=x))
        return [n for a in value.args + [k.value for k in value.keywords] for n in names_in(a)]
    return names_in(value)


def analyze(norm: Normalized, wrt: list[str]) -> Activity:
    assigns = [s for s in norm.body if isinstance(s, gast.Assign)]
    varied = set(wrt)
    for stmt in assigns:
        if varied.intersection(operands(stmt.value, norm)):
            varied.add(stmt.targets[0].id)
    useful = set(names_in(norm.result))
    for stmt in reversed(assigns):
        if stmt.targets[0].id in useful:
            useful.update(operands(stmt.value, norm))
    return Activity(frozenset(varied & useful))
