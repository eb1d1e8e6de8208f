"""Element stores nothing reads again, left out of a compiled form.

The adjoint of an element write `z[i] = e` reads the element's adjoint and clears it
(`_adj_z[i] = 0.0`): an earlier write of z[i] must not see it again. When z is scratch
filled afresh at every step (ode's `ode_fun`), nothing reads that adjoint element again
and the clearing is a store per element for nothing (ode: 3-4% of its gradient's time).
`dead_stores(func, roots)` removes a statement `A[index] = constant` when one of these
holds (aliases: the names `roots` may share memory with A, A included, and every name
whose memory is unknown):

- *the array is dead*: A's roots are arrays the function made (not a parameter's, not
  unknown), and no alias is live after the statement (analysis/liveness.py): nothing
  reads that memory again.
- *the element is dead*: the statement is a statement of the body of a loop
  `for i in range(...)` (step 1 or -1, counter not rebound in the body) whose constants
  show that the counter is never negative (an ascending range from a constant >= 0, a
  descending one to a constant stop >= -1: distinct counters then name distinct
  elements, which a negative one, wrapping around, would not); its index is `i` (or a
  tuple starting with `i`); every mention of an alias in the loop, at any depth, is A
  itself, never rebound, subscripted with `i` first, and none comes after the statement
  in the body; after the loop, until no alias is live, the statements of the loop's block
  mention only A, subscripted first with a non-negative integer constant outside the
  counter's range (read off a constant bound of the `range`). Then the element stored
  in iteration i is read neither later in that iteration, nor by another iteration
  (their counters differ), nor after the loop.

Guarantee: no value any statement reads changes; only stores are removed.
"""
from __future__ import annotations

import gast

from ..analysis.extents import int_value
from ..analysis.liveness import live_after
from ..analysis.roots import IN, UNKNOWN
from ..syntax import is_comment, walk


def dead_stores(func: gast.FunctionDef, roots: dict) -> int:
    """Remove the dead element stores of `func` (module doc); how many went."""
    live = live_after(func)
    removed = [0]

    def block(stmts, loop=None, rest=()):
        kept = []
        for k, stmt in enumerate(stmts):
            if _store(stmt) is not None and _dead(stmt, stmts[k + 1:], loop, rest, roots, live):
                removed[0] += 1
                continue
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(stmt, (gast.For, gast.While, gast.If)) and inner:
                    counted = isinstance(stmt, gast.For) and field == "body"
                    setattr(stmt, field, block(inner, stmt if counted else None,
                                               stmts[k + 1:] if counted else ()))
            kept.append(stmt)
        return kept or [gast.Pass()]
    func.body = block(func.body)
    return removed[0]


def _store(stmt):
    """The array name of `A[index] = constant`, else None."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Subscript) \
            and isinstance(stmt.targets[0].value, gast.Name) \
            and isinstance(stmt.value, gast.Constant):
        return stmt.targets[0].value.id
    return None


def _dead(stmt, after, loop, rest, roots, live) -> bool:
    array = _store(stmt)
    own = roots.get(array)
    if not own or IN in own or UNKNOWN in own:
        return False
    aliases = {n for n, r in roots.items() if r & own or UNKNOWN in r}
    if not aliases & live[id(stmt)]:
        return True
    bounds = _bounds(loop) if loop is not None and _counted(loop) else None
    if bounds is None or bounds[0] is None or bounds[0] < 0:
        return False  # (a negative counter names the element another one names)
    counter = loop.target.id
    if _first_index(stmt.targets[0]) != ("name", counter):
        return False
    if any(_mentions(s, aliases) for s in after):
        return False
    if any(isinstance(n, gast.Name) and n.id == counter and isinstance(n.ctx, gast.Store)
           for s in loop.body for n in walk(s)):
        return False
    if not _only_indexed(loop.body, array, aliases, lambda i: i == ("name", counter)):
        return False
    outside = _outside(*bounds)
    for later in rest:
        if not _only_indexed([later], array, aliases,
                             lambda i: i[0] == "const" and outside(i[1])):
            return False
        if not aliases & live[id(later)]:
            return True
    return False


def _counted(loop) -> bool:
    it = loop.iter
    return isinstance(loop.target, gast.Name) and isinstance(it, gast.Call) \
        and isinstance(it.func, gast.Name) and it.func.id == "range" \
        and 1 <= len(it.args) <= 3 and not it.keywords and not loop.orelse


def _bounds(loop):
    """(lowest, highest) value of the loop's counter that its constants show (None where
    they do not), for a step of 1 or -1; None for another step."""
    args = loop.iter.args
    start, stop = (int_value(args[0]), int_value(args[1])) if len(args) > 1 else (0, int_value(args[0]))
    step = int_value(args[2]) if len(args) == 3 else 1
    if step == 1:  # counter in [start, stop - 1]
        return start, None if stop is None else stop - 1
    if step == -1:  # counter in [stop + 1, start]
        return None if stop is None else stop + 1, start
    return None


def _outside(low, high):
    """A test of whether a non-negative integer is never a value of the counter."""
    return lambda c: c >= 0 and ((low is not None and c < low)
                                 or (high is not None and c > high))


def _first_index(target):
    index = target.slice
    if isinstance(index, gast.Tuple) and index.elts:
        index = index.elts[0]
    if isinstance(index, gast.Name):
        return ("name", index.id)
    value = int_value(index)
    return None if value is None else ("const", value)


def _mentions(stmt, names) -> bool:
    return any(isinstance(n, gast.Name) and n.id in names for n in walk(stmt))


def _only_indexed(stmts, array, aliases, index_ok) -> bool:
    """Whether every mention of `aliases` in `stmts` is `array[...]`, not rebound, with a
    first index `index_ok` accepts."""
    for stmt in stmts:
        if is_comment(stmt):
            continue
        inside = set()
        for node in walk(stmt):
            if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) \
                    and node.value.id in aliases:
                if node.value.id != array or not index_ok(_first_index(node) or ("?",)):
                    return False
                inside.add(id(node.value))
        for node in walk(stmt):
            if isinstance(node, gast.Name) and node.id in aliases and id(node) not in inside:
                return False
    return True
