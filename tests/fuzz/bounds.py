"""Keep generated programs' values bounded, so finite differences stay well conditioned.

`repair(module, param_bounds)` runs an abstract interpretation of the
function under test in which every value is replaced by an upper bound of
its magnitude (loops are unrolled up to their most iterations, both sides of
every branch are taken, calls into helpers are interpreted with the bounds of
their arguments). Wherever a bound would exceed `LIMIT` the tree is repaired
in place:

- an assignment's value, a list element or a returned value becomes
  `np.tanh(value)`; an augmented assignment `v op= e` becomes
  `v = np.tanh(v op e)`;
- the argument of `np.exp` is squashed by `np.tanh` when it could exceed
  `EXP_ARG`, the base of `**` and the argument of `np.prod` likewise.

Bounds only ever decrease through a repair, so the result is safe whatever
the values of the arguments within their bounds. Division is generated only
by safe denominators of magnitude at least 0.5 (`1.0 + e ** 2`,
`2.0 + np.cos(e)`, constants), and `np.log` / `np.sqrt` only of arguments
that are positive by construction, so neither needs a bound here.
"""
from __future__ import annotations

import math

from .tree import (Assign, AugAssign, Bin, BoolOp, Break, Call, Compare, Continue, ExprStmt, For, If,
                   IfExp, Index, ListLit, Method, Name, Num, Return, Slice, TupleLit, Unary, While,
                   Attr, FunctionDef)

LIMIT = 20.0
EXP_ARG = 2.5


def size(shape) -> int:
    return math.prod(shape) if shape else 1


def squash(expr):
    return Call("np.tanh", [expr], shape=expr.shape)


