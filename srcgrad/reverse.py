"""Pass 6, reverse: build `f__grad`, the forward sweep followed by the backward sweep.

Input: straight-line SSA code in the normalized forms (see normalize.py) and
the active names (see analyze.py). Output guarantees:
- The forward sweep is the normalized primal, unchanged: SSA keeps every
  intermediate alive, so the backward sweep needs no tape for straight-line code.
- Every active name `v` has an adjoint `_adj_v`, first `zeros_like(v)` (the
  output's is `seed(out)`), then accumulated as `_adj_v = _adj_v + e`, or in
  place as `_adj_x[idx] += g` for an indexed read.
  NOTE [adjoint ownership]: only a `zeros_like` buffer is ever updated in
  place; optimize.py relies on this when it folds zero initialisations.
- Each block of the generated code starts with a `Comment` naming the user's
  line it came from.
- The function returns `(out, (_adj_w1, ...))` in `wrt` order.
"""
from __future__ import annotations

import inspect
import itertools
import os
from dataclasses import dataclass

import gast

from .analyze import Activity, operation_rule, spelled_name
from .errors import MissingRuleError, NonScalarOutputError, SrcgradError
from .normalize import Normalized
from .templates import instantiate


class Comment(str):
    """Text that emit.py prints as a `# ...` line; `lineno` is the user's line, if any."""

    lineno: int | None = None


def comment(text: str, lineno: int | None = None):
    note = Comment(text)
    note.lineno = lineno
    return gast.Expr(value=gast.Constant(value=note, kind=None))


def is_comment(stmt) -> bool:
    return (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant)
            and isinstance(stmt.value.value, Comment))


def name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def call(func: str, *args):
    return gast.Call(func=name(func), args=list(args), keywords=[])


def assign(target: str, value):
    return gast.Assign(targets=[name(target, store=True)], value=value, type_comment=None)


def adj(var: str) -> str:
    return f"_adj_{var}"


@dataclass
class Reversed:
    norm: Normalized
    tree: gast.FunctionDef
    wrt: list[str]


class _Reverser:
    def __init__(self, norm: Normalized, activity: Activity):
        self.norm = norm
        self.parsed = norm.resolved.parsed
        self.active = activity.active
        self.fresh = (f"_r{i}" for i in itertools.count(1)).__next__
        self.out: list = []

    def commented(self, stmts, prefix: str) -> list:
        """`stmts` with a comment before each run that came from one user line."""
        result, last = [], None
        for stmt in stmts:
            if stmt.lineno != last:
                last = stmt.lineno
                loc = self.parsed.loc(stmt)
                text = f"{prefix}{loc.text.strip()}   ({os.path.basename(loc.filename)}:{loc.lineno})"
                result.append(comment(text, loc.lineno))
            result.append(stmt)
        return result

    def accumulate(self, var: str, expr):
        total = gast.BinOp(left=name(adj(var)), op=gast.Add(), right=expr)
        self.out.append(assign(adj(var), total))

    def backward(self, stmt):
        target, value = stmt.targets[0].id, stmt.value
        g = name(adj(target))
        if isinstance(value, gast.Name):
            self.accumulate(value.id, g)
        elif isinstance(value, gast.Subscript):
            index = gast.Subscript(value=name(adj(value.value.id)), slice=value.slice,
                                   ctx=gast.Store())
            self.out.append(gast.AugAssign(target=index, op=gast.Add(), value=g))
        elif isinstance(value, gast.Tuple):
            raise SrcgradError("srcgrad cannot differentiate through a tuple holding "
                               "differentiable values yet; unpack it where it is built",
                               self.parsed.loc(stmt))
        else:
            self.through_rule(stmt, target, value, g)

    def through_rule(self, stmt, target, value, g):
        rule = operation_rule(value, self.norm)
        if isinstance(value, gast.BinOp):
            args, keywords = [value.left, value.right], {}
        elif isinstance(value, gast.UnaryOp):
            args, keywords = [value.operand], {}
        else:
            args, keywords = value.args, {k.arg: k.value for k in value.keywords}
        if rule is None:
            raise _missing_rule(self.norm, value, stmt)
        try:
            stmts, cotangents = instantiate(rule, g, name(target), args, keywords, self.fresh)
        except TypeError as exc:
            raise MissingRuleError(
                f"srcgrad's derivative rule for {rule.name} does not support this call: {exc} "
                f"(the rule takes {_signature_text(rule)})", self.parsed.loc(stmt)) from None
        self.out.extend(stmts)
        for arg, cotangent in cotangents:
            if isinstance(arg, gast.Name) and arg.id in self.active:
                self.accumulate(arg.id, cotangent)


def _signature_text(rule) -> str:
    params = list(inspect.signature(rule.vjp).parameters.values())[2:]
    return f"{rule.name}({', '.join(str(p) for p in params)})"


def _missing_rule(norm: Normalized, value, stmt) -> MissingRuleError:
    spelled = spelled_name(value.func)
    obj = norm.resolved.callees.get(spelled)
    what = getattr(obj, "__qualname__", repr(obj))
    hint = ""
    if callable(obj) and hasattr(obj, "__code__"):
        hint = " It is a Python function: calls into user functions are not differentiated yet."
    return MissingRuleError(
        f"srcgrad has no derivative rule for {spelled} ({what}), and a differentiable value "
        f"flows through it.{hint}", norm.resolved.parsed.loc(stmt))


def reverse(norm: Normalized, activity: Activity, wrt: list[str]) -> Reversed:
    rev = _Reverser(norm, activity)
    forward, ret = norm.body[:-1], norm.body[-1]
    result = ret.value
    _reject_tuple_result(norm, forward, result)
    order = norm.inputs + [s.targets[0].id for s in forward if isinstance(s, gast.Assign)]
    active = [v for v in order if v in activity.active]
    out_name = result.id if isinstance(result, gast.Name) else None
    rev.out.append(comment("backward sweep"))
    if out_name in activity.active:
        rev.out.append(assign(adj(out_name), call("seed", name(out_name))))
    for var in active:
        if var != out_name:
            rev.out.append(assign(adj(var), call("zeros_like", name(var))))
    for stmt in rev.commented([s for s in forward if isinstance(s, gast.Assign)
                               and s.targets[0].id in activity.active][::-1], "grad of: "):
        if isinstance(stmt, gast.Assign):
            rev.backward(stmt)
        else:
            rev.out.append(stmt)
    grads = [name(adj(w)) if w in activity.active else call("zeros_like", name(w)) for w in wrt]
    final = gast.Return(value=gast.Tuple(elts=[result, gast.Tuple(elts=grads, ctx=gast.Load())],
                                         ctx=gast.Load()))
    body = rev.commented(forward, "") + rev.out + [final]
    args = gast.arguments(args=[name(i, store=False) for i in norm.inputs], posonlyargs=[],
                          vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    for a in args.args:
        a.ctx = gast.Param()
    tree = gast.FunctionDef(name=f"{norm.resolved.tree.name}__grad", args=args, body=body,
                            decorator_list=[], returns=None, type_comment=None, type_params=[])
    return Reversed(norm, tree, list(wrt))


def _reject_tuple_result(norm, forward, result):
    for stmt in forward:
        if (isinstance(stmt, gast.Assign) and isinstance(result, gast.Name)
                and stmt.targets[0].id == result.id and isinstance(stmt.value, gast.Tuple)):
            raise NonScalarOutputError(
                f"{norm.resolved.parsed.func.__qualname__} returns a tuple; grad needs a scalar "
                "output. Differentiate one element, or a scalar combination of them.",
                norm.resolved.parsed.loc(stmt))
