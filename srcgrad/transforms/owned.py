"""Adjoint buffers one name owns: dead resets, copies nothing can change, sums kept as made.

Part of pass 8 (optimize, which calls `own`), on the backward sweep only and
only on adjoints (`_adj_*`). The backward code of a write `v[S] = u` reads the
slot's cotangent as a copy and then resets the slot, `_adj_u =
unbroadcast(snapshot(_adj_v[S]), u); _adj_v[S] = zeros_like(_adj_v[S])`, and an
adjoint later updated in place starts in a buffer of its own,
`zeros_plus(v, e)`. Three rewrites, each with its rule:

- **Ownership** (what the other two rely on). In a block B, `_adj_v` *owns its
  buffer* at statement k when its last binding before k in B is a plain
  `_adj_v = e` whose value is a new array nothing else holds (`zeros_like`,
  `zeros_plus`, arithmetic: NumPy's and numba's operators return new arrays,
  `unbroadcast` of such a value),
  and every mention of `_adj_v` between that binding and k is a write into it
  (`_adj_v[...] = ...`, `_adj_v[...] += ...`), a `snapshot(_adj_v[...])`, or a
  read `_adj_v[...]` that is an operand of arithmetic or the value added by
  `+=`: none of these gives another name a view of the buffer.
- **Dead reset**: `_adj_v[S] = zeros_like(...)` at k is dropped when `_adj_v`
  owns its buffer there and nothing reads those slots afterwards: the
  statements of B after k touch only parts of `_adj_v` disjoint from S (after
  slices only, at the same position, `:j` against `j:`, j not rebound since;
  Python clips and wraps both bounds alike) until one rebinds `_adj_v`
  without reading it, or none does, B is a loop's body whose first mention
  of `_adj_v` is such a rebinding, and nothing outside B mentions `_adj_v`
  (each iteration starts afresh; after the loop nobody reads it). Ownership
  means no other name sees the zeros. (A binding `_adj_v = _adj_v + e` makes
  a new array too, so it starts ownership.)
- **Copy nothing can change**: `snapshot(_adj_v[S])` in a statement R binding
  a name `_adj_u` (or adding into an array) becomes the view `_adj_v[S]` when
  `_adj_v` owns its buffer at R, no statement after R writes into it before it
  is rebound (or, in a loop's body as above, ever), and no name bound by R is
  ever updated in place anywhere in the function (so writes through one such
  view cannot reach another). Then nothing writes into the buffer while the
  view lives, and the view holds exactly what the copy would have held.
- **A sum kept as made**: `zeros_plus(v, e)` whose `e` is a new array no name
  holds (arithmetic, or `unbroadcast` of such a value: g itself or a new sum)
  becomes `zeros_plus(v, e, True)`, which returns e itself when it already has
  v's shape and dtype instead of copying it: the buffer still belongs to
  `_adj_v` alone.
Dead resets go first; the copies they protected are then found unchanged.
"""
from __future__ import annotations

import gast

from ..syntax import const, is_name, named, walk

_LOOPS = (gast.For, gast.While)
_COMPOUND = (gast.If, gast.For, gast.While)


def _bound_plain(stmt, var: str) -> bool:
    """`var = e` (a plain rebinding)."""
    return (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == var)


def _fresh(value) -> bool:
    """A new array nothing else holds (or a number)."""
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Name):
        if value.func.id == "unbroadcast":  # g itself, or a new sum of it
            return bool(value.args) and _fresh(value.args[0])
        return value.func.id in ("zeros_like", "zeros_plus")
    return isinstance(value, gast.BinOp) or (
        isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.USub))


def mentions(stmt, var: str) -> bool:
    """Whether `stmt` (or anything nested in it) names `var` (optimize.py exports it too)."""
    return bool(named(stmt, var))


def _harmless(stmt, var: str, writes: bool) -> bool:
    """Every mention of `var` in simple `stmt` leaves no view of its buffer with another name
    (module doc); writes into `var` count only if `writes`."""
    if isinstance(stmt, _COMPOUND) or not isinstance(stmt, (gast.Assign, gast.AugAssign)):
        return not mentions(stmt, var)
    target = stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt.target
    if is_name(target, var):
        return False
    ok = {id(target.value)} if isinstance(target, gast.Subscript) and is_name(
        target.value, var) and writes else set()
    parents = {id(c): p for p in walk(stmt) for c in gast.iter_child_nodes(p)}
    for node in walk(stmt):
        if not is_name(node, var) or id(node) in ok:
            continue
        sub = parents.get(id(node))
        if not (isinstance(sub, gast.Subscript) and sub.value is node):
            return False
        if not _consumed(sub, parents.get(id(sub)), stmt):
            return False
    return True


