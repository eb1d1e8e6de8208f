"""Checkpoint marks: `srcgrad.checkpointed(...)` around a loop becomes a mark on the loop.

`for i in srcgrad.checkpointed(range(n), snapshots=20):` becomes `for i in range(n):`
and `while srcgrad.checkpointed(test, snapshots=20):` becomes `while test:`, each loop
node carrying `srcgrad_checkpoint` (its snapshot count, or a `Budget` of bytes when
`srcgrad.grad(f, memory_limit=...)` asks srcgrad to choose the loops and counts).
Normalize keeps the mark on the loop it emits; reverse mode checkpoints a marked loop
(transforms/checkpoint.py), forward mode needs no tape and ignores the mark.

Guarantees: every use of the marker is either stripped this way or refused with an error
naming the user's line: a marker that is not a for loop's iterable or a while loop's
test, a for loop's iterable that is not `range(...)`, and a snapshot count that is not a
whole number >= 1 known when the function is transformed (a literal or a global).
"""
from __future__ import annotations

import builtins

import gast

from ..syntax import dotted_name, walk
from .check import refuse
from .resolve import Resolved

_FORM = "`for i in srcgrad.checkpointed(range(n), snapshots=20):`"


class Budget(int):
    """The mark of a loop checkpointed by `memory_limit` (bytes for all such loops): its
    snapshot count is chosen at run time from its state's size."""


def mark_checkpoints(resolved: Resolved, memory_limit: int | None = None) -> Resolved:
    """Strip each marker into a mark on its loop; refuse every other use of it. With a
    `memory_limit`, every other loop at the top of the function over `range(...)` or a
    `while` is marked with a `Budget`."""
    for node in walk(resolved.tree):
        if isinstance(node, gast.For) and _is_marker(resolved, node.iter):
            node.srcgrad_checkpoint, node.iter = _unwrap(resolved, node.iter, "for")
        elif isinstance(node, gast.While) and _is_marker(resolved, node.test):
            node.srcgrad_checkpoint, node.test = _unwrap(resolved, node.test, "while")
    for node in walk(resolved.tree):
        if isinstance(node, gast.Call) and _is_marker(resolved, node):
            refuse(resolved.parsed, node, "srcgrad.checkpointed(...) outside a loop header",
                   f"it marks a loop: write {_FORM} or `while srcgrad.checkpointed(test, "
                   "snapshots=20):`")
    if memory_limit is not None:
        for node in resolved.tree.body:
            if not hasattr(node, "srcgrad_checkpoint") and (isinstance(node, gast.While) or (
                    isinstance(node, gast.For) and _is_range(resolved, node.iter))):
                node.srcgrad_checkpoint = Budget(memory_limit)
    return resolved


def _is_range(resolved: Resolved, node) -> bool:
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
            and resolved.callees.get(node.func.id) is builtins.range)


def _is_marker(resolved: Resolved, node) -> bool:
    if not isinstance(node, gast.Call):
        return False
    obj = resolved.callees.get(dotted_name(node.func))
    return getattr(obj, "srcgrad_checkpoint", False) is True


def _unwrap(resolved: Resolved, node, kind: str):
    """(snapshot count, the loop's own iterable or test)."""
    parsed = resolved.parsed
    args, keywords = list(node.args), {k.arg: k.value for k in node.keywords}
    if len(args) == 2 and "snapshots" not in keywords:
        keywords["snapshots"] = args.pop()
    if len(args) != 1 or set(keywords) != {"snapshots"}:
        refuse(parsed, node, "this call of srcgrad.checkpointed",
               f"give the loop and snapshots=, as in {_FORM}")
    inner = args[0]
    if kind == "for" and not _is_range(resolved, inner):
        refuse(parsed, node, "srcgrad.checkpointed(...) around something other than range(...)",
               f"checkpoint a counted loop as {_FORM}, or a while loop's test")
    return _snapshots(resolved, keywords["snapshots"]), inner


def _snapshots(resolved: Resolved, node) -> int:
    value = None
    if isinstance(node, gast.Constant):
        value = node.value
    elif isinstance(node, gast.Name):
        value = getattr(resolved.parsed.func, "__globals__", {}).get(node.id)
    if isinstance(value, bool) or not isinstance(value, int):
        refuse(resolved.parsed, node, "a snapshot count that is not a whole number known when "
               "the function is transformed",
               "write a number (snapshots=20) or a global constant holding one")
    if value < 1:
        refuse(resolved.parsed, node, f"snapshots={value}",
               "a checkpointed loop needs at least one snapshot (the state before the loop)")
    return value