class Interp:
    def __init__(self, helpers: dict[str, FunctionDef]):
        self.helpers = helpers

    # -------------------------------------------------------------- expressions
    def expr(self, e, env) -> float:
        """An upper bound of |e|, repairing the subexpressions of e in place."""
        if isinstance(e, Num):
            return abs(e.value)
        if isinstance(e, Name):
            return env.get(e.id, LIMIT)
        if isinstance(e, Bin):
            return self.binop(e, env)
        if isinstance(e, Unary):
            b = self.expr(e.operand, env)
            return 1.0 if e.op == "not" else b
        if isinstance(e, Call):
            return self.call(e, env)
        if isinstance(e, Method):
            b = self.expr(e.obj, env)
            for a in e.args:
                self.expr(a, env)
            return b * size(e.obj.shape) if e.name == "sum" else b
        if isinstance(e, Attr):
            b = self.expr(e.obj, env)
            return float(max(e.obj.shape or (1,))) if e.name == "shape" else b
        if isinstance(e, Index):
            b = self.expr(e.obj, env)
            for item in e.items:
                self.expr(item, env)
            return b
        if isinstance(e, Slice):
            for c in e.children():
                self.expr(c, env)
            return 0.0
        if isinstance(e, (Compare, BoolOp)):
            for c in e.children():
                self.expr(c, env)
            return 1.0
        if isinstance(e, IfExp):
            self.expr(e.test, env)
            return max(self.expr(e.body, env), self.expr(e.orelse, env))
        if isinstance(e, (ListLit, TupleLit)):
            return max([self.expr(i, env) for i in e.items], default=0.0)
        raise TypeError(e)

    def binop(self, e, env):
        a = self.expr(e.left, env)
        if e.op == "**" and isinstance(e.right, Num):
            k = e.right.value
            if a > 1.0 and a ** k > LIMIT and e.left.shape is not None:
                e.left = squash(e.left)
                a = 1.0
            return a ** k if k >= 0 else 2.0 ** -k  # negative powers only of bases >= 0.5
        b = self.expr(e.right, env)
        if e.op in "+-":
            return a + b
        if e.op == "*":
            return a * b
        if e.op == "@":
            return a * b * max(e.left.shape or (1,))
        if e.op == "/":
            return a / abs(e.right.value) if isinstance(e.right, Num) else 2.0 * a
        if e.op == "%":
            return b
        raise TypeError(e.op)

    def call(self, e, env):
        f, args = e.func, e.args
        if f == "np.exp":
            b = self.expr(args[0], env)
            if b > EXP_ARG:
                args[0] = squash(args[0])
                b = 1.0
            return math.exp(b)
        if f == "np.prod":
            b = self.expr(args[0], env)
            n = size(args[0].shape)
            if b > 1.0 and b ** n > LIMIT:
                args[0] = squash(args[0])
                b = 1.0
            return b ** n
        if f in self.helpers:
            return self.helper(self.helpers[f], [self.expr(a, env) for a in args])
        bs = [self.expr(a, env) for a in args]
        for _, v in e.kwargs:
            self.expr(v, env)
        if f in ("np.sin", "np.cos", "np.tanh"):
            return 1.0
        if f == "np.log":
            return math.log(max(bs[0], 1.0)) + 0.7
        if f == "np.sqrt":
            return math.sqrt(bs[0])
        if f == "np.sum":
            return bs[0] * size(args[0].shape)
        if f == "np.dot":
            return bs[0] * bs[1] * max(args[0].shape or (1,))
        if f in ("np.zeros", "np.empty", "np.zeros_like"):
            return 0.0
        if f in ("np.ones", "np.ones_like"):
            return 1.0
        if f == "len":
            return float(max(args[0].shape or (1,))) if args[0].shape is not None else LIMIT
        # abs, maximum, minimum, mean, max, min, copy, float, range, ...: the largest argument
        return max(bs, default=0.0)

    def helper(self, fn, arg_bounds):
        env = dict(zip(fn.params, arg_bounds))
        saved, self.returned = self.returned, []
        self.block(fn.body, env)
        out = max(self.returned, default=0.0)
        self.returned = saved
        return out

    # --------------------------------------------------------------- statements
    def value(self, holder, attr, env, limit=LIMIT):
        """Bound of holder.<attr>, squashing it by tanh when it could exceed `limit`."""
        e = getattr(holder, attr)
        b = self.expr(e, env)
        if b > limit and e.shape is not None:
            setattr(holder, attr, squash(e))
            b = 1.0
        return b

    def block(self, body, env):
        for k, stmt in enumerate(body):
            if isinstance(stmt, AugAssign):
                trial = Bin(stmt.op, stmt.target, stmt.value, shape=stmt.target.shape)
                if self.expr(trial, dict(env)) > LIMIT:
                    stmt = body[k] = Assign(stmt.target, squash(trial))
            self.stmt(stmt, env)

    def stmt(self, s, env):
        if isinstance(s, Assign):
            b = self.value(s, "value", env)
            self.store(s.target, b, env)
        elif isinstance(s, AugAssign):
            b = self.expr(Bin(s.op, s.target, s.value, shape=s.target.shape), env)
            self.store(s.target, b, env)
        elif isinstance(s, ExprStmt):
            v = s.value
            if isinstance(v, Method) and v.name == "append" and isinstance(v.obj, Name):
                b = self._arg_value(v, env)
                env[v.obj.id] = max(env.get(v.obj.id, 0.0), b)
            else:
                self.expr(v, env)
        elif isinstance(s, Return):
            self.returned.append(self.value(s, "value", env, limit=5 * LIMIT))
        elif isinstance(s, (Break, Continue)):
            pass
        elif isinstance(s, If):
            self.expr(s.test, env)
            left, right = dict(env), dict(env)
            self.block(s.body, left)
            self.block(s.orelse, right)
            join(env, left, right)
        elif isinstance(s, For):
            self.expr(s.iter, env)
            for _ in range(max(s.trips, 1)):
                inner = dict(env)
                for name, (kind, src) in zip(s.targets, s.binds):
                    inner[name] = float(s.trips) if kind == "index" else self.expr(src, env)
                self.block(s.body, inner)
                join(env, env, inner)
        elif isinstance(s, While):
            for _ in range(max(s.cap, 1)):
                self.expr(s.test, env)
                inner = dict(env)
                self.block(s.body, inner)
                join(env, env, inner)
        else:
            raise TypeError(s)

    def _arg_value(self, call, env):
        e = call.args[0]
        b = self.expr(e, env)
        if b > LIMIT and e.shape is not None:
            call.args[0] = squash(e)
            b = 1.0
        return b

    def store(self, target, b, env):
        if isinstance(target, Name):
            env[target.id] = b
        elif isinstance(target, Index):  # a[i] = v: a now holds its old elements and v
            for item in target.items:
                self.expr(item, env)
            name = target.obj.id
            env[name] = max(env.get(name, 0.0), b)


def join(out, a, b):
    for name in set(a) | set(b):
        out[name] = max(a.get(name, 0.0), b.get(name, 0.0))


def repair(module, param_bounds: dict[str, float]) -> None:
    """Squash, in place, every value of the module's last function that could exceed LIMIT."""
    *helpers, main = module.functions
    interp = Interp({h.name: h for h in helpers})
    interp.returned = []
    interp.block(main.body, dict(param_bounds))
