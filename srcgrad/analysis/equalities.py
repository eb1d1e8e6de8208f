"""Equalities between int-valued terms at a point of a function, and those that hold if
some loops ran: what transforms/implied_checks.py reasons with.

A `Facts` is a partition of terms (equal values) with the index pairs checked there
(`index_in(E, i)` passed). Terms are tuples: `("dim", A, p)`, `("el", S, p)`, `("name", n)`,
`("const", c)`, `("expr", key, names)`; a term's names are those whose binding its value
depends on. Binding a name forgets the terms that mention it.

It also holds *pending* facts: what held at the end of a loop's last iteration (`ran`),
with the names bound since, which hold where the loop's condition `lo < hi` (its range is
not empty) holds: a later loop of the same condition runs only if that one ran
(`assume`, at its body's start, joins them in, less the terms of names bound since). A
loop's own pending facts, taken at the end of an enclosing loop's last iteration, wait for
both conditions. Pending facts are dropped where a name of their conditions is bound (the
condition may no longer be the loop's), and where paths join, unless both have them.

Guarantee: `meet` keeps what holds on both paths; `assume(atom)` adds only facts that hold
where `atom` holds.
"""
from __future__ import annotations

from itertools import count

_CLASSES = count()
_PENDING = 8  # pending facts kept at once


class Facts:
    """See the module doc. None stands for a place no path reaches."""

    def __init__(self):
        self.cls, self.members, self.by_name, self.checked = {}, {}, {}, set()
        self.pending = []  # [conditions (frozenset), Facts (never changed), names bound since]

    def copy(self):
        new = Facts()
        new.cls, new.checked = dict(self.cls), set(self.checked)
        new.members = {c: set(m) for c, m in self.members.items()}
        new.by_name = {n: set(m) for n, m in self.by_name.items()}
        new.pending = [[k, f, set(b)] for k, f, b in self.pending]
        return new

    def find(self, term):
        return self.cls.get(term, term)

    def union(self, a, b):
        for t in (a, b):
            if t not in self.cls:
                self.cls[t] = c = next(_CLASSES)
                self.members[c] = {t}
                for n in names_of(t):
                    self.by_name.setdefault(n, set()).add(t)
        ca, cb = self.cls[a], self.cls[b]
        if ca == cb:
            return
        if len(self.members[ca]) < len(self.members[cb]):
            ca, cb = cb, ca
        for t in self.members.pop(cb):
            self.cls[t] = ca
            self.members[ca].add(t)

    def check(self, pair):
        self.checked.add(pair)

    def implies(self, pair) -> bool:
        """Whether an index pair equal to `pair`, term by term, was checked."""
        e, i = self.find(pair[0]), self.find(pair[1])
        return any(self.find(p) == e and self.find(q) == i for p, q in self.checked)

    def forget(self, names):
        names = set(names)
        self.pending = [p for p in self.pending
                        if not any(names_of(t) & names for atom in p[0] for t in atom[1:])]
        for p in self.pending:
            p[2] |= names
        for n in names:
            for t in self.by_name.pop(n, ()):
                c = self.cls.pop(t, None)
                if c is None:
                    continue
                self.members[c].discard(t)
                if not self.members[c]:
                    del self.members[c]
        if self.checked:
            self.checked = {p for p in self.checked if not any(names_of(t) & names for t in p)}

    def parts(self):
        return frozenset(frozenset(m) for m in self.members.values() if len(m) > 1), \
            frozenset(self.checked), frozenset((k, id(f), frozenset(b))
                                               for k, f, b in self.pending)

    def assume(self, atom):
        """What holds where `atom` holds (module doc)."""
        out = self.copy()  # (kept pending: the loop's later iterations assume them again)
        for key, facts, bound in self.pending:
            if key == {atom}:
                known = facts.copy()
                known.forget(bound)
                out.join(known)
            elif atom in key and len(out.pending) < _PENDING and not any(
                    k == key - {atom} and f is facts for k, f, _ in out.pending):
                out.pending.append([key - {atom}, facts, set(bound)])
        return out

    def join(self, other):
        """Add `other`'s equalities and checked pairs (both hold)."""
        for members in other.members.values():
            first, *rest = members
            for t in rest:
                self.union(first, t)
        self.checked |= other.checked

    def ran(self, atom, end):
        """After a loop of condition `atom`: `end`, the end of its body's last iteration.
        Its own pending facts (a loop inside it) need only their names unbound since: a
        name of their condition bound later in the same iteration dropped them already."""
        plain = end.copy()
        plain.pending = []
        for key, facts, bound in [[frozenset(), plain, set()]] + end.pending:
            if len(key) < 2 and len(self.pending) < _PENDING:
                self.pending.append([key | {atom}, facts, set(bound)])


def names_of(term) -> frozenset:
    return term[-1] if term[0] == "expr" else frozenset([term[1]]) \
        if term[0] in ("dim", "el", "name") else frozenset()


def meet(a, b):
    """What holds on both paths (None: a path that never arrives)."""
    if a is None or b is None:
        other = b if a is None else a
        return other.copy() if other is not None else None
    out = _meet_plain(a, b)
    theirs, mine = {}, {}  # (conditions, snapshot) -> every name bound since, on either path
    for k, f, bound in b.pending:
        theirs.setdefault((k, id(f)), set()).update(bound)
    for k, f, bound in a.pending:
        if (k, id(f)) in theirs:
            mine.setdefault((k, id(f)), [k, f, set(theirs[(k, id(f))])])[2].update(bound)
    out.pending = list(mine.values())
    return out


def _meet_plain(a, b):
    out = Facts()
    groups = {}
    for t in a.cls.keys() & b.cls.keys():
        groups.setdefault((a.cls[t], b.cls[t]), []).append(t)
    for terms in groups.values():  # each a class of its own
        if len(terms) > 1:
            c = next(_CLASSES)
            out.members[c] = set(terms)
            for t in terms:
                out.cls[t] = c
                for n in names_of(t):
                    out.by_name.setdefault(n, set()).add(t)
    out.checked = {p for p in a.checked if b.implies(p)} | \
        {p for p in b.checked if a.implies(p)}
    return out
