"""Part of pass 7 (reverse.py): what one assignment `target = value` adds to the adjoints
of the names it reads.

`Contributions` is a part of reverse.py's `_Reverser`. Guarantees:
- A copy `t = v` adds `_adj_t` to `_adj_v`; a read `t = x[idx]` adds it into the
  slot, `_adj_x[idx] += _adj_t` (`add_at` when idx may be an integer array or a
  mask; `add_cotangents`, item by item, for a slice of a list, where `+=` would
  join the lists); a list display adds item k to element k's adjoint.
- Any other operation inlines its rule's template (templates.py) and adds each
  cotangent to its argument's adjoint; the elements of a display a joining call
  takes get item k each; a custom rule's cotangent is shape-checked at run time.
- A call of a function's own primal `f__value` (calls.py, OUTLINE_SITES) adds the
  cotangents its `f__vjp(args, g)` returns.
- A missing rule, or a rule that does not accept the call, is a
  `MissingRuleError` naming the user's line.
"""
from __future__ import annotations

import inspect

import gast

from ..analysis.activity import (differentiable, is_append, operation_rule, plain_index,
                                 rule_arguments)
from ..errors import MissingRuleError, SrcgradError
from ..rules.calls import outlined_vjp
from ..rules.joining import NESTED_DISPLAYS, SEQUENCE_CALLS
from ..syntax import assign, call, const, name, walk
from .missing import missing_rules
from .templates import instantiate

JOINING = SEQUENCE_CALLS - NESTED_DISPLAYS  # they take their values only as a display


def adj(var: str) -> str:
    return f"_adj_{var}"


