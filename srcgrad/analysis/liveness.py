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
    _block(func.body, set(), record, _Reads(shape_only), everything)
    return record


class _Reads:
    """`reads(node, shape_only)`, once per node (the loops' fixed points ask again)."""

    def __init__(self, shape_only):
        self.shape_only, self.seen = shape_only, {}

    def __call__(self, node):
        found = self.seen.get(id(node))
        if found is None:
            found = self.seen[id(node)] = frozenset(reads(node, self.shape_only))
        return found


def _block(stmts, out, record, read, everything) -> set:
    live = set(out)
    for stmt in reversed(stmts):
        record[id(stmt)] = frozenset(live)
        live = _stmt(stmt, live, record, read, everything)
    return live


def _stmt(stmt, out, record, read, everything) -> set:
    def block(stmts, after):
        return _block(stmts, after, record, read, everything)
    if isinstance(stmt, gast.Assign):
        killed = set().union(*[_bound(t) for t in stmt.targets])
        return (out - killed) | read(stmt)
    if isinstance(stmt, gast.AugAssign):
        return out | read(stmt) | _bound(stmt.target)
    if isinstance(stmt, (gast.Expr, gast.AnnAssign)):
        return out | read(stmt)
    if isinstance(stmt, gast.Return):
        return read(stmt)
    if isinstance(stmt, gast.If):
        return read(stmt.test) | block(stmt.body, out) | block(stmt.orelse, out)
    if isinstance(stmt, (gast.For, gast.While)):
        exit_ = block(stmt.orelse, out)
        head = set(exit_)
        for _ in range(50):
            body = block(stmt.body, head)
            if isinstance(stmt, gast.For):
                new = (body - _bound(stmt.target)) | exit_
            else:
                new = body | exit_ | read(stmt.test)
            if new == head:
                break
            head = new
        else:
            head = set(everything)
        extra = read(stmt.iter) if isinstance(stmt, gast.For) else set()
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
