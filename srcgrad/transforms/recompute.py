"""Part of pass 9 (record.py): cheap temporaries are recomputed where the backward sweep
reads them instead of being recorded.

`rematerialize` moves `_t3 = i + 1` (one operation, no `@`) or `_t3 = a[i]` (an
array nothing writes into) in front of its first backward reader, when its
operands hold the same values there as in the forward sweep (the soundness rule
is `_cheap_temporaries`'s docstring). `value_reads` and `is_restore` are the
statement queries (with `changes`) record.py shares.
"""
from __future__ import annotations

import copy
import re

import gast

from ..analysis.activity import is_append
from ..syntax import assign, walk
from .optimize import blocks, written
from .reverse import Reversed


_TEMP = re.compile(r"^_t\d+$")
_SHAPES = ("shape", "size", "ndim")


# Helpers whose argument at this position is only used for its type and shape.
# (A tuple display there, the values joined by np.concatenate(...), is read for shapes only too.)
_SHAPE_ONLY = {"zeros_like": 0, "zeros_plus": 0, "unbroadcast": 1, "fill_like": 0, "seed_like": 0,
               "concatenate_grad": 1, "stack_grad": 1, "hstack_grad": 1, "vstack_grad": 1}


def is_restore(stmt) -> bool:
    v = getattr(stmt, "value", None)
    return isinstance(stmt, gast.Assign) and isinstance(v, gast.Call) and (
        (isinstance(v.func, gast.Name) and v.func.id in ("restore", "restore_at"))
        or (isinstance(v.func, gast.Attribute) and v.func.attr == "pop"
            and isinstance(v.func.value, gast.Name) and v.func.value.id.startswith("_tape_")
            and isinstance(stmt.targets[0], gast.Subscript)))


def value_reads(stmt, varying=frozenset()) -> set[str]:
    """Names whose values `stmt` reads: shape-only helper arguments are excluded, but for
    names in `varying` (whose shape may change between bindings) they count."""
    if isinstance(stmt, (gast.If, gast.While)):
        return {n.id for n in walk(stmt.test) if isinstance(n, gast.Name)}
    if isinstance(stmt, gast.For):
        return {n.id for n in walk(stmt.iter) if isinstance(n, gast.Name)}
    shape_only = set()
    for node in walk(stmt):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
            k = _SHAPE_ONLY.get(node.func.id)
            if k is None or k >= len(node.args):
                continue
            arg = node.args[k]
            shape_only |= {id(e) for e in (arg.elts if isinstance(arg, gast.Tuple) else [arg])
                           if isinstance(e, gast.Name) and e.id not in varying}
    return {n.id for n in walk(stmt) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load) and id(n) not in shape_only}


def changes(stmt, names: set[str]) -> bool:
    """Whether `stmt` (or anything nested in it) assigns, writes into or appends to `names`."""
    return not changed(stmt).isdisjoint(names)


def changed(stmt) -> set[str]:
    """The names `stmt` (or anything nested in it) assigns, writes into or appends to."""
    out = set()
    for node in walk(stmt):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            out.add(node.id)
        elif (isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store)
                and isinstance(node.value, gast.Name)):
            out.add(node.value.id)
        elif (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                and node.func.attr == "append"):
            out.add(node.func.value.id)
    return out


def _name_counts(stmt) -> dict:
    """How many times each name occurs in `stmt` (read or written, at any depth)."""
    counts: dict = {}
    for n in walk(stmt):
        if isinstance(n, gast.Name):
            counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _cheap_temporaries(forward: list, inputs) -> dict:
    """Names `t = a op b` (no @), `t = a[i]` (an array nothing writes into),
    `t = a.shape` (also `.size`, `.ndim`) or `t = linked(v, ...)` (recomputed as
    `t = v`) whose operands stay unchanged until
    their last use, recomputations included. `t` is a temporary `_tK`, or any
    other name but an input that has this one assignment in the whole function;
    nothing writes into it.

    Soundness rule: `t` is recomputed just before its first backward reader,
    which lies in the backward code of its last forward user (before that
    user's own undo steps). So the operands must not change from `t`'s
    assignment up to and including that user. A recomputed temporary `u`
    that reads `t` moves a use of `t` to `u`'s last user, so last uses are
    taken through chains of recomputations. Such a `u` comes later in `t`'s
    block, so each block is decided from its last candidate to its first,
    each `t` against the later ones already kept: the largest set for which
    the rule holds (dropping every candidate that fails at once would also drop
    an earlier one that failed only through it: `_t2 = -k * y` of
    `y = y + dt * (-k * y * y + np.sin(y))` was taped for that).
    """
    candidates = _candidates(forward, inputs)
    operands = {t: set(_name_counts(c[2])) for t, c in candidates.items()}
    stores: dict = {}  # id(statement) -> (statement, changed(statement))
    cheap, last_use = {}, {}
    for t in sorted(candidates, key=lambda t: -candidates[t][1]):
        block, k, value, last = candidates[t]
        for u in last_use:  # kept, later in the block: its uses are t's uses
            if candidates[u][0] is block and t in operands[u]:
                last = max(last, last_use[u])
        for j in range(k + 1, last + 1):
            if id(block[j]) not in stores:
                stores[id(block[j])] = (block[j], changed(block[j]))
        if all(stores[id(block[j])][1].isdisjoint(operands[t]) for j in range(k + 1, last + 1)):
            cheap[t], last_use[t] = value, last
    return cheap


