"""The compiled form checks its own element indices, so numba compiles it without
boundscheck (whose tests in the innermost loops cost up to a third of ode's gradient).
`own_bounds(func, kinds)` returns True, having inserted checks into `func`, when every
element access of an array in it is *covered*: whenever it runs, its index is in bounds
or an IndexError was raised before it. backend/fused.py then compiles the function with
boundscheck=False. Otherwise (False) `func` is left as it was and keeps numba's checks.

An *access* is a subscript of a name of array kind (analysis/kinds.py); its index is one
component or a tuple of them, position p checked against `A.shape[p]` by NumPy's rule
(-extent <= i < extent; without boundscheck numba still wraps a negative index). A slice
component needs no check (NumPy clips slices). An integer component must be a *pure*
integer expression: int names, int constants, extents `A.shape[k]` and int elements
`n[k]` of tuples, `+ - *` and unary `-` of these, `slice_at` of these (flat_views.py's
offsets; it cannot raise). Anything
else makes the function keep boundscheck: another index (an array, a bool, None, an
index read from memory or computed by a call), a subscript of something not known to be
an array, tuple or list (numba checks the indices of tuples and lists itself), an access
in a `while` test, a `for` target, a lambda or comprehension, or after a short circuit
(`and`, `or`, `a if c else b`), a walrus, a `del`. Each integer component is covered by
the first rule that applies:

1. Proof. It is v, or c + v, for the variable v of an enclosing `for v in range(E)`
   (or `range(c0, E)`, `range(max(e, c0), E)`, `range(min(e, E))`, `range(E - 1, c0,
   -1)`, c0 a constant >= 0, >= -1 in the last), where facts of the block before that
   loop (analysis/extents.py: `S = A.shape`, `same_shape(A, S)`, `np.empty(S)`, ...)
   make E A's extent p (c = 0), or max(0, A.shape[p] - c) for c >= 0 (flat_views.py's
   slices: `A[1 + _k, slice_at(j, A.shape[1]) + _j]`), and the loop's body rebinds none
   of A, v and the facts' names. Then 0 <= c + v < A.shape[p] wherever the access runs.
2. Hoisted. The statement is directly in the body of its innermost loop L, `for v in
   range(a[, b[, c]])` with pure arguments, whose body has no break or continue of its
   own and no return or try, and rebinds neither v nor A; the component is invariant in
   L (none of its names rebound in L's body, v not among them) or v plus or minus an
   invariant (directly, or through a name bound once in L's body, directly in it before
   the statement, to such a sum). Then just before L, under `if a < b:` (`a > b` for a
   step of -1, `trip_count(a, b, c) > 0` for others: A and the invariant are bound if L
   runs, since its first iteration reads them, and may not be otherwise), `index_in` of
   the invariant, or of both ends a + offset and b - c + offset (steps of 1 and -1: the
   values between are in bounds if the ends are; a lower end that is a constant >= 0 is
   if the upper one is), or `span_in(A.shape[p], a, b, c, coef, offset)` (other steps)
   raises IndexError unless coef * v + offset indexes the extent for every v the loop
   takes: L runs the statement at every iteration unless something raised first, with
   the same extent and the same component values.
3. Checked. `index_in(A.shape[p], component)` before the statement (before the `if` or
   `for` whose test or range reads it); nothing between changes its names.
A check already made covers the same component (a name or a constant) of the same array
where neither has been rebound since: a check before the statement, and inside a loop L
the invariant components rule 2 checked before L (A and the component are not rebound
in L). flat_views.py's `index_in(A.shape[k], e)` statements (numba's check of a view it
removed) are covered as accesses of A by e, by the same rules, and dropped. The checks of
a run of simple statements are made as early in the run as their names allow (the run is
left only at its end or by an exception).

So the function raises an IndexError before any access out of bounds, where numba's
check would have raised one at that access, or raises something else first (every check
is evaluated where the statements it precedes would raise if it fails, or earlier where
they would later): a compiled form that raises is discarded for that call and the
generated function runs, raising the user's error at the user's line (a form never
writes into its arguments: backend/fused.py). Where nothing fails, every value is
computed as before: the checks only read.
"""
from __future__ import annotations

