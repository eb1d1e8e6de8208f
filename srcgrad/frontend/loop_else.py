"""The `else` clause of a loop, as a flag the loop's own `break`s clear (desugar's step).

Python runs a loop's `else` block when the loop ends without `break` (a `return`
inside leaves the function, so neither runs what follows). `lower_loop_else`
rewrites, in place and innermost first,

    for t in xs:                      _elseK = True
        ... break ...          ->     for t in xs:
    else:                                 ... _elseK = False; break ...
        E                             if _elseK:
                                          E

(`while` alike), where only the breaks of that loop (not of loops nested in it, nor
of functions defined in it) clear the flag. The rest of desugar then treats the loop
and the `if` as written: the `else` block's own `break`/`continue` belong to the
enclosing loop, as in Python. K makes a name the function does not use.
"""
from __future__ import annotations

import itertools

import gast

from ..syntax import assign, const, name, rewrite_blocks, walk


def lower_loop_else(tree) -> None:
    """Rewrite every loop of `tree` that has an `else` clause (see the module doc)."""
    loops = [n for n in walk(tree) if isinstance(n, (gast.For, gast.While)) and n.orelse]
    if not loops:
        return
    taken = {n.id for n in walk(tree) if isinstance(n, gast.Name)}
    names = (f"_else{k}" for k in itertools.count(1) if f"_else{k}" not in taken)

    def lowered(stmt) -> list:
        if not (isinstance(stmt, (gast.For, gast.While)) and stmt.orelse):
            return [stmt]
        flag = next(names)
        _clear_at_breaks(stmt.body, flag)
        after = gast.If(test=name(flag), body=stmt.orelse, orelse=[])
        stmt.orelse = []
        return [_set(flag, True, stmt), stmt, gast.copy_location(after, stmt)]
    rewrite_blocks(tree.body, lowered)


def _clear_at_breaks(stmts, flag) -> None:
    """`flag = False` before each `break` of this loop in `stmts`."""
    k = 0
    while k < len(stmts):
        stmt = stmts[k]
        if isinstance(stmt, gast.Break):
            stmts.insert(k, _set(flag, False, stmt))
            k += 2
            continue
        if not isinstance(stmt, (gast.For, gast.While, gast.FunctionDef)):
            for field in ("body", "orelse", "finalbody"):
                if isinstance(getattr(stmt, field, None), list):
                    _clear_at_breaks(getattr(stmt, field), flag)
            for handler in getattr(stmt, "handlers", []):
                _clear_at_breaks(handler.body, flag)
        k += 1


def _set(flag, value, where):
    return gast.copy_location(assign(flag, const(value)), where)
