"""Pass 7 (forward mode), forward: tangent statements beside the primal ones.

Input: normalized code (normalize.py, with recursive calls left as calls) and
the parameters to differentiate. Output (`Forwarded`) guarantees:
- Every active name `v` (it depends on a `wrt` parameter and reaches the
  result, activity.py) has a tangent `<prefix>v` (`_tan_v`), assigned right
  after every assignment to `v`, so both always describe the same value; a
  value that does not depend on `wrt` gets a zero tangent of its type.
- Control flow is the primal's: the tangent statements sit inside the same
  `if`, `for` and `while` blocks, so nothing is recorded and nothing replayed.
- `y[i] = v` also writes `_tan_y[i]`; `hs.append(v)` appends to `_tan_hs`.
- An argument not differentiated that may hold differentiated values later (loop state,
  a scratch buffer) starts with a zero tangent, `_tan_s = zeros_like(s)`.
- A call to a recursive function `f` calls `f__jvp_all(args, tangents)`, the
  forward transformation of `f` with respect to all its parameters.
- The function is `f__jvp(inputs..., tangents of wrt...)` and returns
  `(out, tangent of out)`.

Tangents come from forward rules (rules/forward.py): derived from the
reverse rule for elementwise primitives, the primitive itself for
(multi)linear ones, or a rule of their own. The tangent prefix is `_tan_`,
or `_tan2_`, `_tan3_`, ... when the code already uses it (differentiating
generated forward code again, for higher derivatives).
"""
from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass

import gast

from ..analysis.integer_arrays import maybe_integer_arrays
from ..analysis.activity import Activity, is_append, operation_rule, rule_arguments
from ..frontend.calls import Recursive
from ..frontend.trees import reads
from ..errors import MissingRuleError
from .missing import missing_rules
from .optimize import _Fold  # reverse mode's constant folding
from ..frontend.normalize import Normalized
from ..syntax import assign, call, const, function_def, name, with_comments, walk
from ..rules.forward import ELEMENTWISE, LINEAR, forward_rule
from ..rules import differentiable_params
from .templates import bind, inline, instantiate


def jvp_all_name(base: str) -> str:
    return f"{base}__jvp_all"


def tangent_prefix(body) -> str:
    """`_tan_`, or `_tan2_`, `_tan3_`, ...: the first one no name in `body` starts with."""
    names = {n.id for stmt in body for n in walk(stmt) if isinstance(n, gast.Name)}
    for k in itertools.count(1):
        prefix = "_tan_" if k == 1 else f"_tan{k}_"
        if not any(n.startswith(prefix) for n in names):
            return prefix


@dataclass
class Forwarded:
    norm: Normalized
    body: list
    wrt: list[str]
    prefix: str

    def function(self, called: str | None = None) -> gast.FunctionDef:
        """`f__jvp(inputs..., tangents...)` (or `called`), returning `(out, tangent)`."""
        params = self.norm.inputs + [self.prefix + w for w in self.wrt]
        return function_def(called or f"{self.norm.resolved.tree.name}__jvp", params, self.body)


class _DropUnbroadcast(gast.NodeTransformer):
    """`unbroadcast(e, x)` -> `e`: a tangent keeps the broadcast shape of the result."""

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, gast.Name) and node.func.id == "unbroadcast":
            return node.args[0]
        return node


def _drop_unbroadcast(node):
    return _DropUnbroadcast().visit(node)


def _folded(term):
    """`term` with constants folded as reverse mode folds them (`t * 2 * x ** (2 - 1)` is
    `t * 2 * x`: a second derivative differentiates no power), unless that leaves a bare
    name (another name for an array)."""
    folded = _Fold().visit(copy.deepcopy(term))
    return term if isinstance(folded, gast.Name) else folded


def _total(terms):
    total = terms[0]
    for term in terms[1:]:
        total = gast.BinOp(left=total, op=gast.Add(), right=term)
    return total


def _operand_slots(value):
    """[(holder, field, index or None)] for each operand position of a normalized value."""
    if isinstance(value, gast.BinOp):
        return [(value, "left", None), (value, "right", None)]
    if isinstance(value, gast.UnaryOp):
        return [(value, "operand", None)]
    slots = [(value.args, None, k) for k in range(len(value.args))]
    return slots + [(k, "value", None) for k in value.keywords]


