"""Checks of the compiled form that what is already known there implies: dropped.

The compiled form checks shapes (`same_shape(A, S)`: loops.py, hoist_buffers.py, ...) and
indices (`index_in(E, i)`: bounds.py) wherever one may fail. Many repeat what is settled
(ode's stages, state and tape rows have the state's shape by construction), and numba
compiles each one: the checks were a quarter of ode's compilation time, a third of
lstm's. `implied_checks(func, kinds)` removes the checks the *facts* at their place imply
and returns how many.

Facts are equalities between int-valued terms: `dim A p` (extent p of the array named A),
`el S p` (element p of the tuple named S), an int name, an int constant, and a pure int
expression (names, constants, `+ - *`, unary `-`, `max`, `min`, `slice_at`, extents and
tuple elements of constant position), as written. They come from
- definitions: `S = A.shape`, `S = A.shape[1:]`, `S = (e0, e1)`, `n = e` (an int), `B = A`
  and `B = A.copy()`, `zeros_like(A)`, `np.empty_like(A)`, ... (arrays), `B =
  np.empty(S)` (also zeros, ones, full), `R = T[i]` (i an int: R's extent p is T's p + 1),
  `T = tape_like(V, n)` and `tape_array(V, n)` of a float64 array V (T's extent 0 is n,
  its p + 1 V's p);
- checks that passed: after `same_shape(X, S)` each extent of X equals S's (a failing one
  raised ShapeGuard and the form was left); after `index_in(E, i)`, (E, i) is *checked*.
A statement binding a name first forgets every fact that mentions the name, and adds facts
only if its value does not read the name. `same_shape(X, S)` is implied when X and S have
the same number of extents, known from the kinds, and the facts equate each pair;
`index_in(E, i)` when a checked pair equals (E, i) term by term.

Flow: statements in order. Where paths join (after an `if`, an arm that ends in `return`
or `raise` implies anything; a loop's head) the facts kept are those both paths imply.
A loop's head holds what holds before the loop and at the end of its body, to a fixed
point from what holds before it; its exit, what holds at its head (and, after an `else`
it may skip by `break`, at both). A loop with `break` or `continue` of its own keeps at
its head only the facts about names its body does not bind. A name bound only in a loop
has no facts after it, nor at the head of the loop's later iterations from what its
first made: numba reads a name no path has bound as an empty array, not as an error
(found by a review: a value bound only in a loop of no iterations, read by the next).
`try`, `with`, nested functions and `:=`: nothing is dropped.

Guarantee: a dropped check would have passed wherever it runs (its condition is equal,
term by term, to conditions checked or established before it on every path), so the form
computes what it computed, raises where it raised, and the facts later passes or bounds.py
proved from the check still hold. An `if` whose body held only dropped checks, under a pure
test, goes too.
"""
from __future__ import annotations

from itertools import count

import gast

from ..analysis import kinds as K
from ..syntax import dotted_name, is_call, is_comment

_PURE_CALLS = {"max", "min", "slice_at"}
_SAME_SHAPE = {"zeros_like", "np.zeros_like", "np.empty_like", "np.ones_like", "np.copy",
               "snapshot"}
_FROM_SHAPE = {"np.empty", "np.zeros", "np.ones", "np.full"}
_CLASSES = count()


class _Facts:
    """A partition of terms (equal values: term -> class number, class -> terms, name ->
    its terms) and the checked index pairs. None stands for a place no path reaches."""

    def __init__(self):
        self.cls, self.members, self.by_name, self.checked = {}, {}, {}, set()

    def copy(self):
        new = _Facts()
        new.cls, new.checked = dict(self.cls), set(self.checked)
        new.members = {c: set(m) for c, m in self.members.items()}
        new.by_name = {n: set(m) for n, m in self.by_name.items()}
        return new

    def find(self, term):
        return self.cls.get(term, term)

    def union(self, a, b):
        for t in (a, b):
            if t not in self.cls:
                self.cls[t] = c = next(_CLASSES)
                self.members[c] = {t}
                for n in _names(t):
                    self.by_name.setdefault(n, set()).add(t)
        ca, cb = self.cls[a], self.cls[b]
        if ca == cb:
            return
        if len(self.members[ca]) < len(self.members[cb]):
            ca, cb = cb, ca
        for t in self.members.pop(cb):
            self.cls[t] = ca
            self.members[ca].add(t)

    def forget(self, names):
        for n in names:
            for t in self.by_name.pop(n, ()):
                c = self.cls.pop(t, None)
                if c is None:
                    continue
                self.members[c].discard(t)
                if not self.members[c]:
                    del self.members[c]
        if self.checked:
            self.checked = {p for p in self.checked if not any(_names(t) & names for t in p)}

    def parts(self):
        return frozenset(frozenset(m) for m in self.members.values() if len(m) > 1), \
            frozenset(self.checked)


