"""Part of pass 9 (record.py): undo steps that need no tape.

Two kinds of undo step the reverse pass emits are replaced without recording
anything in the forward sweep.

- *Dead writes back.* `y[i] = _tape_y_at1.pop()` puts back the element a
  forward write overwrote, for backward reads of y's earlier contents. It is
  dead, and dropped with its tape, when no such read can follow it: in its
  backward block, the statement holding it (itself or a loop around it) reads
  no value of y, and the later statements of the block read none either
  until one rebinds y from its own tape (`y = restore(_tape_y, y)`), with no
  `break`, `continue` or `return` in between. Soundness: a write into y is
  differentiated only when y's memory is reachable through no other live
  name (frontend/aliasing.py), so y's contents are observable only through
  y; after the rebinding y names another object, and the object written back
  is not handed out again: a stack of values after assignment pops it (it is
  on top, the value y held), an array tape returns another row, and a tape
  of overwritten values holds copies or other objects.
- *Integer counters.* A name whose every assignment is an integer constant
  (`idx = 0`) or a step by one (`_t5 = idx + 1; idx = _t5`, or `- c`, with
  integer constants c) holds an int throughout, so the step is undone
  exactly by its inverse, `idx = idx - 1`, with no tape. The resets (the
  constant assignments) record the value they overwrite as any name bound
  before its reassignments does (record.py). A counter first bound inside a
  loop is bound to 0 at the top of the function as well, so its first reset
  has a value to record; this is invisible to the user's code when every
  mention of the counter follows one reset in that reset's own block (checked),
  because then each read follows an assignment in the same execution.
"""
from __future__ import annotations

import gast

from ..syntax import assign, binop, comment, const, name, walk
from .optimize import blocks, mentions, written
from .recompute import is_restore, value_reads


# ---- dead writes back --------------------------------------------------------------

def _is_write_back(stmt, var=None) -> bool:
    return (is_restore(stmt) and isinstance(stmt.targets[0], gast.Subscript)
            and (var is None or written(stmt) == var))


def _reads(stmt, var: str) -> bool:
    """Whether `stmt` or anything nested in it reads a value of `var` (writes back aside)."""
    return any(var in value_reads(s) for b in blocks([stmt]) for s in b
               if not _is_write_back(s, var))


def _may_leave(stmt) -> bool:
    """Whether `stmt` may jump out of the block holding it."""
    if isinstance(stmt, (gast.Break, gast.Continue, gast.Return)):
        return True
    if isinstance(stmt, (gast.For, gast.While)):
        return any(isinstance(n, gast.Return) for n in walk(stmt))
    if isinstance(stmt, gast.If):
        return any(_may_leave(s) for s in stmt.body + stmt.orelse)
    return False


def _rebinds(stmt, var: str) -> bool:
    return is_restore(stmt) and isinstance(stmt.targets[0], gast.Name) and written(stmt) == var


def dead_writes_back(backward: list) -> list:
    """The writes back (module doc) that no later backward read can observe."""
    dead = []
    for block in blocks(backward):
        for at, stmt in enumerate(block):
            inside = [s for b in blocks([stmt]) for s in b if _is_write_back(s)]
            for var in {written(s) for s in inside}:
                if _reads(stmt, var) or _may_leave(stmt):
                    continue
                for later in block[at + 1:]:
                    if _rebinds(later, var):
                        dead += [s for s in inside if written(s) == var]
                        break
                    if _reads(later, var) or _may_leave(later):
                        break
    return dead


# ---- integer counters ----------------------------------------------------------------

def _step(block: list, at: int, var: str):
    """`var = _t` right after `_t = var + c` (or `c + var`, `var - c`): the inverse's value."""
    stmt, before = block[at], block[at - 1] if at else None
    if not (isinstance(stmt.value, gast.Name) and isinstance(before, gast.Assign)
            and isinstance(before.targets[0], gast.Name)
            and before.targets[0].id == stmt.value.id and isinstance(before.value, gast.BinOp)):
        return None
    left, op, right = before.value.left, before.value.op, before.value.right
    if isinstance(right, gast.Name) and right.id == var and isinstance(op, gast.Add):
        left, right = right, left
    if not (isinstance(left, gast.Name) and left.id == var and _is_int(right)
            and isinstance(op, (gast.Add, gast.Sub))):
        return None
    inverse = gast.Sub() if isinstance(op, gast.Add) else gast.Add()
    return binop(name(var), inverse, const(right.value))


def _is_int(node) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) is int


def _assignments(forward: list, var: str):
    """(block, index) of every statement binding `var`, or None if one binds it otherwise
    than as a plain `var = ...` (a loop target, a tuple target)."""
    found = []
    for block in blocks(forward):
        for at, stmt in enumerate(block):
            if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == var):
                found.append((block, at))
                continue
            own = (walk(stmt.target) if isinstance(stmt, gast.For) else
                   [] if isinstance(stmt, (gast.If, gast.While)) else walk(stmt))
            if any(isinstance(n, gast.Name) and n.id == var and isinstance(n.ctx, gast.Store)
                   for n in own):
                return None
    return found


def _reset_first(forward: list, var: str, resets: list) -> bool:
    """Whether every mention of `var` is one reset or follows it in the reset's block."""
    for block, at in resets:
        covered = {id(block[at])} | {id(n) for s in block[at:] for n in walk(s)}
        if all(id(n) in covered for s in forward for n in walk(s)
               if isinstance(n, gast.Name) and n.id == var):
            return True
    return False


def counters(forward: list, inputs, names) -> dict:
    """Counters among the recorded `names` (module doc): name -> {id(step site): inverse}.

    Binds a counter first assigned inside a loop to 0 at the top of `forward`.
    """
    found = {}
    for var in sorted(set(names) - set(inputs)):
        sites = _assignments(forward, var)
        if not sites:
            continue
        steps = {id(block[at]): _step(block, at, var) for block, at in sites}
        resets = [(block, at) for block, at in sites if steps[id(block[at])] is None]
        if any(not _is_int(block[at].value) for block, at in resets) or len(resets) == len(sites):
            continue
        top = next((k for k, s in enumerate(forward) if mentions(s, var)), None)
        defined_first = top is not None and any(block is forward and at == top
                                                for block, at in resets)
        if not defined_first:
            if not _reset_first(forward, var, resets):
                continue
            forward[:0] = [comment(f"{var}: an integer counter, undone by arithmetic; bound "
                                   "here for its resets to record"), assign(var, const(0))]
        found[var] = {k: v for k, v in steps.items() if v is not None}
    return found