class _Forward:
    def __init__(self, norm: Normalized, activity: Activity, prefix: str):
        self.norm = norm
        self.parsed = norm.resolved.parsed
        self.active = activity.active
        self.prefix = prefix
        names = {n.id for stmt in norm.body for n in walk(stmt) if isinstance(n, gast.Name)}
        self.taken = names | {prefix + n for n in names}
        self.temps = itertools.count(1)
        self.maybe_integer = maybe_integer_arrays(norm.body)

    def tan(self, var: str) -> str:
        return self.prefix + var

    def fresh(self) -> str:
        while True:
            temp = f"{self.prefix}r{next(self.temps)}"
            if temp not in self.taken:
                return temp

    # ---- tangents of atoms ------------------------------------------------------------
    def tangent_of(self, atom):
        """The tangent of an atom or display, or None when it does not depend on `wrt`."""
        if isinstance(atom, gast.Name):
            return name(self.tan(atom.id)) if atom.id in self.active else None
        if isinstance(atom, (gast.Tuple, gast.List)):
            parts = [self.tangent_of(e) for e in atom.elts]
            if all(p is None for p in parts):
                return None
            return type(atom)(elts=[self.tangent_or_zero(e) for e in atom.elts], ctx=gast.Load())
        return None

    def tangent_or_zero(self, atom):
        found = self.tangent_of(atom)
        if found is not None:
            return found
        if isinstance(atom, gast.Constant):
            return const(0.0)
        if isinstance(atom, (gast.Tuple, gast.List)):
            return type(atom)(elts=[self.tangent_or_zero(e) for e in atom.elts], ctx=gast.Load())
        return call("zeros_like", copy.deepcopy(atom))

    # ---- blocks -------------------------------------------------------------------------
    def block(self, body) -> list:
        out = []
        for stmt in body:
            if isinstance(stmt, gast.If):
                stmt.body, stmt.orelse = self.block(stmt.body), self.block(stmt.orelse)
                out.append(stmt)
            elif isinstance(stmt, (gast.For, gast.While)):
                stmt.body = self.block(stmt.body)
                out.append(stmt)
            elif isinstance(stmt, gast.Return):
                value = stmt.value
                out.append(gast.Return(value=gast.Tuple(
                    elts=[value, self.tangent_or_zero(value)], ctx=gast.Load())))
            else:
                out += self.statement(stmt)
        return out

    def statement(self, stmt) -> list:
        if is_append(stmt):
            receiver = stmt.value.func.value.id
            if receiver not in self.active:
                return [stmt]
            append = gast.Attribute(value=name(self.tan(receiver)), attr="append",
                                    ctx=gast.Load())
            return [stmt, gast.Expr(value=call(append, self.tangent_or_zero(stmt.value.args[0])))]
        if not isinstance(stmt, gast.Assign):
            return [stmt]
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, gast.Subscript):  # y[i] = v
            base = target.value.id
            if base not in self.active:
                return [stmt]
            slot = gast.Subscript(value=name(self.tan(base)), slice=copy.deepcopy(target.slice),
                                  ctx=gast.Store())
            tangent = self.tangent_or_zero(value)
            if base in self.maybe_integer:  # zero where the array holds integers
                tangent = call("stored", tangent, name(base))
            return [stmt, assign(slot, tangent)]
        if isinstance(getattr(value, "callee", None), Recursive):
            return self.recursive_call(stmt, target.id, value)
        if target.id not in self.active:
            return [stmt]
        return [stmt] + self.assignment(stmt, target.id, value)

    def assignment(self, stmt, var: str, value) -> list:
        if isinstance(value, (gast.Name, gast.Tuple, gast.List, gast.Constant)):
            return [assign(self.tan(var), self.tangent_or_zero(value))]
        if isinstance(value, gast.Subscript):
            base = self.tangent_of(value.value)
            if base is None:
                return [assign(self.tan(var), call("zeros_like", name(var)))]
            return [assign(self.tan(var), gast.Subscript(value=base, ctx=gast.Load(),
                                                         slice=copy.deepcopy(value.slice)))]
        return self.through_rule(stmt, var, value)

    def through_rule(self, stmt, var: str, value) -> list:
        rule = operation_rule(value, self.norm)
        kind = forward_rule(rule) if rule is not None and rule.vjp is not None else None
        if rule is None or rule.vjp is None or kind is None:
            if rule is not None and rule.vjp is None:  # no gradient: a zero tangent
                return [assign(self.tan(var), call("zeros_like", name(var)))]
            if rule is None:  # no rule at all: every such call at once, as reverse mode does
                raise missing_rules(self.norm, self.active, stmt)
            raise MissingRuleError(_no_forward_rule(rule), self.parsed.loc(stmt))
        args, keywords = rule_arguments(value)
        namespace = self.norm.resolved.namespace
        passed = bind(rule.vjp, None, None, *args, **keywords)
        params = [p for p in differentiable_params(rule.vjp)
                  if self.tangent_of(passed[p]) is not None]
        stmts, terms, covered = [], [], set()
        if kind == ELEMENTWISE:
            for p in params:
                body, parts = instantiate(rule, self.tangent_of(passed[p]), name(var), args,
                                          keywords, self.fresh, namespace)
                for q, _, part in parts:
                    if q == p:
                        stmts += [_drop_unbroadcast(s) for s in body]
                        terms.append(_folded(_drop_unbroadcast(part)))
                        covered |= reads(terms[-1]) | reads(passed[p])
            operands = reads(gast.Tuple(elts=list(args) + list(keywords.values()),
                                         ctx=gast.Load()))
            # The tangent has the result's shape when its terms together read the result or
            # every operand (a term reads its own operand's tangent, of that operand's
            # shape); else an operand no term reads may stretch the result beyond them
            # (`X - b` by b: `-t_b`; `np.where(c, mu, X)` by mu: `select_where(c, t_mu,
            # 0.0)`), and the sum is broadcast to it.
            if terms and var not in covered and not operands <= covered:
                return stmts + [assign(self.tan(var), call("broadcast_like", _total(terms),
                                                           name(var)))]
        elif kind == LINEAR:
            for p in params:
                terms.append(self.replaced(value, passed[p], self.tangent_of(passed[p])))
        else:
            tangents = [self.tangent_or_zero(passed[p]) for p in differentiable_params(rule.vjp)]
            jpassed = bind(kind, *tangents, name(var), *args, **keywords)
            body, expr = inline(kind, jpassed, self.fresh, namespace, "forward rule")
            if rule.custom:
                message = (f"{self.parsed.loc(stmt)}: the custom forward rule {kind.__qualname__}"
                           f" for {rule.name} returned a tangent with the wrong shape")
                expr = call("check_cotangent", expr, name(var), const(message))
            stmts, terms = body, [expr]
        if not terms:
            return [assign(self.tan(var), call("zeros_like", name(var)))]
        return stmts + [assign(self.tan(var), _total(terms))]

    @staticmethod
    def replaced(value, operand, tangent):
        """`value` with the operand `operand` (by identity) replaced by `tangent`."""
        new = copy.deepcopy(value)
        for (old_holder, field, k), (new_holder, _, _) in zip(_operand_slots(value),
                                                            _operand_slots(new)):
            current = old_holder[k] if field is None else getattr(old_holder, field)
            if current is operand:
                if field is None:
                    new_holder[k] = tangent
                else:
                    setattr(new_holder, field, tangent)
        return new

    def recursive_call(self, stmt, var: str, value) -> list:
        """`y = f(args)` -> `y, _tan_y = f__jvp_all(args, tangents)` (the pair unpacked where
        it is made, so reverse mode over this code links each part: inline.py)."""
        tangents = [self.tangent_or_zero(a) for a in value.args]
        tangent = self.tan(var) if var in self.active else self.fresh()
        pair = gast.Tuple(elts=[name(var, True), name(tangent, True)], ctx=gast.Store())
        out = gast.Assign(targets=[pair], value=call(jvp_all_name(value.callee.name),
                                                     *value.args, *tangents), type_comment=None)
        return [gast.copy_location(out, stmt)]


