"""Part of pass 4 (desugar.py), run first: comprehensions, sums over sequences, arrays from
lists, and text, lowered to statements the later passes already differentiate.

Guarantees to the rest of desugar (the tree keeps the user's line numbers):
- No ListComp or GeneratorExp is left. `[e for v in xs if c]` becomes, before
  the statement holding it, `_cK = []` and a loop appending `e` (a `for` per
  generator, an `if` per condition); the comprehension's variable is renamed
  when the function uses its name elsewhere (Python scopes it to the
  comprehension). `sum(<comprehension or sequence>, start)` accumulates in a
  loop (`_accK = sum_start(start, sum_zero(terms)); for ...: _accK = _accK + e`), exactly
  Python's sum; for a generator, `terms` is a list filled by a copy of its loops
  under `if sum_probe():`, which never runs (numba reads the terms' type from
  it, so a sum of array terms from a number start compiles: runtime/effects.py).
  `max`/`min` of one sequence fold it with the two-argument builtin.
- `np.array(L)`/`np.asarray(L)` of a list variable (a name only ever bound to
  a list display or comprehension) becomes `_aK = empty_rows(L)` and a loop
  `_aK[k] = L[k]`; a list variable, list display or comprehension passed to any
  other NumPy function is passed as `np.array(...)` (NumPy converts it so).
- f-strings are `format_text(template, values...)` (formatting.py), `"..." % v` is
  `format_percent("...", v)`, `print(...)` is `print_values(sep, end, ...)`;
  none carries a gradient (runtime/effects.py).
- A comprehension whose evaluation Python makes conditional (in `a if c else b`,
  after `and`/`or`, in a `while` condition) is refused with the user's line.
"""
from __future__ import annotations

import builtins
import copy
import itertools

import gast
import numpy as np

from .. import runtime
from ..errors import SrcgradSyntaxError
from ..rules import differentiable_params, lookup
from ..rules.joining import SEQUENCE_CALLS
from ..syntax import dotted_name, walk
from ..syntax import name as _name
from .formatting import Formatting

_COMPREHENSIONS = (gast.ListComp, gast.GeneratorExp)
LIST_READERS = ("len", "empty_rows", "sum_zero")  # calls that take a list as it is


def _const(value):
    return gast.Constant(value=value, kind=None)


def _call(func: str, *args):
    return gast.Call(func=_name(func), args=list(args), keywords=[])


def _assign(target: str, value, where):
    stmt = gast.Assign(targets=[_name(target, store=True)], value=value, type_comment=None)
    return gast.copy_location(stmt, where)


def _list_names(tree) -> set[str]:
    """Names every assignment of which binds a list display or a comprehension."""
    kinds: dict[str, set] = {}
    for node in walk(tree):
        targets = []
        if isinstance(node, gast.Assign):
            targets = [(t, node.value) for t in node.targets]
        elif isinstance(node, (gast.AugAssign, gast.AnnAssign, gast.For)):
            targets = [(node.target, None)]
        elif isinstance(node, gast.comprehension):
            targets = [(node.target, None)]
        for target, value in targets:
            for n in walk(target):
                if isinstance(n, gast.Name):
                    listy = n is target and isinstance(value, (gast.List, gast.ListComp))
                    kinds.setdefault(n.id, set()).add(listy)
    return {n for n, k in kinds.items() if k == {True}}


