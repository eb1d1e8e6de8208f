"""The compiled form keeps, of a value a loop pushes on a stack tape at every iteration but
whose backward loop never reads it, only the value at the loop's exit.

llsq's inner loop `for j in range(m): r -= x[j] * t ** j` pushes r at every iteration
(`_tape_r.append(r)`) and its backward loop pops it at every iteration (`r =
restore(_tape_r, r)`), though the backward sweep reads r only outside that loop: m pushes
and pops per outer iteration where one of each serves. `exit_tapes(func)` rewrites such a
pair of loops.

Rule. `_tape_X = []` is a stack tape at the top of the function, mentioned elsewhere only by
pushes `_tape_X.append(X)` and restores `X = restore(_tape_X, X)` (which pops the newest
value and takes back the one before it). Its pushes are P0 and the pushes at the top
level of one loop F's body; F is the first loop after P0 in their block, and no statement
between them mentions X or the tape. Its restores are the same number at the top level of one loop B's body,
and Q0, the first statement after B in its block that mentions X (no statement between
them does). B's body mentions X only in those restores. Then B is F's mirror and Q0 P0's
(the reverse pass mirrors every push), and the rewrite drops F's pushes, pushes X once
after F, drops B's restores, and restores X once after B.

Why the values are the same. P0 leaves X's value at F's entry on top of the stack. In the
original, F pushes X after each of its assignments, and B, running F's iterations
backwards, pops them one by one: after B, X is the value P0 pushed, and the stack is as it
was before F. Rewritten, the stack holds that value and, above it, X at F's exit (the
value the original's last push left on top): every restore after F in the forward order
(before B in the backward one) returns what it returned before, B's statements read no
X, and the one restore after B pops X at F's exit and returns P0's value, as the
original's last restore in B did. With no iteration, the original pushes and pops nothing
and leaves X as it was before B; rewritten, the restore after B returns P0's value, and
Q0, before any statement reads X, takes back the value before P0 either way.
"""
from __future__ import annotations

import gast

from ..syntax import is_call, is_name, method, name, named

_LOOPS = (gast.For, gast.While)


def exit_tapes(func: gast.FunctionDef) -> int:
    """Rewrite every tape the rule allows (module doc); how many."""
    tapes = [s.targets[0].id for s in func.body if isinstance(s, gast.Assign)
             and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
             and s.targets[0].id.startswith("_tape_") and isinstance(s.value, gast.List)
             and not s.value.elts]
    return sum(_rewrite(func, tape) for tape in tapes)


def _sites(func, tape):
    """[(stmt, block, innermost loop or None)] of every statement mentioning `tape` (at any
    depth below it: compound statements are opened)."""
    found = []

    def visit(block, loop):
        for stmt in block:
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                if any(named(part, tape) for part in
                       (getattr(stmt, "test", None), getattr(stmt, "iter", None)) if part):
                    found.append((stmt, block, loop))
                inner = stmt if isinstance(stmt, _LOOPS) else loop
                visit(stmt.body, inner)
                visit(stmt.orelse, inner)
            elif named(stmt, tape):
                found.append((stmt, block, loop))
    visit(func.body, None)
    return found


def _push_of(stmt, tape):
    """X for `tape.append(X)`."""
    value = stmt.value if isinstance(stmt, gast.Expr) else None
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
            and is_name(value.func.value, tape) and value.func.attr == "append" \
            and len(value.args) == 1 and isinstance(value.args[0], gast.Name) \
            and not value.keywords:
        return value.args[0].id
    return None


def _restore_of(stmt, tape):
    """X for `X = restore(tape, X)`."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) and is_call(stmt.value, "restore") \
            and len(stmt.value.args) == 2 and is_name(stmt.value.args[0], tape) \
            and is_name(stmt.value.args[1], stmt.targets[0].id):
        return stmt.targets[0].id
    return None


def _rewrite(func, tape) -> int:
    sites = [s for s in _sites(func, tape) if not (
        isinstance(s[0], gast.Assign) and s[0] in func.body and is_name(s[0].targets[0], tape))]
    pushes = [s for s in sites if _push_of(s[0], tape)]
    restores = [s for s in sites if _restore_of(s[0], tape)]
    if len(pushes) + len(restores) != len(sites) or not pushes:
        return 0
    var = _push_of(pushes[0][0], tape)
    if any(_push_of(s, tape) != var for s, _, _ in pushes) \
            or any(_restore_of(s, tape) != var for s, _, _ in restores):
        return 0
    found = next((r for r in (_around(stmt, blk, var, tape) for stmt, blk, _ in pushes) if r),
                 None)
    if found is None:
        return 0
    block, f = found
    looped = [(s, b, lp) for s, b, lp in pushes if lp is f and any(s is x for x in f.body)]
    if not looped or len(looped) != len(pushes) - 1:
        return 0
    after = next((r for r in (_before(stmt, blk, var) for stmt, blk, _ in restores) if r), None)
    if after is None:
        return 0
    b_block, b_at, b_loop = after
    inner = [(s, b, lp) for s, b, lp in restores
             if lp is b_loop and any(s is x for x in b_loop.body)]
    if len(inner) != len(looped) or len(inner) != len(restores) - 1 \
            or len(named(b_loop, var)) != 2 * len(inner):  # only the restores' own
        return 0
    f.body[:] = [s for s in f.body if not any(s is x for x, _, _ in looped)]
    b_loop.body[:] = [s for s in b_loop.body if not any(s is x for x, _, _ in inner)]
    for body in (f.body, b_loop.body):
        if not body:
            body.append(gast.Pass())
    block.insert(next(k for k, s in enumerate(block) if s is f) + 1,
                 gast.Expr(value=method(tape, "append", name(var))))
    b_block.insert(b_at + 1, gast.Assign(targets=[name(var, store=True)], value=gast.Call(
        func=name("restore"), args=[name(tape), name(var)], keywords=[]), type_comment=None))
    return 1


def _before(stmt, block, var):
    """(block, place, B) when `stmt` is Q0 (module doc): B the loop before it, no
    statement between them mentioning `var`."""
    at = next((k for k, s in enumerate(block) if s is stmt), None)
    back = next((k for k in range(at - 1, -1, -1) if named(block[k], var)), None) \
        if at else None
    if back is None or not isinstance(block[back], _LOOPS):
        return None
    return block, back, block[back]


def _around(stmt, block, var, tape):
    """(block, F) when `stmt` is P0 (module doc): F the next loop in its block, no
    statement between them mentioning `var` or `tape`."""
    at = next((k for k, s in enumerate(block) if s is stmt), None)
    nxt = next((k for k in range(at + 1, len(block))
                if isinstance(block[k], _LOOPS) or named(block[k], var)
                or named(block[k], tape)), None)
    if nxt is None or not isinstance(block[nxt], _LOOPS):
        return None
    return block, block[nxt]