def _no_forward_rule(rule) -> str:
    if not rule.custom:
        return (f"srcgrad has no forward-mode rule for {rule.name}; reverse mode (srcgrad.grad, "
                "srcgrad.vjp, srcgrad.jacrev) differentiates it")
    short = rule.name.split(".")[-1]
    params = differentiable_params(rule.vjp)
    return (f"srcgrad has no forward-mode rule for {rule.name}: it has a reverse rule only "
            f"({rule.vjp.__qualname__}, from srcgrad.defvjp). Forward mode (jvp, jacfwd) and "
            f"second derivatives (hvp, hessian, grad of a gradient) need one: add it with "
            f"@srcgrad.defjvp({short}), a function {short}_jvp("
            f"{', '.join('t_' + p for p in params)}, ans, {', '.join(params)}) returning the "
            "tangent of the result")


def forward(norm: Normalized, activity: Activity, wrt: list[str]) -> Forwarded:
    prefix = tangent_prefix(norm.body)
    pass_ = _Forward(norm, activity, prefix)
    body = pass_.block(copy.deepcopy(norm.body))
    body = with_comments(body, norm.resolved.parsed, "")
    # an argument not differentiated that later holds differentiated values (loop state
    # `s = s * 0.5 + x[i]`, a scratch buffer written into) starts with a zero tangent
    starts = [assign(prefix + p, call("zeros_like", name(p))) for p in norm.inputs
              if p not in wrt and p in activity.active]
    return Forwarded(norm, starts + body, wrt, prefix)