def _linked_value(value):
    """`v` of `linked(v, partial, arg)` (a recursive call's value, runtime/calls.py), else None:
    linked returns its first argument, so `t = v` recomputes `t`."""
    if (isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
            and value.func.id == "linked" and len(value.args) == 3
            and isinstance(value.args[0], gast.Name)):
        return value.args[0]
    return None


def _is_cheap(value, written_into) -> bool:
    """One operation worth recomputing: `a op b` (no @), `-a`, `a[i]` of an array nothing
    writes into, `a.shape`, or a recursive call's value `linked(v, ...)`, which is `v`."""
    if _linked_value(value) is not None:
        return True
    if isinstance(value, gast.Subscript):
        return isinstance(value.value, gast.Name) and value.value.id not in written_into
    if isinstance(value, gast.Attribute):
        return isinstance(value.value, gast.Name) and value.attr in _SHAPES
    return isinstance(value, gast.UnaryOp) or (
        isinstance(value, gast.BinOp) and not isinstance(value.op, gast.MatMult))


def _candidates(forward: list, inputs) -> dict:
    """t -> (its block, index of its assignment, value, index of its last direct user), for
    names assigned once, cheaply, and used only after that assignment in its block."""
    counted, stores = {}, {}
    for stmt in forward:  # walking the outermost statements visits nested ones too
        for n in walk(stmt):
            if isinstance(n, gast.Name):
                counted[n.id] = counted.get(n.id, 0) + 1
                if isinstance(n.ctx, gast.Store):
                    stores[n.id] = stores.get(n.id, 0) + 1
    written_into = {written(s) for b in blocks(forward) for s in b
                    if written(s) is not None and not (
                        isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name))}
    written_into |= {s.value.func.value.id for b in blocks(forward) for s in b if is_append(s)}
    candidates = {}
    for block in blocks(forward):
        names = None  # each statement's name counts, once the block has a candidate
        for k, stmt in enumerate(block):
            if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
                continue
            t = stmt.targets[0].id
            if t in written_into or not (_TEMP.match(t) or stores[t] == 1 and t not in inputs):
                continue  # (a write into t would be lost: recomputing gives the value before it)
            if not _is_cheap(stmt.value, written_into):
                continue
            value = _linked_value(stmt.value) or stmt.value
            names = names or [_name_counts(s) for s in block]
            users = [j for j in range(k, len(block)) if t in names[j]]
            if sum(names[j][t] for j in users) == counted[t]:
                candidates[t] = (block, k, value, users[-1])
    return candidates


def rematerialize(rev: Reversed, varying=frozenset()) -> None:
    """Recompute cheap temporaries where the backward sweep reads them, instead of taping.

    A temporary assigned once per iteration and read only later in the same
    block gets the same value when recomputed just before its first backward
    reader (the first statement of the block that reads it, itself or in a
    nested block), because its operands hold the same values there (checked by
    `_cheap_temporaries`). Nested blocks go before the block holding them and
    later candidates before earlier ones, so a recomputation may itself read an
    earlier recomputed temporary, also one of an enclosing block (`_t6 = t ** j`
    in an inner loop reading the outer loop's `t`).
    """
    cheap = _cheap_temporaries(rev.forward, set(rev.norm.inputs))
    reads: dict = {}  # id(statement) -> (statement, what it and its nested blocks read)

    def read_by(s) -> set:
        # Stable while its block is processed: the blocks nested in it are done by then.
        if id(s) not in reads:
            reads[id(s)] = (s, set().union(*(value_reads(r, varying)
                                              for b in blocks([s]) for r in b)))
        return reads[id(s)][1]

    for block in reversed(list(blocks(rev.backward))):  # nested blocks before theirs
        for stmt in list(block):  # backward order: later temporaries first
            t = written(stmt) if is_restore(stmt) else None
            if t not in cheap:
                continue
            block.remove(stmt)
            first = next((k for k, s in enumerate(block) if t in read_by(s)), None)
            if first is not None:
                block.insert(first, gast.copy_location(assign(t, copy.deepcopy(cheap[t])), stmt))
