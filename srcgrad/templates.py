"""Inline a derivative rule's body into generated code.

A rule `def vjp(g, ans, x, y): c = ...; return e1, e2` becomes statements and
one cotangent expression per differentiable argument, with the rule's
parameters replaced by the caller's atoms and its locals renamed to fresh
generated names. The rule function itself stays executable Python, which the
registry sweep tests directly.
"""
from __future__ import annotations

import copy
import functools
import inspect
import textwrap

import gast

from .rules import Rule


@functools.lru_cache(maxsize=None)
def _rule_tree(vjp) -> gast.FunctionDef:
    return gast.parse(textwrap.dedent(inspect.getsource(vjp))).body[0]


def differentiable_params(vjp) -> list[str]:
    """The rule's parameters after (g, ans) that have no default: one cotangent each."""
    params = list(inspect.signature(vjp).parameters.values())[2:]
    return [p.name for p in params if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


class _Substitute(gast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        if node.id not in self.mapping:
            return node
        new = copy.deepcopy(self.mapping[node.id])
        if isinstance(new, gast.Name):
            new.ctx = node.ctx
        return new


def instantiate(rule: Rule, g, ans, args: list, keywords: dict, fresh):
    """(statements, {atom passed for a differentiable parameter: its cotangent expression}).

    Arguments may be passed by position or keyword, as the primal allows.
    Raises TypeError when the call's arguments do not fit the rule's signature.
    """
    sig = inspect.signature(rule.vjp)
    bound = sig.bind(g, ans, *args, **keywords)
    bound.apply_defaults()
    passed = dict(bound.arguments)
    mapping = {name: (value if isinstance(value, gast.AST)
                      else gast.Constant(value=value, kind=None))
               for name, value in passed.items()}
    tree = _rule_tree(rule.vjp)
    *body, ret = tree.body
    for stmt in body:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                mapping.setdefault(node.id, gast.Name(id=fresh(), ctx=gast.Store(),
                                                      annotation=None, type_comment=None))
    subst = _Substitute(mapping)
    stmts = [subst.visit(copy.deepcopy(s)) for s in body]
    value = subst.visit(copy.deepcopy(ret.value))
    params = differentiable_params(rule.vjp)
    parts = [value] if len(params) == 1 else list(value.elts)
    if len(parts) != len(params):
        raise AssertionError(f"rule {rule.vjp.__qualname__} returns {len(parts)} cotangents, "
                             f"not {len(params)}")
    cotangents = [(passed[p], part) for p, part in zip(params, parts)
                  if not (isinstance(part, gast.Constant) and part.value is None)]
    return stmts, cotangents
