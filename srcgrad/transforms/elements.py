"""Compiled form only: two rewrites of updates of single array elements, which need
to know that `x[i]` is a number (analysis/kinds.py) and that nothing else touches x's
memory (analysis/roots.py).

**An element updated in place passes its cotangent through** (`passes`). The backward
code of an element update `x[i] += e` (`x[i] = x[i] + e`) reads the element's
cotangent, resets it, and adds back the part that goes to the old x[i]:

    A = unbroadcast(snapshot(_adj_x[i]), t)
    _adj_x[i] = zeros_like(_adj_x[i])
    ...                                   (statements touching nothing _adj_x may share)
    _adj_x[i] += B                        (B: A, or a name bound to unbroadcast(A, u))

When `_adj_x[i]` is a number (analysis/kinds.py: the compiled form knows), unbroadcast
of numbers is its first argument, so B is A and the element ends as `0.0 + A`: `passes`
drops the reset and the addition, and the element keeps A (the same number, but that a
-0.0 stays -0.0). Conditions, all checked: the three statements are in one block, the
index and the names are not rebound in between, and no statement in between is
compound, mentions _adj_x or a name that may share its memory (analysis/roots.py), or
calls what srcgrad does not know.

**A sum into one element across a loop is kept in a number** (`accumulators`). In
`for j in ...: ... x[i] += e ...` (or `-=`), where i is the same in every iteration and
no other statement of the loop's body touches x or what may share its memory, the sum
goes to a local number `_acc` set to 0.0 before the loop and added to x[i] after it, if
the loop ran (`_ran`: with no iteration, x[i] was never touched, and may not even
exist): x[i] is read and written once instead of in every iteration (numba cannot do
this: its arrays may overlap). The terms are the same; their sum's order changes (the
last bit may differ). gmm's innermost backward loop adds into `_adj_xc[i]` across j: 4.9x -> 3.1x the
primal at d=64 by hand.
"""
from __future__ import annotations

import gast

from ..analysis.kinds import is_number, kind_of
from ..analysis.roots import may_alias
from ..syntax import assign, const, is_call, is_comment, name, walk
from .elementwise import dump, effects


def rewrite(body, kinds, roots, fresh) -> int:
    """Both rewrites in `body` (any depth); how many places changed."""
    return passes(body, kinds, roots) + accumulators(body, kinds, roots, fresh)


def passes(body, kinds, roots) -> int:
    """Drop every reset-and-add-back pair in `body` (any depth); how many it dropped."""
    dropped = 0
    for stmt in body:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(stmt, (gast.For, gast.While, gast.If)) and inner:
                dropped += passes(inner, kinds, roots)
    k = 0
    while k < len(body):
        pair = _pair(body, k, kinds, roots)
        if pair is None:
            k += 1
            continue
        reset, add = pair
        del body[add]
        del body[reset]
        dropped += 1
    return dropped


def _element(node, kinds):
    """`x[i]` whose value is a number, as (x, dump of i), or None."""
    if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
            and is_number(kind_of(node, kinds)):
        return node.value.id, dump(node.slice)
    return None


def _read(value, kinds):
    """The element `value` reads: `unbroadcast(snapshot(x[i]), t)`, `snapshot(x[i])`."""
    if is_call(value, "unbroadcast") and len(value.args) == 2:
        value = value.args[0]
    if is_call(value, "snapshot") and len(value.args) == 1:
        value = value.args[0]
    return _element(value, kinds)


def _pair(body, k, kinds, roots):
    """(index of the reset, index of the addition) for the read at body[k], or None."""
    read = body[k]
    if not (isinstance(read, gast.Assign) and len(read.targets) == 1
            and isinstance(read.targets[0], gast.Name)):
        return None
    element = _read(read.value, kinds)
    if element is None or k + 1 >= len(body):
        return None
    reset = body[k + 1]
    if not (isinstance(reset, gast.Assign) and len(reset.targets) == 1
            and _element(reset.targets[0], kinds) == element
            and is_call(reset.value, "zeros_like")):
        return None
    array, held = element[0], {read.targets[0].id}
    watched = {n.id for n in walk(reset.targets[0]) if isinstance(n, gast.Name)}
    for j in range(k + 2, len(body)):
        stmt = body[j]
        if is_comment(stmt):
            continue
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add) \
                and _element(stmt.target, kinds) == element \
                and isinstance(stmt.value, gast.Name) and stmt.value.id in held:
            return k + 1, j
        if not _apart(stmt, array, watched, held, kinds, roots):
            return None
        passed = _passed(stmt, held, kinds)
        if passed is not None:
            held.add(passed)
    return None