def _names(term) -> frozenset:
    return term[-1] if term[0] == "expr" else frozenset([term[1]]) \
        if term[0] in ("dim", "el", "name") else frozenset()


def meet(a, b):
    """What holds on both paths (None: a path that never arrives)."""
    if a is None or b is None:
        other = b if a is None else a
        return other.copy() if other is not None else None
    out = _Facts()
    groups = {}
    for t in set(a.cls) & set(b.cls):
        groups.setdefault((a.cls[t], b.cls[t]), []).append(t)
    for terms in groups.values():
        for t in terms[1:]:
            out.union(terms[0], t)
    out.checked = {p for p in a.checked if _implied_pair(b, p)} | \
        {p for p in b.checked if _implied_pair(a, p)}
    return out


def _implied_pair(facts, pair) -> bool:
    e, i = facts.find(pair[0]), facts.find(pair[1])
    return any(facts.find(p) == e and facts.find(q) == i for p, q in facts.checked)


def implied_checks(func: gast.FunctionDef, kinds: dict) -> int:
    """Drop the checks of `func` its facts imply (module doc); how many."""
    if any(isinstance(n, (gast.Try, gast.With, gast.Lambda, gast.ClassDef, gast.NamedExpr,
                          gast.AsyncFunctionDef)) or isinstance(n, gast.FunctionDef)
           and n is not func for n in gast.walk(func)):
        return 0
    walker, facts = _Walker(kinds), _Facts()
    walker.block(func.body, facts, drop=True)
    return walker.dropped


