"""Inline a derivative rule's body into generated code.

A rule `def vjp(g, ans, x, y): c = ...; return e1, e2` becomes statements and
one cotangent expression per differentiable argument, with the rule's
parameters replaced by the caller's atoms and its locals renamed to fresh
generated names. The rule function itself stays executable Python, which the
registry sweep tests directly.
"""
from __future__ import annotations

import builtins
import copy
import functools
import inspect
import math
import textwrap

import gast
import numpy as np
from numba.extending import register_jitable

from .. import runtime
from ..rules import Rule, differentiable_params
from ..syntax import walk


@functools.lru_cache(maxsize=None)
def _rule_tree(vjp) -> gast.FunctionDef:
    return gast.parse(textwrap.dedent(inspect.getsource(vjp))).body[0]


@functools.lru_cache(maxsize=None)
def free_names(vjp) -> tuple:
    """((name in the rule, name in generated code, object to inject or None), ...).

    Rule bodies run inside generated modules, which import `np`, `math` and the
    runtime helpers. Any other global a rule uses (a custom rule's own helper,
    a module under another alias) is injected under a reserved name.
    """
    tree = _rule_tree(vjp)
    params = {a.id for a in tree.args.args + tree.args.posonlyargs + tree.args.kwonlyargs}
    stored = {n.id for n in walk(tree) if isinstance(n, gast.Name)
              and isinstance(n.ctx, gast.Store)}
    loaded = sorted({n.id for stmt in tree.body for n in walk(stmt)
                     if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)})
    found = []
    for name in loaded:
        if name in params or name in stored:
            continue
        value = _lookup(vjp, name)
        if value is np:
            found.append((name, "np", None))
        elif value is math:
            found.append((name, "math", None))
        elif name in runtime.__all__ and value is getattr(runtime, name):
            found.append((name, name, None))
        elif getattr(builtins, name, None) is value:
            found.append((name, name, None))
        else:
            found.append((name, f"_sg_{vjp.__name__}_{name}", _jitable(value)))
    return tuple(found)


_JITABLE: set[int] = set()


def _jitable(value):
    """A plain Python helper a rule calls, made callable from numba code too."""
    if inspect.isfunction(value) and id(value) not in _JITABLE:
        register_jitable(value)  # still a plain function when called from Python
        _JITABLE.add(id(value))
    return value


def _lookup(func, name):
    code = func.__code__
    if name in code.co_freevars and func.__closure__:
        return func.__closure__[code.co_freevars.index(name)].cell_contents
    if name in func.__globals__:
        return func.__globals__[name]
    if hasattr(builtins, name):
        return getattr(builtins, name)
    raise NameError(f"the derivative rule {func.__qualname__} uses {name!r}, which is not defined")


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


def inline(fn, passed: dict, fresh, namespace: dict, what: str):
    """(statements, returned expression) of `fn`'s body with its parameters bound to `passed`.

    `passed` maps each parameter to an AST atom or a plain constant; the body's
    locals are renamed by `fresh()`. Globals the rule needs are added to
    `namespace` (the generated module's).
    """
    mapping = {name: (value if isinstance(value, gast.AST)
                      else gast.Constant(value=value, kind=None))
               for name, value in passed.items()}
    tree = _rule_tree(fn)
    for name, spelled, value in free_names(fn):
        if spelled != name:
            mapping[name] = gast.Name(id=spelled, ctx=gast.Load(), annotation=None,
                                      type_comment=None)
        if value is not None:
            if namespace.get(spelled, value) is not value:
                raise TypeError(f"two {what}s named {fn.__name__} use different "
                                f"objects called {name!r}; rename one of the rules")
            namespace[spelled] = value
    *body, ret = tree.body
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                mapping.setdefault(node.id, gast.Name(id=fresh(), ctx=gast.Store(),
                                                      annotation=None, type_comment=None))
    subst = _Substitute(mapping)
    return [subst.visit(copy.deepcopy(s)) for s in body], subst.visit(copy.deepcopy(ret.value))


def bind(fn, *args, **keywords) -> dict:
    """Parameter -> value for a call of `fn`, defaults applied (TypeError if it does not fit)."""
    bound = inspect.signature(fn).bind(*args, **keywords)
    bound.apply_defaults()
    return dict(bound.arguments)


def instantiate(rule: Rule, g, ans, args: list, keywords: dict, fresh, namespace: dict):
    """(statements, [(parameter, atom passed for it, its cotangent expression)]).

    Arguments may be passed by position or keyword, as the primal allows.
    Raises TypeError when the call's arguments do not fit the rule's signature.
    """
    passed = bind(rule.vjp, g, ans, *args, **keywords)
    stmts, value = inline(rule.vjp, passed, fresh, namespace, "derivative rule")
    params = differentiable_params(rule.vjp)
    if len(params) == 1 and isinstance(value, gast.Tuple) and len(value.elts) == 1:
        value = value.elts[0]  # `return (g * ...,)`: one cotangent per argument, JAX-style
    parts = [value] if len(params) == 1 else list(value.elts)
    if len(parts) != len(params):
        raise AssertionError(f"rule {rule.vjp.__qualname__} returns {len(parts)} cotangents, "
                             f"not {len(params)}")
    cotangents = [(p, passed[p], part) for p, part in zip(params, parts)
                  if not (isinstance(part, gast.Constant) and part.value is None)]
    return stmts, cotangents