def _passed(stmt, held, kinds):
    """The name `stmt` binds to a held number unchanged (`b = unbroadcast(a, u)`)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return None
    value = stmt.value
    if is_call(value, "unbroadcast") and len(value.args) == 2 \
            and is_number(kind_of(value.args[1], kinds)):
        value = value.args[0]
    if isinstance(value, gast.Name) and value.id in held and is_number(kinds.get(value.id)):
        return stmt.targets[0].id
    return None


def _apart(stmt, array, watched, held, kinds, roots) -> bool:
    """`stmt` is simple, touches nothing that may share `array`'s memory, rebinds none of
    the names the pair depends on, and calls nothing unknown."""
    if not isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Expr)):
        return False
    eff = effects(stmt, kinds, roots)
    if eff.binds & (watched | held):
        return False
    mine = roots.get(array, frozenset())
    if not mine:
        return False
    for n in eff.reads | eff.binds:
        if n in roots and may_alias(roots[n], mine):
            return False
    return not any(a.write and may_alias(a.roots, mine) for a in eff.mem)


def accumulators(body, kinds, roots, fresh) -> int:
    """Keep each loop-invariant element sum of a loop in `body` (any depth) in a number."""
    changed, k = 0, 0
    while k < len(body):
        stmt = body[k]
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(stmt, (gast.For, gast.While, gast.If)) and inner:
                changed += accumulators(inner, kinds, roots, fresh)
        if isinstance(stmt, gast.For) and not stmt.orelse:
            made = _promote(stmt, kinds, roots, fresh)
            if made:
                before, after = made
                body[k:k + 1] = before + [stmt] + after
                changed += len(before) - 1  # one `_acc` each, and the `_ran` flag
                k += len(before) + len(after)
        k += 1
    return changed


def _promote(loop, kinds, roots, fresh):
    """(statements before the loop, after it) for its invariant element sums, or None."""
    simple = [s for s in loop.body if not is_comment(s)]
    if not simple or not all(isinstance(s, (gast.Assign, gast.AugAssign, gast.Expr))
                             for s in simple):
        return None
    bound = {n.id for s in simple for n in walk(s) if isinstance(n, gast.Name)
             and isinstance(n.ctx, gast.Store)} | _names(loop.target)
    before, after = [], []
    for k, stmt in enumerate(loop.body):
        if not (isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, (gast.Add, gast.Sub))):
            continue
        element = _element(stmt.target, kinds)
        if element is None or _names(stmt.target.slice) & bound \
                or stmt.target.value.id in bound or element[0] in _names(stmt.value):
            continue
        if not all(_apart(s, element[0], set(), set(), kinds, roots)
                   for s in simple if s is not stmt):
            continue
        acc = fresh("_acc")
        before.append(assign(acc, const(0.0)))
        after.append(gast.AugAssign(target=stmt.target, op=gast.Add(), value=name(acc)))
        loop.body[k] = gast.AugAssign(target=name(acc, store=True), op=stmt.op,
                                      value=stmt.value)
    if not before:
        return None
    ran = fresh("_ran")  # a loop that ran no iteration touched no x[i]: nor may the sum
    first = next(j for j, s in enumerate(loop.body) if not is_comment(s))
    loop.body.insert(first, assign(ran, const(True)))
    return before + [assign(ran, const(False))], [gast.If(test=name(ran), body=after,
                                                          orelse=[])]


def _names(node) -> set:
    return {n.id for n in walk(node) if isinstance(n, gast.Name)}