import copy
from collections import Counter

import gast

from ..analysis import kinds as K
from ..analysis.extents import (ZERO, bounded_range, int_value, known, leaves_only_at_end,
                                learn, names_of, plus, range3, shape_elements, sums, without)
from ..frontend.trees import ByNode, assigned, reads
from ..syntax import call, const, is_call, is_comment, name, walk


class _Refused(Exception):
    """An access the rules do not cover: the function keeps numba's boundscheck."""


def own_bounds(func: gast.FunctionDef, kinds: dict) -> bool:
    """Insert the checks and return True if every access of `func` is covered (above)."""
    plan = _Plan(kinds)
    try:
        for node in walk(func):
            if isinstance(node, (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp,
                                 gast.GeneratorExp, gast.NamedExpr, gast.Delete,
                                 gast.Yield, gast.YieldFrom, gast.Await)) \
                    or (isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef))
                        and node is not func):
                raise _Refused()
        plan.block(func.body, [], set())
    except _Refused:
        return False
    _insert(func, plan.before, plan.pairs, plan.drop, plan.bound)
    return True


_SIMPLE = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.Pass)


def _insert(func, before: dict, pairs: dict, drop: set, bound):
    """Insert the planned statements. A run of simple statements gets its checks as early
    as the names they read allow, after its comments (a run is left only at its end or by
    an exception: a check made earlier raises only where a later statement would)."""
    def block(stmts):
        at, start = {}, 0  # statement index -> the pairs checked just before it
        binds = [bound(stmt) for stmt in stmts]
        for k, stmt in enumerate(stmts):
            if not isinstance(stmt, _SIMPLE):
                at.setdefault(k, []).extend(pairs.get(id(stmt), []))
                start = k + 1
                continue
            for pair in pairs.get(id(stmt), []):
                names = reads(pair[0]) | reads(pair[1])
                place = max([start] + [j + 1 for j in range(start, k) if binds[j] & names])
                while place < k and is_comment(stmts[place]):
                    place += 1
                at.setdefault(place, []).append(pair)
        out = []
        for k, stmt in enumerate(stmts):
            group = list({gast.dump(gast.Tuple(elts=list(p), ctx=gast.Load())): p
                          for p in at.get(k, [])}.values())
            out += _checks(group) + before.get(id(stmt), [])
            for field in ("body", "orelse"):
                if isinstance(getattr(stmt, field, None), list):
                    inner = block(getattr(stmt, field))  # a body whose checks all moved
                    if all(is_comment(s) for s in inner) and (inner or field == "body"):
                        inner.append(gast.Pass())  # out of it may hold comments only
                    setattr(stmt, field, inner)
            if id(stmt) not in drop:
                out.append(stmt)
        return out
    func.body = block(func.body)


class _Loop:
    """An enclosing loop: its node, what its body binds, the proof (rule 1) it gives and,
    for a `for` over a range it may hoist checks out of (rule 2), its range's arguments
    and the names bound once at its top to v + invariant."""

    def __init__(self, node, facts, plan):
        self.node, self.binds = node, set().union(*map(plan.bound, node.body))
        self.stores = Counter(n.id for s in node.body for n in walk(s)
                              if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
        self.var = self.args = None
        self.proof = None  # (v, {(array, position, c): c + v indexes it while v runs})
        self.sums = {}  # name -> offset expression (the name holds v + offset)
        self.checks = {}  # key -> (extent, index) or a span_in statement, made before it
        self.facts = set()  # ("in", ...) facts its invariant checks give inside it
        if not (isinstance(node, gast.For) and isinstance(node.target, gast.Name)):
            return
        v = node.target.id
        it = node.iter
        if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name)
                and it.func.id == "range" and 1 <= len(it.args) <= 3 and not it.keywords) \
                or v in self.binds:
            return
        args = it.args
        extent = bounded_range(args)
        if extent is not None and not set(extent[1:]) & self.binds:
            self.proof = (v, {(f[1], f[2], ZERO if f[0] == "dim" else f[4]) for f in facts
                              if f[0] in ("dim", "span") and f[3] == extent
                              and not names_of(f) & self.binds})
        if node.orelse or not leaves_only_at_end(node.body) \
                or not all(plan.pure(a) for a in args):
            return
        self.var, self.args = v, list(args)


