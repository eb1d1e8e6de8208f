"""Adjoints of reads accumulated straight into the slots they were read from.

Part of pass 8 (optimize calls `into_targets` after owned.py), on the backward
sweep only. A read `v = a[I]` that the backward sweep updates element by
element gives `_adj_v = zeros_like(v); ...; _adj_v[J] += e; ...;
_adj_a[I] += _adj_v`: a new array per read, zeroed, filled, then added into
a's adjoint and dropped (ba: one per camera row per observation). The rewrite
binds `_adj_v = _adj_a[I]` where the zeros were and drops the final `+=`, so
the updates land in a's adjoint directly, with no array of their own.

Soundness rule. In a block B, with `k0` the plain binding `_adj_v =
zeros_like(...)` and `k1 > k0` the statement `_adj_a[I] += _adj_v` (or `+=
_adj_w` after a chain of copies `_adj_w = _adj_v` in between, each name's only
other mention in the function):
- I is a plain index (constants, slices, names that certainly hold ints:
  analysis.activity.integer_names), so `_adj_a[I]` is a view of the same
  slots `+=` would write, not a copy (an integer array or a mask would give
  one), and a slice only inside a tuple index (`_adj_a` might be a list,
  whose slice is a new list; a list item is the object itself); no name in I and neither `_adj_a` nor `_adj_v` is assigned between k0
  and k1, nested statements included: the view at k0 selects what `+=`
  selected at k1;
- every mention of `_adj_v` in the whole backward sweep lies in B[k0..k1], and
  between them each one is the target of `_adj_v[J] += e` (nested blocks
  included), so `_adj_v` is never read, rebound or reset, and no name but
  `_adj_v` (and `_adj_w`) ever refers to the zeros;
- between k0 and k1, names that may share memory with `_adj_a` (its class:
  names linked by any binding whose value may be or view the other, through
  subscripts, attributes and helper calls, arguments read for shapes excepted)
  appear only as targets `m[K] += e` of further additions, or in bindings
  `u = m[K]` (an earlier rewrite's view: it reads no values, and u is in the
  class, so its own mentions obey the same rule); no e, J or K mentions
  `_adj_v`, `_adj_w` or that class.
Then nothing observes `_adj_a`'s slots or `_adj_v` between k0 and k1, both
programs add the same terms into the same slots (in another order: sums may
differ in the last bit), and after k1 every name holds the same values.
Rewrites go one at a time, recomputing the classes after each, so a read of
a read (`p = row[j]` of `row = P[i]`) chains into the outermost adjoint.
"""
from __future__ import annotations

import gast

from ..analysis.activity import plain_index
from ..syntax import blocks, name as _name, walk

_COMPOUND = (gast.If, gast.For, gast.While)
_FRESH = ("zeros_like", "seed_like", "snapshot")  # helpers whose result shares nothing
# Helpers that may return (a view of) only these arguments; the others are read for shapes.
_RETURNED = {"unbroadcast": (0,), "expand_to": (0,), "zeros_plus": (1,), "restore": (0, 1),
             "restore_at": (0, 2)}


def _names(node) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, gast.Name)}


def _shares(value) -> set[str]:
    """Names whose memory `value` may be, or be a view of."""
    if isinstance(value, gast.Name):
        return {value.id}
    if isinstance(value, (gast.Subscript, gast.Attribute)):
        return _shares(value.value)
    if isinstance(value, (gast.Tuple, gast.List)):
        return set().union(*[_shares(e) for e in value.elts])
    if isinstance(value, gast.IfExp):
        return _shares(value.body) | _shares(value.orelse)
    if isinstance(value, gast.Call):
        func = value.func.id if isinstance(value.func, gast.Name) else None
        if func in _FRESH:
            return set()
        if func in _RETURNED:
            return set().union(*[_shares(value.args[k]) for k in _RETURNED[func]
                                 if k < len(value.args)])
        return set().union(_names(value.func) if func is None else set(),
                           *[_shares(a) for a in value.args],
                           *[_shares(k.value) for k in value.keywords])
    return set()  # arithmetic, comparisons, constants: new values


def _classes(root) -> dict[str, set[str]]:
    """name -> the names it may share memory with (a symmetric, transitive closure)."""
    parent: dict[str, str] = {}

    def find(n):
        while parent.setdefault(n, n) != n:
            n = parent[n]
        return n
    for node in walk(root):
        if isinstance(node, gast.Assign):
            targets = _names(gast.Tuple(elts=node.targets, ctx=gast.Store()))
            for t in targets:
                for s in _shares(node.value):
                    parent[find(t)] = find(s)
    groups: dict[str, set[str]] = {}
    for n in list(parent):
        groups.setdefault(find(n), set()).add(n)
    return {n: groups[find(n)] for n in parent}