def _consumed(sub, parent, stmt) -> bool:
    """`sub` (`v[...]`) is copied (`snapshot`), only measured (`zeros_like`), an operand of
    arithmetic (a new array), or the value `+=` adds."""
    if isinstance(parent, gast.Call) and isinstance(parent.func, gast.Name) \
            and parent.func.id in ("snapshot", "zeros_like") and parent.args[0] is sub:
        return True
    if isinstance(parent, gast.BinOp) or (
            isinstance(parent, gast.UnaryOp) and isinstance(parent.op, gast.USub)):
        return True
    return isinstance(stmt, gast.AugAssign) and stmt.value is sub


def _owned(block: list, k: int, var: str) -> bool:
    """Whether `var` owns its buffer at `block[k]` (module doc)."""
    for i in range(k - 1, -1, -1):
        stmt = block[i]
        if _bound_plain(stmt, var):
            return _fresh(stmt.value)  # a new array, even if computed from the old one
        if not _harmless(stmt, var, writes=True):
            return False
    return False


def _untouched_after(block: list, k: int, var: str, loop, function, allowed) -> bool:
    """From `block[k + 1]` on, every statement mentioning `var` passes `allowed(stmt, at)`
    until `var` is rebound: in `block`, or around `loop`'s back edge (module doc)."""
    for at in range(k + 1, len(block)):
        stmt = block[at]
        if _bound_plain(stmt, var) and not mentions(stmt.value, var):
            return True
        if mentions(stmt, var) and not allowed(stmt, at):
            return False
    if loop is None or _mentions_outside(function, block, var):
        return False
    for stmt in block:
        if _bound_plain(stmt, var) and not mentions(stmt.value, var):
            return True
        if mentions(stmt, var):
            return False
    return False


def _items(index) -> list:
    return list(index.elts) if isinstance(index, gast.Tuple) else [index]


def _disjoint(one, other) -> bool:
    """Whether the indexes `one` and `other` select disjoint parts of any array: at some
    position, after slices only (so it is the same axis in both), one is `:e` and the
    other `e:` for the same name e (Python clips and wraps both bounds alike)."""
    for a, b in zip(_items(one), _items(other)):
        if not (isinstance(a, gast.Slice) and isinstance(b, gast.Slice)):
            return False
        if a.step is None and b.step is None and any(
                x.lower is None and y.upper is None and isinstance(x.upper, gast.Name)
                and isinstance(y.lower, gast.Name) and x.upper.id == y.lower.id
                for x, y in ((a, b), (b, a))):
            return True
    return False


def _reads_elsewhere(block: list, k: int, var: str):
    """`allowed` for a dead reset `var[S] = zeros_like(...)` at `block[k]`: a statement only
    reads (module doc) parts of var disjoint from S, whose names are not rebound since."""
    index = block[k].targets[0].slice
    names = {n.id for n in walk(index) if isinstance(n, gast.Name)}

    def allowed(stmt, at: int) -> bool:
        if any(isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id in names
               for s in block[k + 1:at + 1] for n in walk(s)):
            return False
        uses = [n for n in walk(stmt) if isinstance(n, gast.Subscript)
                and is_name(n.value, var)]
        return (_harmless(stmt, var, writes=True) and len(uses) == sum(
            1 for n in walk(stmt) if is_name(n, var))
            and all(_disjoint(index, u.slice) for u in uses))
    return allowed


def _mentions_outside(function, block: list, var: str) -> bool:
    inside = sum(1 for s in block for n in walk(s) if is_name(n, var))
    return sum(1 for n in walk(function) if is_name(n, var)) != inside


def _reset(stmt):
    """`_adj_v` if `stmt` is `_adj_v[S] = zeros_like(...)`."""
    if (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript)
            and isinstance(stmt.targets[0].value, gast.Name)
            and stmt.targets[0].value.id.startswith("_adj_")
            and isinstance(stmt.value, gast.Call) and isinstance(stmt.value.func, gast.Name)
            and stmt.value.func.id == "zeros_like"):
        return stmt.targets[0].value.id
    return None