class _Plan:
    def __init__(self, kinds):
        self.kinds, self.before, self.binds = kinds, {}, ByNode()
        self.pairs = {}  # id of a statement -> (extent, index) to check just before it
        self.drop = set()  # ids of index_in statements the plan covers

    def bound(self, stmt) -> set:
        """`assigned([stmt])` once per statement (checks `_insert` adds bind nothing)."""
        return self.binds(stmt, lambda: assigned([stmt]))

    # --- walking the blocks, with the facts of rule 1 -----------------------------------

    def block(self, stmts, loops, facts):
        top = loops[-1] if loops else None
        direct = top is not None and stmts is top.node.body
        for stmt in stmts:
            if isinstance(stmt, gast.While):
                if _accesses(stmt.test, self.kinds):
                    raise _Refused()
                self.nested(stmt, loops, facts)
            elif isinstance(stmt, gast.For):
                self.accesses(stmt.iter, stmt, loops, False, facts)
                if _accesses(stmt.target, self.kinds):
                    raise _Refused()
                self.nested(stmt, loops, facts)
            elif isinstance(stmt, gast.If):
                self.accesses(stmt.test, stmt, loops, False, facts)
                for part in (stmt.body, stmt.orelse):
                    self.block(part, loops, without(facts, self.bound(stmt)))
            elif isinstance(stmt, (gast.With, gast.Try, gast.AsyncFor, gast.AsyncWith)):
                raise _Refused()
            else:
                if isinstance(stmt, gast.Assign) and any(  # `i, a[i] = ...`: i is new there
                        isinstance(t, (gast.Tuple, gast.List)) for t in stmt.targets):
                    raise _Refused()
                done = self.index_check(stmt, loops, direct, facts)
                facts = facts | (self.accesses(stmt, stmt, loops, direct, facts)
                                 if done is None else done)
                if direct:
                    self.note_sum(stmt, top)
            facts = without(facts, self.bound(stmt)) | learn(stmt, facts, self.kinds)

    def nested(self, stmt, loops, facts):
        inner = without(facts, self.bound(stmt))
        loop = _Loop(stmt, facts, self)
        self.block(stmt.body, loops + [loop], inner)
        self.block(stmt.orelse, loops, inner)
        if loop.checks:  # only if the loop runs: what they read is bound only then
            start, stop, step = copy.deepcopy(range3(loop.args))
            ran = gast.Compare(left=start, ops=[gast.Lt()], comparators=[stop]) \
                if int_value(step) == 1 else \
                gast.Compare(left=start, ops=[gast.Gt()], comparators=[stop]) \
                if int_value(step) == -1 else \
                gast.Compare(left=call("trip_count", start, stop, step), ops=[gast.Gt()],
                             comparators=[const(0)])
            pairs = [c for c in loop.checks.values() if isinstance(c, tuple)]
            spans = [c for c in loop.checks.values() if not isinstance(c, tuple)]
            self.before.setdefault(id(stmt), []).append(
                gast.If(test=ran, body=_checks(pairs) + spans, orelse=[]))

    def note_sum(self, stmt, loop):
        """`t = v + offset` directly in loop L's body, t bound nowhere else in it."""
        if loop.var is None or not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                                    and isinstance(stmt.targets[0], gast.Name)):
            return
        target = stmt.targets[0].id
        if loop.stores[target] != 1:
            return
        affine = self.affine(stmt.value, loop)
        if affine is not None and affine[0] == 1:
            loop.sums[target] = affine[1]

    # --- the accesses of one statement (or header) --------------------------------------

    def accesses(self, node, stmt, loops, direct, facts) -> set:
        """Plan the checks of `node`'s accesses (part of `stmt`); the facts that hold
        after them."""
        checked = set()
        for sub, index in _accesses(node, self.kinds):
            for p, part in enumerate(index):
                if not isinstance(part, gast.Slice):  # a slice's bounds are found too
                    checked |= self.component(sub.value.id, p, part, stmt, loops, direct,
                                              facts | checked)
        return checked

    def component(self, array, p, part, stmt, loops, direct, facts) -> set:
        """Cover one integer component (rules 1-3); the fact it gives, if it names one."""
        if not self.pure(part):
            raise _Refused()
        value = known(part)
        fact = {("in", array, p, value)} if value is not None else set()
        ways = {(v.id, gast.dump(c)) for v, c in sums(part)}
        if fact & facts or any(fact & loop.facts or loop.proof is not None and any(
                v == loop.proof[0] and (array, p, c) in loop.proof[1] for v, c in ways)
                for loop in loops):
            return fact
        if not (direct and self.hoist(array, p, part, loops[-1])):
            self.pairs.setdefault(id(stmt), []).append((_extent(array, p), copy.deepcopy(part)))
        return fact

    def index_check(self, stmt, loops, direct, facts):
        """flat_views.py's `index_in(A.shape[k], e)` is covered as an access of A by e (it
        stands for numba's check of a view it removed) and dropped; the facts after it."""
        call_ = stmt.value if isinstance(stmt, gast.Expr) else None
        if not (is_call(call_, "index_in") and len(call_.args) == 2):
            return None
        where = shape_elements(gast.Tuple(elts=[call_.args[0]], ctx=gast.Load()))
        if not where or not K.is_array(self.kinds.get(where[0][0])):
            return None
        self.drop.add(id(stmt))
        return self.component(*where[0], call_.args[1], stmt, loops, direct, facts)

    def hoist(self, array, p, part, loop) -> bool:
        if loop.var is None or array in loop.binds:
            return False
        affine = self.affine(part, loop)
        if affine is None:
            return False
        coef, offset = affine
        if coef == 0 and known(offset) is not None:  # checked before L: holds in it
            loop.facts.add(("in", array, p, known(offset)))
        start, stop, step = range3(loop.args)
        if int_value(step) in (1, -1):  # the values' ends: start and stop - step
            ends = [offset] if coef == 0 else [
                plus(start, offset), plus(plus(stop, const(-int_value(step))), offset)]
            lower = int_value(ends[-1] if int_value(step) < 0 else ends[0])
            if coef and lower is not None and lower >= 0:
                del ends[int_value(step) < 0]  # the lower end, >= 0: in bounds if the upper is
            for end in ends:
                loop.checks.setdefault((array, p, gast.dump(end)),
                                       (_extent(array, p), copy.deepcopy(end)))
        else:
            loop.checks.setdefault((array, p, coef, gast.dump(offset)), gast.Expr(value=call(
                "span_in", _extent(array, p), *copy.deepcopy([start, stop, step]),
                const(coef), copy.deepcopy(offset))))
        return True

    def affine(self, expr, loop):
        """(0, expr) if `expr` is invariant in the loop, (1, offset) if it is v + offset,
        else None."""
        v = loop.var
        if self.invariant(expr, loop):
            return 0, expr
        if isinstance(expr, gast.Name):
            if expr.id == v:
                return 1, const(0)
            if expr.id in loop.sums:
                return 1, loop.sums[expr.id]
            return None
        if isinstance(expr, gast.BinOp) and isinstance(expr.op, (gast.Add, gast.Sub)):
            left, right = expr.left, expr.right
            if isinstance(left, gast.Name) and left.id == v and self.invariant(right, loop):
                return 1, right if isinstance(expr.op, gast.Add) else \
                    gast.UnaryOp(op=gast.USub(), operand=right)
            if isinstance(expr.op, gast.Add) and isinstance(right, gast.Name) \
                    and right.id == v and self.invariant(left, loop):
                return 1, left
        return None

    def invariant(self, expr, loop) -> bool:
        return self.pure(expr) and not any(
            isinstance(n, gast.Name) and (n.id in loop.binds or n.id == loop.var)
            for n in walk(expr))

    def tuple_element(self, expr) -> bool:
        """`n[k]` of a tuple name n and a constant k (an extent of a shape)."""
        return isinstance(expr, gast.Subscript) and isinstance(expr.value, gast.Name) \
            and (self.kinds.get(expr.value.id) or K.TOP)[0] == "tup" \
            and isinstance(expr.slice, gast.Constant) and type(expr.slice.value) is int

    def pure(self, expr) -> bool:
        """An int expression of int names and constants, extents `A.shape[k]`, + - * and
        unary -, and `slice_at` of these."""
        if isinstance(expr, gast.Constant):
            return type(expr.value) is int
        if isinstance(expr, gast.Name):
            return self.kinds.get(expr.id) == K.I
        if isinstance(expr, gast.BinOp):
            return isinstance(expr.op, (gast.Add, gast.Sub, gast.Mult)) \
                and self.pure(expr.left) and self.pure(expr.right)
        if isinstance(expr, gast.UnaryOp):
            return isinstance(expr.op, gast.USub) and self.pure(expr.operand)
        if is_call(expr, "slice_at") and len(expr.args) == 2 and not expr.keywords:
            return all(self.pure(a) for a in expr.args)  # flat_views' view offsets
        if self.tuple_element(expr):
            items = self.kinds[expr.value.id][1]
            return expr.slice.value < len(items) and items[expr.slice.value] == K.I
        return shape_elements(gast.Tuple(elts=[expr], ctx=gast.Load())) is not None