class _Walker:
    """The facts through `func`'s statements (module doc), dropping implied checks."""

    def __init__(self, kinds):
        self.kinds, self.dropped, self.memo = kinds, 0, {}

    def block(self, stmts, facts, drop):
        kept = []
        for stmt in stmts:
            keep, facts = self.stmt(stmt, facts, drop) if facts is not None else (True, None)
            if keep:
                kept.append(stmt)
        if drop:
            stmts[:] = kept
        return facts

    def stmt(self, stmt, facts, drop):
        if isinstance(stmt, gast.Expr) and (is_call(stmt.value, "same_shape") or is_call(
                stmt.value, "index_in")) and len(stmt.value.args) == 2 and not stmt.value.keywords:
            implied = self.check(stmt.value, facts)
            if implied and drop:
                self.dropped += 1
            return not (implied and drop), facts
        if isinstance(stmt, gast.Assign):
            self.assign(stmt, facts)
            return True, facts
        if isinstance(stmt, (gast.Return, gast.Raise, gast.Break, gast.Continue)):
            return True, None  # the rest of the block is not reached from here
        if isinstance(stmt, gast.If):
            body = self.block(stmt.body, facts.copy(), drop)
            orelse = self.block(stmt.orelse, facts.copy(), drop)
            if drop and not stmt.orelse and _pure(stmt.test, self.kinds) \
                    and all(isinstance(s, gast.Pass) or is_comment(s) for s in stmt.body):
                return False, meet(body, orelse)
            if drop and not stmt.body:
                stmt.body = [gast.Pass()]
            return True, meet(body, orelse)
        if isinstance(stmt, (gast.For, gast.While)):
            return True, self.loop(stmt, facts, drop)
        if isinstance(stmt, (gast.Pass, gast.Expr)):
            return True, facts
        facts.forget(_stores([stmt]))  # AugAssign, AnnAssign, Delete, ...
        return True, facts

    def loop(self, stmt, facts, drop):
        target = _stores([stmt.target]) if isinstance(stmt, gast.For) else set()
        head = facts.copy()
        if _own_exits(stmt.body):
            head.forget(self.once(stmt.body, lambda: _stores(stmt.body)) | target)
        else:
            head.forget(target)
            for _ in range(8):
                end = self.block(stmt.body, head.copy(), False)
                new = meet(facts, end)
                new.forget(target)
                if new.parts() == head.parts():
                    break
                head = new
            else:
                head = facts.copy()
                head.forget(self.once(stmt.body, lambda: _stores(stmt.body)) | target)
        self.block(stmt.body, head.copy(), drop)
        if drop and not stmt.body:
            stmt.body = [gast.Pass()]
        after = self.block(stmt.orelse, head.copy(), drop)
        return meet(after, head) if stmt.orelse and _own_exits(stmt.body) else after

    def once(self, node, make):
        """`make()`, computed once per node (the loops' fixed points ask again)."""
        hit = self.memo.get(id(node))
        if hit is None or hit[0] is not node:
            hit = self.memo[id(node)] = (node, make())
        return hit[1]

    def check(self, call, facts) -> bool:
        """Whether the facts imply the check; they then learn what it establishes."""
        first, second = call.args
        if call.func.id == "index_in":
            pair = self.once(call, lambda: (self.term(first), self.term(second)))
            implied = None not in pair and _implied_pair(facts, pair)
            if None not in pair:
                facts.checked.add(pair)
            return implied
        left, right = self.once(call, lambda: (self.shape(first), self.shape(second)))
        if left is None or right is None or len(left) != len(right):
            return False
        implied = all(facts.find(a) == facts.find(b) for a, b in zip(left, right))
        for a, b in zip(left, right):
            facts.union(a, b)
        return implied

    def assign(self, stmt, facts):
        targets, pairs = self.once(stmt, lambda: self.bound(stmt))
        facts.forget(targets)
        for a, b in pairs:
            facts.union(a, b)

    def bound(self, stmt):
        """The names an assignment binds, and the equalities it establishes."""
        target = stmt.targets[0].id if len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) else None
        return _stores(stmt.targets), self.defined(target, stmt.value) \
            if target and target not in _reads(stmt.value) else []

    def defined(self, target, value) -> list:
        """The equalities `target = value` establishes (module doc)."""
        kind = self.kinds.get(target, K.TOP)
        if kind == K.I:
            t = self.term(value)
            return [(("name", target), t)] if t is not None else []
        if kind[0] == "tup":
            terms = self.shape(value)
            return [(("el", target, p), t) for p, t in enumerate(terms or [])]
        if not K.is_array(kind):
            return []
        rank = kind[1]
        mine = [("dim", target, p) for p in range(rank)]
        source = None
        if isinstance(value, gast.Name) and self.rank(value.id) == rank:
            source = self.shape(value)
        elif isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) \
                and self.rank(value.value.id) == rank + 1 \
                and not isinstance(value.slice, (gast.Slice, gast.Tuple)) \
                and K.kind_of(value.slice, self.kinds) == K.I:  # a row T[i]
            source = [("dim", value.value.id, p + 1) for p in range(rank)]
        elif isinstance(value, gast.Call) and not value.keywords:
            source = self.made(value, rank)
        if source is None or len(source) != rank:
            return []
        return list(zip(mine, source))

    def made(self, value, rank):
        """The extents of an array a call makes, if the rules know them."""
        func, args = dotted_name(value.func), value.args
        if isinstance(value.func, gast.Attribute) and value.func.attr == "copy" and not args \
                and isinstance(value.func.value, gast.Name) \
                and self.rank(value.func.value.id) == rank:
            return self.shape(value.func.value)
        if func in _SAME_SHAPE and len(args) == 1 and isinstance(args[0], gast.Name) \
                and self.rank(args[0].id) == rank:
            return self.shape(args[0])
        if func in _FROM_SHAPE and args and len(args) <= (2 if func == "np.full" else 1):
            return self.shape(args[0], single=True)
        if func in ("tape_like", "tape_array") and len(args) == 2 \
                and isinstance(args[0], gast.Name) \
                and self.kinds.get(args[0].id) == ("arr", rank - 1, "f"):
            rows = self.term(args[1])
            return [rows] + self.shape(args[0]) if rows is not None else None
        return None

    def rank(self, name_):
        kind = self.kinds.get(name_, K.TOP)
        return kind[1] if K.is_array(kind) else None

    def shape(self, node, single=False):
        """The terms of a shape: an array's extents, a tuple's elements, or (`single`)
        one int."""
        if isinstance(node, gast.Name):
            kind = self.kinds.get(node.id, K.TOP)
            if K.is_array(kind):
                return [("dim", node.id, p) for p in range(kind[1])]
            if kind[0] == "tup":
                return [("el", node.id, p) for p in range(len(kind[1]))]
        if isinstance(node, gast.Attribute) and node.attr == "shape" \
                and isinstance(node.value, gast.Name) and self.rank(node.value.id) is not None:
            return self.shape(node.value)
        if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Slice) \
                and isinstance(node.value, gast.Attribute) and node.value.attr == "shape" \
                and node.slice.upper is None and node.slice.step is None \
                and isinstance(node.slice.lower, gast.Constant) \
                and type(node.slice.lower.value) is int and node.slice.lower.value >= 0:
            whole = self.shape(node.value)
            return whole[node.slice.lower.value:] if whole is not None else None
        if isinstance(node, gast.Tuple):
            terms = [self.term(e) for e in node.elts]
            return None if None in terms else terms
        t = self.term(node) if single else None
        return [t] if t is not None else None

    def term(self, node):
        """The term of an int-valued expression (module doc), or None."""
        if isinstance(node, gast.Constant):
            return ("const", type(node.value).__name__, node.value) if type(node.value) is int else None
        if isinstance(node, gast.Name):
            return ("name", node.id) if self.kinds.get(node.id) == K.I else None
        if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Constant) \
                and type(node.slice.value) is int:
            whole = self.shape(node.value) if isinstance(node.value, gast.Name) \
                and self.kinds.get(node.value.id, K.TOP)[0] == "tup" \
                or isinstance(node.value, gast.Attribute) else None
            p = node.slice.value
            return whole[p] if whole is not None and -len(whole) <= p < len(whole) else None
        if _pure(node, self.kinds) and K.kind_of(node, self.kinds) == K.I:
            return ("expr", _key(node), frozenset(_reads(node) - _PURE_CALLS))
        return None