class _Lowering(Formatting):
    def __init__(self, resolved, taken: set[str]):
        self.resolved = resolved
        self.parsed = resolved.parsed
        self.taken = taken
        self.ids = itertools.count(1)
        self.made: set[str] = set()  # names this pass made
        self.lists = _list_names(resolved.tree)
        self.counts: dict[str, int] = {}
        for node in walk(resolved.tree):
            if isinstance(node, gast.Name):
                self.counts[node.id] = self.counts.get(node.id, 0) + 1

    def fresh(self, stem: str) -> str:
        while True:
            candidate = f"_{stem}{next(self.ids)}"
            if candidate not in self.taken:
                self.taken.add(candidate)
                self.made.add(candidate)
                return candidate

    def fail(self, node, what, hint):
        raise SrcgradSyntaxError(f"srcgrad cannot differentiate {self.parsed.func.__qualname__}: "
                                 f"{what} is not supported; {hint}", self.parsed.loc(node))

    def builtin(self, call, name) -> bool:
        return (isinstance(call, gast.Call) and isinstance(call.func, gast.Name)
                and call.func.id == name
                and self.resolved.callees.get(name) is getattr(builtins, name))

    def helper(self, name: str):
        self.resolved.callees.setdefault(name, getattr(runtime, name, None) or getattr(builtins, name))
        return name

    # ---- statements ------------------------------------------------------------------
    def block(self, stmts) -> list:
        out = []
        for stmt in stmts:
            pre: list = []
            lowered = self.statement(stmt, pre)
            out += self.bind_in_place(pre, lowered)
        return out

    def bind_in_place(self, pre, stmt) -> list:
        """`feats = _aK` after the statements building _aK: they build `feats` itself (a
        second name would be a copy: _aK is written into), unless they read feats."""
        value, targets = getattr(stmt, "value", None), getattr(stmt, "targets", [None])
        if not (isinstance(stmt, gast.Assign) and len(targets) == 1 and pre
                and isinstance(targets[0], gast.Name) and isinstance(value, gast.Name)
                and value.id in self.made):
            return pre + [stmt]
        target = targets[0].id
        if any(isinstance(n, gast.Name) and n.id == target for s in pre for n in walk(s)):
            return pre + [stmt]
        for n in (n for s in pre for n in walk(s)):
            if isinstance(n, gast.Name) and n.id == value.id:
                n.id = target
        return pre

    def statement(self, stmt, pre):
        self.where = stmt
        if isinstance(stmt, gast.For):
            stmt.iter = self.expr(stmt.iter, pre)
            stmt.body = self.block(stmt.body)
            return stmt
        if isinstance(stmt, gast.While):
            if any(isinstance(n, _COMPREHENSIONS) for n in walk(stmt.test)):
                self.fail(stmt.test, "a comprehension in a while condition",
                          "compute it before the loop and again at the end of the body")
            stmt.body = self.block(stmt.body)
            return stmt
        if isinstance(stmt, gast.If):
            stmt.test = self.expr(stmt.test, pre)
            stmt.body, stmt.orelse = self.block(stmt.body), self.block(stmt.orelse)
            return stmt
        if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.ListComp)
                and not any(isinstance(n, gast.Name) and n.id == stmt.targets[0].id
                            for n in walk(stmt.value))):
            self.comprehension(stmt.value, pre, stmt.targets[0].id)  # `ys = [...]`: built in ys
            return pre.pop()
        for field, value in gast.iter_fields(stmt):
            if isinstance(value, gast.expr):
                setattr(stmt, field, self.expr(value, pre))
            elif isinstance(value, list):
                setattr(stmt, field, [self.expr(v, pre) if isinstance(v, gast.expr) else v
                                      for v in value])
        return stmt

    # ---- expressions -----------------------------------------------------------------
    def expr(self, node, pre):
        """`node` with every form above lowered; hoisted statements appended to `pre`."""
        if isinstance(node, (gast.IfExp, gast.BoolOp)):
            later = [node.body, node.orelse] if isinstance(node, gast.IfExp) else node.values[1:]
            for part in later:
                if any(isinstance(n, _COMPREHENSIONS) for n in walk(part)):
                    self.fail(part, "a comprehension evaluated only on one side of a conditional "
                              "expression or of and/or", "compute it in a statement before")
        if isinstance(node, gast.Call):
            special = self.call(node, pre)
            if special is not None:
                return special
        if isinstance(node, gast.ListComp):
            return _name(self.comprehension(node, pre))
        if isinstance(node, gast.GeneratorExp):
            self.fail(node, "a generator expression used as a value",
                      "pass it to sum(), max(), min() or list(), or make it a list comprehension")
        if isinstance(node, gast.JoinedStr):
            return self.fstring(node, pre)
        if (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mod)
                and isinstance(node.left, gast.Constant) and isinstance(node.left.value, str)):
            return _call(self.helper("format_percent"), node.left, self.expr(node.right, pre))
        for field, value in gast.iter_fields(node):
            if isinstance(value, gast.expr):
                setattr(node, field, self.expr(value, pre))
            elif isinstance(value, list):
                setattr(node, field, [self.expr(v, pre) if isinstance(v, (gast.expr, gast.keyword))
                                      else v for v in value])
        return node

    def call(self, node, pre):
        """A call this module lowers (sum, max, min, list, print, NumPy on lists), or None."""
        args = node.args
        if self.builtin(node, "sum") and len(args) in (1, 2) and not node.keywords:
            start = self.expr(args[1], pre) if len(args) == 2 else _const(0)
            return _name(self.accumulate(args[0], start, pre))
        if (self.builtin(node, "max") or self.builtin(node, "min")) and len(args) == 1 \
                and not node.keywords:
            return _name(self.fold(node.func.id, self.sequence(args[0], pre), pre))
        if self.builtin(node, "list") and len(args) == 1 and isinstance(args[0], _COMPREHENSIONS):
            return _name(self.sequence(args[0], pre))
        if self.builtin(node, "print"):
            return self.printing(node, pre)
        spelled = dotted_name(node.func) or ""
        if not spelled.startswith("np."):
            return None
        node.args = [self.expr(a, pre) if not isinstance(a, _COMPREHENSIONS) else
                     _name(self.sequence(a, pre)) for a in args]
        node.keywords = [self.expr(k, pre) for k in node.keywords]
        first = node.args[0] if node.args else None
        if (spelled in ("np.array", "np.asarray", "np.stack") and len(node.args) == 1
                and not node.keywords and isinstance(first, gast.Name) and first.id in self.lists):
            return _name(self.rows(first.id, pre))
        rule = lookup(self.resolved.callees.get(spelled))
        if spelled not in SEQUENCE_CALLS and rule is not None and rule.vjp is not None:
            data = len(differentiable_params(rule.vjp))  # the rest are options (shapes, axes)
            node.args = [self.as_array(a, pre) if k < data else a
                         for k, a in enumerate(node.args)]
        return node

    def as_array(self, arg, pre):
        """A list variable or display passed to a NumPy function: as np.array(...)."""
        if isinstance(arg, gast.Name) and arg.id in self.lists:
            return _name(self.rows(arg.id, pre))
        if isinstance(arg, gast.List):
            self.resolved.callees.setdefault("np.array", np.array)
            return gast.Call(func=gast.Attribute(value=_name("np"), attr="array", ctx=gast.Load()),
                             args=[arg], keywords=[])
        return arg

    def sequence(self, node, pre) -> str:
        """The name of a list holding the values of a comprehension or sequence expression."""
        if isinstance(node, _COMPREHENSIONS):
            return self.comprehension(node, pre)
        value = self.expr(node, pre)
        if isinstance(value, gast.Name):
            return value.id
        held = self.fresh("s")
        pre.append(_assign(held, value, self.where))
        return held

    # ---- the loops -------------------------------------------------------------------
    def loops(self, node, innermost, pre):
        """Statements running `innermost(body_pre)` once per element of a comprehension."""
        renames = self.scoped_names(node)
        scoped = [node.elt] + [part for k, gen in enumerate(node.generators)
                               for part in [gen.target, *gen.ifs] + ([gen.iter] if k else [])]
        for n in (n for part in scoped for n in walk(part)):  # the first iterable is
            if isinstance(n, gast.Name) and n.id in renames:      # evaluated outside
                n.id = renames[n.id]
        outer: list = []
        holder = outer
        for k, gen in enumerate(node.generators):
            if gen.is_async:
                self.fail(node, "an async comprehension", "use a plain loop")
            iterable = self.expr(gen.iter, pre if k == 0 else holder)
            loop = gast.copy_location(gast.For(target=gen.target, iter=iterable, body=[],
                                               orelse=[], type_comment=None), self.where)
            holder.append(loop)
            holder = loop.body
            for cond in gen.ifs:
                test = self.expr(cond, holder)
                branch = gast.copy_location(gast.If(test=test, body=[], orelse=[]), self.where)
                holder.append(branch)
                holder = branch.body
        holder += innermost(holder)
        self.helper("range")
        self.helper("len")
        return outer

    def scoped_names(self, node) -> dict[str, str]:
        """Comprehension variables whose names the function uses elsewhere -> fresh names."""
        inside: dict[str, int] = {}
        for n in walk(node):
            if isinstance(n, gast.Name):
                inside[n.id] = inside.get(n.id, 0) + 1
        targets = {n.id for gen in node.generators for n in walk(gen.target)
                   if isinstance(n, gast.Name)}
        return {t: self.fresh(f"c_{t}_") for t in sorted(targets)
                if self.counts.get(t, 0) > inside.get(t, 0)}

    def comprehension(self, node, pre, out: str | None = None) -> str:
        out = out or self.fresh("c")
        self.lists.add(out)
        pre.append(_assign(out, gast.List(elts=[], ctx=gast.Load()), self.where))
        pre += self.loops(node, self.appending(node, out), pre)
        return out

    def appending(self, node, out: str):
        """The innermost statement of a comprehension's loops: `out.append(<element>)`."""
        def append(holder):
            value = self.expr(node.elt, holder)
            call = gast.Call(func=gast.Attribute(value=_name(out), attr="append", ctx=gast.Load()),
                             args=[value], keywords=[])
            return [gast.copy_location(gast.Expr(value=call), self.where)]
        return append

    def probe(self, node, pre) -> str:
        """`_pK = []; if sum_probe(): <node's loops appending to _pK>`: a list that stays
        empty, typed by numba as a list of the terms (sum_start reads their rank)."""
        items = self.fresh("p")
        pre.append(_assign(items, gast.List(elts=[], ctx=gast.Load()), self.where))
        never, copied = [], copy.deepcopy(node)  # before node itself is lowered
        never += self.loops(copied, self.appending(copied, items), never)
        test = _call(self.helper("sum_probe"))
        pre.append(gast.copy_location(gast.If(test=test, body=never, orelse=[]), self.where))
        return items

    def accumulate(self, source, start, pre) -> str:
        """Python's sum: start + e0 + e1 + ..., left to right. The accumulator starts at
        sum_start(start, sum_zero(terms)), shaped like the terms when compiled (array terms
        and a number start compile), and sum_check says when no array term came."""
        acc, count = self.fresh("acc"), self.fresh("cnt")
        if not isinstance(start, (gast.Name, gast.Constant)):
            held = self.fresh("st")
            pre.append(_assign(held, start, self.where))
            start = _name(held)
        comprehension = isinstance(source, _COMPREHENSIONS)
        items = self.probe(source, pre) if comprehension else self.sequence(source, pre)
        zero = self.fresh("z")  # a constant: the terms (in the probe) stay inactive
        pre.append(_assign(zero, _call(self.helper("sum_zero"), _name(items)), self.where))
        pre.append(_assign(acc, _call(self.helper("sum_start"), copy.deepcopy(start),
                                      _name(zero)), self.where))
        pre.append(_assign(count, _const(0), self.where))

        def add(holder, value=None):
            value = value if value is not None else self.expr(source.elt, holder)
            total = gast.BinOp(left=_name(acc), op=gast.Add(), right=value)
            more = gast.BinOp(left=_name(count), op=gast.Add(), right=_const(1))
            return [_assign(acc, total, self.where), _assign(count, more, self.where)]
        if comprehension:
            pre += self.loops(source, add, pre)
        else:
            item = self.fresh("e")
            loop = gast.For(target=_name(item, store=True), iter=_name(items),
                            body=add(None, _name(item)), orelse=[], type_comment=None)
            pre.append(gast.copy_location(loop, self.where))
        check = _call(self.helper("sum_check"), _name(acc), copy.deepcopy(start), _name(count))
        pre.append(gast.copy_location(gast.Expr(value=check), self.where))
        return acc

    def fold(self, which: str, items: str, pre) -> str:
        """max(items) / min(items): the two-argument builtin over the list, left to right."""
        best, k = self.fresh("m"), self.fresh("k")
        pre.append(_assign(best, gast.Subscript(value=_name(items), slice=_const(0),
                                                ctx=gast.Load()), self.where))
        step = gast.Call(func=_name(which), args=[
            _name(best), gast.Subscript(value=_name(items), slice=_name(k), ctx=gast.Load())],
            keywords=[])
        loop = gast.For(target=_name(k, store=True),
                        iter=_call(self.helper("range"), _const(1), _call(self.helper("len"),
                                                                         _name(items))),
                        body=[_assign(best, step, self.where)], orelse=[], type_comment=None)
        pre.append(gast.copy_location(loop, self.where))
        return best

    def rows(self, items: str, pre) -> str:
        """np.array(items) of a list variable: an array filled one item per row."""
        out, k = self.fresh("a"), self.fresh("k")
        pre.append(_assign(out, _call(self.helper("empty_rows"), _name(items)), self.where))
        write = gast.Assign(targets=[gast.Subscript(value=_name(out), slice=_name(k),
                                                    ctx=gast.Store())],
                            value=gast.Subscript(value=_name(items), slice=_name(k),
                                                 ctx=gast.Load()), type_comment=None)
        loop = gast.For(target=_name(k, store=True),
                        iter=_call(self.helper("range"), _call(self.helper("len"), _name(items))),
                        body=[gast.copy_location(write, self.where)], orelse=[], type_comment=None)
        pre.append(gast.copy_location(loop, self.where))
        return out


def lower(resolved, taken: set[str]) -> None:
    """Lower the forms in the module docstring in `resolved.tree`, in place."""
    if not any(isinstance(n, (gast.ListComp, gast.GeneratorExp, gast.JoinedStr, gast.Call,
                              gast.BinOp)) for n in walk(resolved.tree)):
        return
    pass_ = _Lowering(resolved, taken)
    pass_.where = resolved.tree
    resolved.tree.body = pass_.block(resolved.tree.body)
