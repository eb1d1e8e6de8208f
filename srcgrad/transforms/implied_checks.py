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
point; its exit, what holds before it or at the end of its last iteration (and, after an
`else` it may skip by `break`, at both). A loop with `break` or `continue` of its own
keeps only the facts about names its body does not bind. A name bound only in a loop has
no facts after it, nor at the head of the loop's later iterations from what its first
made: numba reads a name no path has bound as an empty array, not as an error (found by
a review: a value bound only in a loop of no iterations, read by the next). But a loop
over `range(a, b)` runs only if `a < b` (step -1: `range(b - 1, a - 1, -1)`), so what
held at the end of a loop's last iteration, less the names bound since, holds in a later
loop of the same condition, whose names are not bound in between and which every path to
it passes (analysis/equalities.py: the backward sweep's loop and the forward one's; nested
loops, under both conditions). `try`, `with`, nested functions and `:=`: nothing is
dropped.

Guarantee: a dropped check would have passed wherever it runs (its condition is equal,
term by term, to conditions checked or established before it on every path), so the form
computes what it computed, raises where it raised, and the facts later passes or bounds.py
proved from the check still hold. An `if` whose body held only dropped checks, under a pure
test, goes too.
"""
from __future__ import annotations

import gast

from ..analysis import kinds as K
from ..analysis.equalities import Facts, meet, names_of
from ..analysis.extents import int_value, plus
from ..frontend.trees import ByNode, assigned, reads
from ..syntax import dotted_name, is_call, is_comment, walk

_PURE_CALLS = {"max", "min", "slice_at"}
_SAME_SHAPE = {"zeros_like", "np.zeros_like", "np.empty_like", "np.ones_like", "np.copy",
               "snapshot"}
_FROM_SHAPE = {"np.empty", "np.zeros", "np.ones", "np.full"}


def implied_checks(func: gast.FunctionDef, kinds: dict) -> int:
    """Drop the checks of `func` its facts imply (module doc); how many."""
    if any(isinstance(n, (gast.Try, gast.With, gast.Lambda, gast.ClassDef, gast.NamedExpr,
                          gast.AsyncFunctionDef)) or isinstance(n, gast.FunctionDef)
           and n is not func for n in walk(func)):
        return 0
    walker, facts = _Walker(kinds), Facts()
    atoms = [walker.atom(n) for n in walk(func) if isinstance(n, gast.For)]
    walker.shared = {a for a in atoms if a is not None and atoms.count(a) > 1}
    walker.block(func.body, facts, drop=True)
    return walker.dropped


class _Walker:
    """The facts through `func`'s statements (module doc), dropping implied checks."""

    def __init__(self, kinds):
        self.kinds, self.dropped = kinds, 0
        self.once = ByNode()  # terms and binds per node (the loops' fixed points ask again)
        self.shared = set()  # conditions of more than one loop: a later one may assume them

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
        facts.forget(assigned([stmt]))  # AugAssign, AnnAssign, Delete, ...
        return True, facts

    def loop(self, stmt, facts, drop):
        target = assigned([stmt.target]) if isinstance(stmt, gast.For) else set()
        binds = self.once(stmt.body, lambda: assigned(stmt.body))
        exits, atom = _own_exits(stmt.body), self.atom(stmt)
        start = facts.assume(atom) if atom is not None else facts  # the body runs only so
        head = start.copy()
        head.forget(binds | target if exits else target)
        for _ in range(0 if exits else 8):
            end = self.block(stmt.body, head.copy(), False)
            new = meet(start, end)
            new.forget(target)
            if new.parts() == head.parts():
                break
            head = new
        else:
            if not exits:
                head = start.copy()
                head.forget(binds | target)
        end = self.block(stmt.body, head.copy(), drop)
        if drop and not stmt.body:
            stmt.body = [gast.Pass()]
        after = facts.copy() if exits else meet(facts, end)  # no iteration, or the last
        after.forget(binds | target if exits else target)
        if not exits and atom in self.shared and end is not None \
                and not (binds | target) & {n for t in atom[1:] for n in names_of(t)}:
            after.ran(atom, end)
        out = self.block(stmt.orelse, after.copy(), drop)
        return meet(out, after) if stmt.orelse and exits else out

    def atom(self, stmt):
        """`lo < hi`, which holds where the `for` loop over a range of step 1 or -1 runs."""
        it = stmt.iter if isinstance(stmt, gast.For) else None
        if not (is_call(it, "range") and 1 <= len(it.args) <= 3 and not it.keywords):
            return None
        args = list(it.args) if len(it.args) > 1 else [gast.Constant(value=0, kind=None)] \
            + list(it.args)
        step = int_value(args[2]) if len(args) == 3 else 1
        lo, hi = (args[0], args[1]) if step == 1 else (plus(args[1], gast.Constant(
            value=1, kind=None)), plus(args[0], gast.Constant(value=1, kind=None))) \
            if step == -1 else (None, None)
        terms = (self.term(lo), self.term(hi)) if lo is not None else (None,)
        return None if None in terms else ("lt",) + terms

    def check(self, call, facts) -> bool:
        """Whether the facts imply the check; they then learn what it establishes."""
        first, second = call.args
        if call.func.id == "index_in":
            pair = self.once(call, lambda: (self.term(first), self.term(second)))
            implied = None not in pair and facts.implies(pair)
            if None not in pair:
                facts.check(pair)
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
        return assigned(stmt.targets), self.defined(target, stmt.value) \
            if target and target not in reads(stmt.value) else []

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
            return ("const", "int", node.value) if type(node.value) is int else None
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
            return ("expr", _key(node), frozenset(reads(node) - _PURE_CALLS))
        return None


def _pure(node, kinds) -> bool:
    """Ints, names and the pure operations on them, reading no array's elements (found by
    a review: `p[j]` read twice around `p[j] += k` is two values), nor calling anything
    but `max`, `min`, `slice_at` and `trip_count`."""
    for n in walk(node):
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


def _own_exits(body) -> bool:
    """A `break` or `continue` of this loop: in its body, its `if`s, or the `else` of a
    loop nested in it (found by a review)."""
    return any(isinstance(s, (gast.Break, gast.Continue)) or isinstance(s, gast.If)
               and (_own_exits(s.body) or _own_exits(s.orelse))
               or isinstance(s, (gast.For, gast.While)) and _own_exits(s.orelse) for s in body)