def _drop_dead_resets(block: list, loop, function, keep: set[str]) -> None:
    k = 0
    while k < len(block):
        var = _reset(block[k])
        if var and var not in keep and _owned(block, k, var) and _untouched_after(
                block, k, var, loop, function, _reads_elsewhere(block, k, var)):
            del block[k]
        else:
            k += 1


def _updated_in_place(function) -> set[str]:
    names = set()
    for node in walk(function):
        if isinstance(node, gast.AugAssign):
            target = node.target
            names.add(target.value.id if isinstance(target, gast.Subscript)
                      and isinstance(target.value, gast.Name) else getattr(target, "id", None))
        elif isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                and isinstance(node.value, gast.Name):
            names.add(node.value.id)
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr == "pop" and isinstance(node.func.value, gast.Name):
            names.add(node.func.value.id)
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                and node.func.id == "add_at" and isinstance(node.args[0], gast.Name):
            names.add(node.args[0].id)
    return names


def _copies(stmt):
    """The `snapshot(_adj_v[...])` calls in `stmt`, as (call, parent, field) to replace."""
    found = []
    for parent in walk(stmt):
        for field, value in gast.iter_fields(parent):
            items = value if isinstance(value, list) else [value]
            for pos, node in enumerate(items):
                if (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
                        and node.func.id == "snapshot" and len(node.args) == 1
                        and isinstance(node.args[0], gast.Subscript)
                        and isinstance(node.args[0].value, gast.Name)
                        and node.args[0].value.id.startswith("_adj_")):
                    found.append((node, parent, field, pos if isinstance(value, list) else None))
    return found


def _drop_needless_copies(block: list, loop, function, in_place: set[str],
                          keep: set[str]) -> None:
    """Decided on the unchanged block, then applied: a view another rewrite made here is
    never written through (no name it is bound to is updated in place)."""
    chosen = []
    for k, stmt in enumerate(block):
        if not isinstance(stmt, (gast.Assign, gast.AugAssign)):
            continue
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) else stmt.target
        if isinstance(target, gast.Name) and target.id in in_place:
            continue
        for node, parent, field, pos in _copies(stmt):
            var = node.args[0].value.id
            into = target.value if isinstance(target, gast.Subscript) else target
            if var in keep or is_name(into, var):
                continue
            if _owned(block, k, var) and _untouched_after(
                    block, k, var, loop, function, lambda s, at: _harmless(s, var, False)):
                chosen.append((node, parent, field, pos))
    for node, parent, field, pos in chosen:
        if pos is None:
            setattr(parent, field, node.args[0])
        else:
            getattr(parent, field)[pos] = node.args[0]


def _only_fresh_updated(function, in_place: set[str]) -> bool:
    """Every adjoint updated in place is only ever bound to new arrays (NOTE [adjoint
    ownership] in reverse.py): so no view bound to another name can flow into one."""
    return all(_fresh(node.value) for node in walk(function)
               if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name)
               and node.targets[0].id.startswith("_adj_") and node.targets[0].id in in_place)


def _keep_sums(block: list) -> None:
    for stmt in block:
        value = getattr(stmt, "value", None)
        if (isinstance(stmt, gast.Assign) and isinstance(value, gast.Call)
                and isinstance(value.func, gast.Name) and value.func.id == "zeros_plus"
                and len(value.args) == 2 and _fresh(value.args[1])):
            value.args.append(const(True))


def _blocks(body: list, loop=None):
    """(block, the loop whose body it is or None), outermost first."""
    yield body, loop
    for stmt in body:
        if isinstance(stmt, _COMPOUND):
            yield from _blocks(stmt.body, stmt if isinstance(stmt, _LOOPS) else None)
            if stmt.orelse:
                yield from _blocks(stmt.orelse, None)


def own(backward: list, keep: set[str]) -> None:
    """Apply the rewrites of the module doc to the backward sweep, in place. The adjoints in
    `keep` (the function returns them) are left alone and never bound to a view."""
    root = gast.Module(body=backward, type_ignores=[])
    for block, loop in list(_blocks(backward)):
        _drop_dead_resets(block, loop, root, keep)
    in_place = _updated_in_place(root)
    copies = _only_fresh_updated(root, in_place)
    for block, loop in list(_blocks(backward)):
        if copies:
            _drop_needless_copies(block, loop, root, in_place | set(keep), keep)
        _keep_sums(block)