def _checks(pairs) -> list:
    """`index_in(extent, index)` of each pair (one `indices_in` of tuples: ba 30% slower)."""
    return [gast.Expr(value=call("index_in", *pair)) for pair in pairs]


def _extent(array: str, p: int):
    return gast.Subscript(value=gast.Attribute(value=name(array), attr="shape",
                                               ctx=gast.Load()), slice=const(p), ctx=gast.Load())


def _accesses(node, kinds) -> list:
    """(subscript, its index components) of every array access in `node`; raises
    _Refused where one is out of the rules' reach (module docstring)."""
    found = []

    def visit(n, guarded):
        if isinstance(n, (gast.BoolOp, gast.IfExp, gast.Compare)):
            children = n.values if isinstance(n, gast.BoolOp) else \
                [n.test, n.body, n.orelse] if isinstance(n, gast.IfExp) else \
                [n.left, n.comparators[0], *n.comparators[1:]]
            visit(children[0], guarded)
            short = 2 if isinstance(n, gast.Compare) else 1  # a < b[i] < c: c may not run
            for k, child in enumerate(children[1:], 1):
                visit(child, guarded or k >= short)
            return
        if isinstance(n, gast.Subscript):
            kind = K.kind_of(n.value, kinds) if not isinstance(n.value, gast.Name) \
                else kinds.get(n.value.id, K.TOP)
            if kind is None or kind[0] not in ("tup", "list"):
                if guarded or not isinstance(n.value, gast.Name) or not K.is_array(kind):
                    raise _Refused()
                index = n.slice.elts if isinstance(n.slice, gast.Tuple) else [n.slice]
                if len(index) > kind[1]:
                    raise _Refused()
                found.append((n, index))
        for child in gast.iter_child_nodes(n):
            visit(child, guarded)
    visit(node, False)
    return found