class Contributions:

    def accumulate(self, var: str, expr):
        return assign(adj(var), gast.BinOp(left=name(adj(var)), op=gast.Add(), right=expr))

    def list_names(self) -> set[str]:
        """Names bound to a list display or appended to (cached)."""
        if getattr(self, "_list_names", None) is None:
            self._list_names = {
                n.value.func.value.id if is_append(n) else n.targets[0].id
                for n in walk(gast.Module(body=self.norm.body, type_ignores=[]))
                if is_append(n) or isinstance(n, gast.Assign) and isinstance(
                    n.targets[0], gast.Name) and isinstance(n.value, gast.List)}
        return self._list_names

    def contributions(self, stmt, target, value) -> list:
        g = name(adj(target))
        if not differentiable(value, self.norm):
            return []  # constants, np.zeros(...), comparisons: no gradient flows back
        if isinstance(value, gast.Name):
            return [self.accumulate(value.id, g)] if value.id in self.active else []
        if isinstance(value, gast.Subscript):
            base = value.value.id
            if base not in self.active:
                return []
            if not plain_index(value.slice, self.integers):  # maybe an integer array or a mask
                return [gast.Expr(value=call("add_at", name(adj(base)),
                                             index_value(value.slice), g))]
            slot = gast.Subscript(value=name(adj(base)), slice=value.slice, ctx=gast.Store())
            if isinstance(value.slice, gast.Slice) and base in self.list_names():
                # a list's slice is a new list, and `+=` on it would join: item by item
                read = gast.Subscript(value=name(adj(base)), slice=value.slice, ctx=gast.Load())
                return [gast.Assign(targets=[slot], value=call("add_cotangents", read, g))]
            return [gast.AugAssign(target=slot, op=gast.Add(), value=g)]
        if isinstance(value, gast.List):  # hs = [a, b]: each element's adjoint is a slot
            return [self.accumulate(e.id, gast.Subscript(value=g, slice=const(k), ctx=gast.Load()))
                    for k, e in enumerate(value.elts)
                    if isinstance(e, gast.Name) and e.id in self.active]
        if isinstance(value, gast.Tuple):
            raise SrcgradError("srcgrad cannot differentiate through a tuple holding "
                               "differentiable values yet; unpack it where it is built, or use "
                               "a list or an array", self.parsed.loc(stmt))
        return self.through_rule(stmt, target, value, g)

    def through_rule(self, stmt, target, value, g) -> list:
        rule = operation_rule(value, self.norm)
        args, keywords = rule_arguments(value)
        if rule is None:  # every such call of the function at once (missing.py)
            raise missing_rules(self.norm, self.active, stmt)
        if hasattr(rule.vjp, "srcgrad_no_reverse"):  # srcgrad.defjvp alone: no reverse rule
            raise MissingRuleError(rule.vjp.srcgrad_no_reverse, self.parsed.loc(stmt))
        if rule.vjp is outlined_vjp:
            return self.through_vjp(rule.name, args, g)
        try:
            stmts, cotangents = instantiate(rule, g, name(target), args, keywords, self.fresh,
                                            self.norm.resolved.namespace)
        except TypeError as exc:
            raise MissingRuleError(
                f"srcgrad's derivative rule for {rule.name} does not support this call: {exc} "
                f"(the rule takes {_signature_text(rule)})", self.parsed.loc(stmt)) from None
        out = list(stmts)
        for _, arg, cotangent in cotangents:
            if isinstance(arg, gast.Tuple):  # np.concatenate((a, b)): one item per element
                out += self.distribute(arg, cotangent)
                continue
            if isinstance(arg, gast.Name) and arg.id in self.active and rule.name in JOINING:
                raise SrcgradError(
                    f"srcgrad cannot differentiate {rule.name}({arg.id}): write the values it "
                    f"joins out in a list or tuple display, {rule.name}([a, b, ...])",
                    self.parsed.loc(stmt))
            if isinstance(arg, gast.Name) and arg.id in self.active:
                if rule.custom:
                    loc = self.parsed.loc(stmt)
                    message = (f"{loc}: the custom rule {rule.vjp.__qualname__} for {rule.name} "
                               f"returned a cotangent for {arg.id!r} with the wrong shape")
                    cotangent = call("check_cotangent", cotangent, name(arg.id), const(message))
                out.append(self.accumulate(arg.id, cotangent))
        return out

    def through_vjp(self, value_name: str, args, g) -> list:
        """`f__value(args)`'s backward step: `f__vjp(args, g)` returns (value, cotangent of
        each parameter), the same function's gradient for every call (calls.py). It gets a
        copy of `g` (its backward sweep writes into its seed, and may return it as a
        parameter's cotangent), so no adjoint of the caller's is changed or shared."""
        active = [(k, a.id) for k, a in enumerate(args)
                  if isinstance(a, gast.Name) and a.id in self.active]
        if not active:
            return []
        both, parts = self.fresh(), self.fresh()
        vjp = value_name[:-len("__value")] + "__vjp"
        out = [assign(both, call(vjp, *args, call("snapshot", g))),  # f__vjp writes into it
               assign(parts, gast.Subscript(value=name(both), slice=const(1), ctx=gast.Load()))]
        return out + [self.accumulate(var, gast.Subscript(value=name(parts), slice=const(k),
                                                          ctx=gast.Load()))
                      for k, var in active]

    def distribute(self, display, cotangent) -> list:
        """Item k of a sequence's cotangent to element k of its display (nested: item [i][j])."""
        targets = [(path, e.id) for path, e in _elements(display)
                   if isinstance(e, gast.Name) and e.id in self.active]
        if not targets:
            return []
        out = []
        if not isinstance(cotangent, gast.Name):
            held = self.fresh()
            out.append(assign(held, cotangent))
            cotangent = name(held)
        for path, var in targets:
            item = cotangent
            for k in path:
                item = gast.Subscript(value=item, slice=const(k), ctx=gast.Load())
            out.append(self.accumulate(var, item))
        return out


def _elements(display, path=()):
    """(index path, element) for each element of a (possibly nested) tuple display."""
    for k, elt in enumerate(display.elts):
        if isinstance(elt, gast.Tuple):
            yield from _elements(elt, path + (k,))
        else:
            yield path + (k,), elt


def index_value(index):
    """An index as a value a helper can take: `:, idx` becomes `(slice(None), idx)`."""
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[index_value(e) for e in index.elts], ctx=gast.Load())
    if not isinstance(index, gast.Slice):
        return index
    parts = [index.lower, index.upper] + ([index.step] if index.step is not None else [])
    if all(p is None for p in parts):
        parts = [None]
    return call("slice", *[const(None) if p is None else p for p in parts])


def _signature_text(rule) -> str:
    params = list(inspect.signature(rule.vjp).parameters.values())[2:]
    return f"{rule.name}({', '.join(str(p) for p in params)})"