def _pure(node, kinds) -> bool:
    """Ints, names and the pure operations on them, reading no array's elements (found by
    a review: `p[j]` read twice around `p[j] += k` is two values), nor calling anything
    but `max`, `min`, `slice_at` and `trip_count`."""
    for n in gast.walk(node):
        if isinstance(n, gast.Call):
            if not (isinstance(n.func, gast.Name) and n.func.id in _PURE_CALLS | {"trip_count"}
                    and not n.keywords):
                return False
        elif isinstance(n, gast.Subscript):  # an extent, or an element of a tuple
            if not (isinstance(n.slice, gast.Constant) and type(n.slice.value) is int and (
                    isinstance(n.value, gast.Attribute) and n.value.attr == "shape"
                    or isinstance(n.value, gast.Name)
                    and kinds.get(n.value.id, K.TOP)[0] == "tup")):
                return False
        elif not isinstance(n, (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp,
                                gast.Compare, gast.Attribute, gast.Tuple, gast.Add, gast.Sub,
                                gast.Mult, gast.USub, gast.cmpop, gast.expr_context)):
            return False
        elif isinstance(n, gast.Attribute) and n.attr != "shape":
            return False
    return True


def _key(node):
    """A pure expression's structure, as a value (names, constants, operators)."""
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Constant):
        return ("const", type(node.value).__name__, node.value)
    return (type(node).__name__, getattr(node, "attr", None),
            tuple(_key(c) for c in gast.iter_child_nodes(node)
                  if not isinstance(c, gast.expr_context)))


def _reads(node) -> set:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}


def _stores(nodes) -> set:
    return {n.id for node in nodes for n in gast.walk(node)
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}


def _own_exits(body) -> bool:
    """A `break` or `continue` of this loop: in its body, its `if`s, or the `else` of a
    loop nested in it (found by a review)."""
    return any(isinstance(s, (gast.Break, gast.Continue)) or isinstance(s, gast.If)
               and (_own_exits(s.body) or _own_exits(s.orelse))
               or isinstance(s, (gast.For, gast.While)) and _own_exits(s.orelse) for s in body)