def _count(node, var: str) -> int:
    return sum(1 for n in walk(node) if isinstance(n, gast.Name) and n.id == var)


def _stores(stmts) -> set[str]:
    return {n.id for s in stmts for n in walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _is_addition_into(stmt, names: set[str]) -> bool:
    return (isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add)
            and isinstance(stmt.target, gast.Subscript)
            and isinstance(stmt.target.value, gast.Name) and stmt.target.value.id in names)


def _is_view_binding(stmt, names: set[str]) -> bool:
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Subscript)
            and isinstance(stmt.value.value, gast.Name) and stmt.value.value.id in names)


def _quiet(stmts, var: str, shared: set[str]) -> bool:
    """Between k0 and k1: `var` and the names in `shared` appear only as targets of
    `m[K] += e` whose e and K name none of them, or in `u = m[K]` (module doc)."""
    watched = shared | {var}
    for stmt in stmts:
        if isinstance(stmt, _COMPOUND):
            head = stmt.test if isinstance(stmt, (gast.If, gast.While)) else stmt.iter
            if _names(head) & watched or not (_quiet(stmt.body, var, shared)
                                              and _quiet(stmt.orelse, var, shared)):
                return False
        elif _is_addition_into(stmt, watched):
            if (_names(stmt.value) | _names(stmt.target.slice)) & watched:
                return False
        elif _is_view_binding(stmt, watched):  # an earlier rewrite's `_adj_u = _adj_a[K]`
            if _names(stmt.value.slice) & watched or stmt.targets[0].id == var:
                return False
        elif _names(stmt) & watched:
            return False
    return True


def _alias_of(block, k1: int, var: str, root):
    """(`_adj_v`, indexes of the chain `_adj_w = _adj_v`, ... ending in the `var` that k1
    adds), each link a name with no other mention in the function."""
    links = []
    for k in range(k1 - 1, -1, -1):
        stmt = block[k]
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == var):
            continue
        value = stmt.value
        if not (isinstance(value, gast.Name) and value.id.startswith("_adj_")
                and _count(root, var) == 2):
            break
        links.append(k)
        var = value.id
    return var, links


def _zeros_at(block, before: int, var: str):
    for k in range(before - 1, -1, -1):
        stmt = block[k]
        if var in _stores([stmt]):
            value = getattr(stmt, "value", None)
            plain = isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], gast.Name)
            zeros = (isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
                     and value.func.id == "zeros_like")
            return k if plain and zeros else None
    return None


def _view_index(index, ints) -> bool:
    """An index whose read `_adj_a[I]` is a view of the slots `+=` writes: plain (no
    integer array or mask), and slices only beside other items (`[i, 0:3]`: a tuple
    index, so `_adj_a` is an array; a slice of a list would be a new list)."""
    if not plain_index(index, ints):
        return False
    return isinstance(index, gast.Tuple) or not isinstance(index, gast.Slice)


def _rewrite(block, k1: int, root, ints, keep) -> bool:
    """Apply the rewrite whose `+=` is `block[k1]`, if the module doc's rule allows it."""
    stmt = block[k1]
    if not (isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Subscript)
            and _is_addition_into(stmt, _names(stmt.target.value))
            and isinstance(stmt.value, gast.Name)):
        return False
    target, added, index = stmt.target.value.id, stmt.value.id, stmt.target.slice
    if not (target.startswith("_adj_") and added.startswith("_adj_")
            and _view_index(index, ints)):
        return False
    var, links = _alias_of(block, k1, added, root)
    k0 = _zeros_at(block, links[-1] if links else k1, var)
    if k0 is None or var in keep or {target, var} & _names(index):
        return False
    between = [s for k, s in enumerate(block[k0 + 1:k1], k0 + 1) if k not in links]
    region = gast.Module(body=block[k0:k1 + 1], type_ignores=[])
    if _count(region, var) != _count(root, var):
        return False
    if _stores(between) & (_names(index) | {target, var}):
        return False
    shared = (_classes(root).get(target, set()) | {target}) - {var}
    if not _quiet(between, var, shared):
        return False
    block[k0].value = gast.Subscript(value=_name(target), slice=index, ctx=gast.Load())
    for k in sorted([k1] + links, reverse=True):
        del block[k]
    return True


def into_targets(backward: list, ints: set[str], keep: set[str]) -> None:
    """Apply the module doc's rewrite to the backward sweep in place, one at a time, the
    last `+=` of a block first. Adjoints in `keep` (the function returns them) are
    never bound to a view."""
    root = gast.Module(body=backward, type_ignores=[])
    changed = True
    while changed:
        changed = False
        for block in list(blocks(backward)):
            for k1 in range(len(block) - 1, -1, -1):
                if _rewrite(block, k1, root, ints, keep):
                    changed = True
                    break
            if changed:
                break
