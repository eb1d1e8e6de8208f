"""Which names of a generated function may still be read after each statement.

`live_after(func)` maps `id(stmt)` of every statement, at any depth, to the set of names
some path from the end of that statement reads before binding them again (classic
backward liveness over the structured tree: a loop's body is live into its next
iteration, to a fixed point). `shape_only=True` leaves out reads that use a value's
shape and type only: the template argument of srcgrad's helpers (`unbroadcast(g, t)`,
`zeros_like(t)`, `tape_like(t, n)`, ...) and `t.shape`. Guarantee: a name not in the
set is never read (for its value, with `shape_only`) before it is bound again.
"""
from __future__ import annotations

import gast

_SHAPE_ARGS = {"unbroadcast": 1, "zeros_like": 0, "expand_to": 1, "zeros_plus": 0,
               "seed_like": 0, "fill_like": 0, "tape_like": 0, "tape_array": 0}


def reads(node, shape_only: bool) -> set:
    """Names `node` reads (for their values only, with `shape_only`)."""
    found = set()

    def visit(n):
        if shape_only and isinstance(n, gast.Call) and isinstance(n.func, gast.Name) \
                and n.func.id in _SHAPE_ARGS:
            skip = _SHAPE_ARGS[n.func.id]
            for k, arg in enumerate(n.args):
                if not (k == skip and isinstance(arg, gast.Name)):
                    visit(arg)
            return
        if shape_only and isinstance(n, gast.Attribute) and n.attr == "shape" \
                and isinstance(n.value, gast.Name):
            return
        if isinstance(n, gast.Name) and not isinstance(n.ctx, (gast.Store, gast.Param)):
            found.add(n.id)
        for child in gast.iter_child_nodes(n):
            visit(child)
    visit(node)
    return found


def _bound(target) -> set:
    return {target.id} if isinstance(target, gast.Name) else set().union(
        *[_bound(e) for e in target.elts]) if isinstance(target, (gast.Tuple, gast.List)) \
        else set()


def live_after(func: gast.FunctionDef, shape_only: bool = False) -> dict:
    record = {}
    everything = reads(func, False)
    _block(func.body, set(), record, shape_only, everything)
    return record


def _block(stmts, out, record, shape_only, everything) -> set:
    live = set(out)
    for stmt in reversed(stmts):
        record[id(stmt)] = frozenset(live)
        live = _stmt(stmt, live, record, shape_only, everything)
    return live


def _stmt(stmt, out, record, shape_only, everything) -> set:
    def block(stmts, after):
        return _block(stmts, after, record, shape_only, everything)
    if isinstance(stmt, gast.Assign):
        killed = set().union(*[_bound(t) for t in stmt.targets])
        return (out - killed) | reads(stmt, shape_only)
    if isinstance(stmt, gast.AugAssign):
        return out | reads(stmt, shape_only) | _bound(stmt.target)
    if isinstance(stmt, (gast.Expr, gast.AnnAssign)):
        return out | reads(stmt, shape_only)
    if isinstance(stmt, gast.Return):
        return reads(stmt, shape_only)
    if isinstance(stmt, gast.If):
        return reads(stmt.test, shape_only) | block(stmt.body, out) | block(stmt.orelse, out)
    if isinstance(stmt, (gast.For, gast.While)):
        exit_ = block(stmt.orelse, out)
        head = set(exit_)
        for _ in range(50):
            body = block(stmt.body, head)
            if isinstance(stmt, gast.For):
                new = (body - _bound(stmt.target)) | exit_
            else:
                new = body | exit_ | reads(stmt.test, shape_only)
            if new == head:
                break
            head = new
        else:
            head = set(everything)
        extra = reads(stmt.iter, shape_only) if isinstance(stmt, gast.For) else set()
        return head | extra
    if isinstance(stmt, (gast.Break, gast.Continue, gast.Raise, gast.Pass)):
        return set(everything) if not isinstance(stmt, gast.Pass) else out
    # anything else (try, with, nested definitions): every name may be read
    for field in ("body", "orelse", "finalbody"):
        inner = getattr(stmt, field, None)
        if isinstance(inner, list):
            block(inner, set(everything))
    for handler in getattr(stmt, "handlers", []) or []:
        block(handler.body, set(everything))
    return set(everything)
