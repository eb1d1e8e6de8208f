"""Queries over the user's statements, and the `snapshot(x)` call, that normalize.py and
the inliner (inline.py) share."""
from __future__ import annotations

import gast

from ..syntax import dotted_name, name, walk


# Calls whose result may share memory with an argument (a view).
VIEWS = ("np.transpose", "np.reshape", "np.ravel", "np.swapaxes", "np.expand_dims", "np.squeeze")


def chain_root(node):
    while isinstance(node, gast.Attribute):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None


def nested_stores(body) -> set[str]:
    """Names assigned anywhere inside a loop or branch (they are not put in SSA form)."""
    names = set()
    for stmt in body:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            for node in walk(stmt):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    names.add(node.id)
    return names


def written_into(body) -> set[str]:
    """Names written into: `y[i] = v`, `y[i] += v`, `y.append(v)`."""
    names = set()
    for stmt in body:
        for node in walk(stmt):
            targets = node.targets if isinstance(node, gast.Assign) else (
                [node.target] if isinstance(node, gast.AugAssign) else [])
            names |= {t.value.id for t in targets if isinstance(t, gast.Subscript)}
            if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                    and node.func.attr == "append"):
                names.add(node.func.value.id)
    return names


def reads(node) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, gast.Name)}


def assigned(body) -> set[str]:
    """Names bound (or deleted) anywhere in `body`: any context but Load."""
    return {n.id for stmt in body for n in walk(stmt)
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}


def stores_in(stmt) -> set[str]:
    return {n.id for n in walk(stmt) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Store)}


def item(whole, k):
    return gast.Subscript(value=whole, slice=gast.Constant(value=k, kind=None), ctx=gast.Load())


def snapshot_of(node):
    """`snapshot(node)`: the value now, a copy if it is an array (runtime/checks.py)."""
    return gast.Call(func=name("snapshot"), args=[node], keywords=[])


def is_view(node) -> bool:
    """`b[i]`, `b[1:]`, `np.transpose(b)`, ...: a value that may share memory with b."""
    return isinstance(node, gast.Subscript) or (
        isinstance(node, gast.Call) and dotted_name(node.func) in VIEWS)


class ByNode(dict):
    """Values computed once per node: `memo(node, make)` is `make()` the first time.
    The node is kept with its value, so its id is no other node's while the memo lives;
    for a pass that does not change what `make` reads of the node while it runs."""

    def __call__(self, node, make):
        hit = self.get(id(node))
        if hit is None or hit[0] is not node:
            hit = self[id(node)] = (node, make())
        return hit[1]
