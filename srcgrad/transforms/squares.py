"""Part of pass 8 (optimize): the backward code of squares, `np.sum(u * u)`, made lighter.

`s = np.sum(t)` with `t = u * u` has the backward code

    _adj_t = expand_to(g, t, None, False)          # g broadcast to t's shape: a new array
    ... unbroadcast(_adj_t * u, u) ...             # the contributions of t = u * u to u

The first line fills an array with g and reads `t` for its shape, so the backward
sweep also recomputes or records `t`; for a sum of squares inside a loop (gmm's
`np.sum(qx * qx)`, least squares, an L2 penalty) that is two array operations per
iteration for nothing. This rewrite keeps `_adj_t = g`.

Rule: `t` is bound once in the whole function, by `t = u * u` (one name on both sides,
so t has u's shape), and every read of `_adj_t` is a factor `_adj_t * u` or
`u * _adj_t` that is the first argument of `unbroadcast(..., u)`. Then both programs
compute g * u element by element (g is a number: the cotangent of a whole sum), of u's
shape, which `unbroadcast` to u's shape leaves as it is: the values are identical to
the last bit, and no read of `t` remains here. `u`'s value at each read is the one the
original code read there.

Second rewrite: `u * u` gives u two contributions, the same expression twice:

    _adj_u = zeros_plus(u, E)           becomes      _adj_u = zeros_plus(u, 2.0 * E)
    _adj_u = _adj_u + E

(or `_adj_u = E` first, which becomes `_adj_u = 2.0 * E`: a new array either way).

Rule: the two statements are consecutive in one block, E is the same expression in
both (names, numbers, arithmetic other than `@`, `unbroadcast`: pure, and nothing
between them changes its operands) and E does not read `_adj_u`. `zeros_plus(u, E)`
is E (of u's shape), and E + E equals 2.0 * E exactly (doubling is exact, and
overflows exactly when the sum does); where zeros_plus broadcasts E onto zeros, the
two differ at most in the sign of a zero. One array and one pass over it less.
"""
from __future__ import annotations

import gast

from ..syntax import blocks, is_call, is_name, walk


def _bindings(tree, var: str) -> list:
    return [s for b in blocks(tree) for s in b if isinstance(s, gast.Assign)
            and any(isinstance(n, gast.Name) and n.id == var and isinstance(n.ctx, gast.Store)
                    for t in s.targets for n in walk(t))]


def _square_of(forward: list, var: str):
    """u if `var` is bound once in `forward`, by `var = u * u`; else None."""
    sites = _bindings(forward, var)
    if len(sites) != 1 or len(sites[0].targets) != 1:
        return None
    value = sites[0].value
    if (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mult)
            and isinstance(value.left, gast.Name) and isinstance(value.right, gast.Name)
            and value.left.id == value.right.id):
        return value.left.id
    return None


def _reads_fit(backward: list, adj: str, u: str) -> bool:
    """Every read of `adj` is `adj * u` or `u * adj` as the first argument of
    `unbroadcast(..., u)`."""
    fitting = set()
    reads = 0
    for stmt in backward:  # each node once: walking a loop walks its body
        for node in walk(stmt):
            if is_name(node, adj) and isinstance(node.ctx, gast.Load):
                reads += 1
            if (is_call(node, "unbroadcast") and len(node.args) == 2
                    and is_name(node.args[1], u)
                    and isinstance(node.args[0], gast.BinOp)
                    and isinstance(node.args[0].op, gast.Mult)):
                left, right = node.args[0].left, node.args[0].right
                for mine, other in ((left, right), (right, left)):
                    if is_name(mine, adj) and is_name(other, u):
                        fitting.add(id(mine))
    return reads > 0 and reads == len(fitting)


def scalar_square_cotangents(forward: list, backward: list) -> None:
    """Rewrite `_adj_t = expand_to(g, t, None, False)` to `_adj_t = g` where the rule
    of the module docstring holds."""
    for block in blocks(backward):
        for stmt in block:
            if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], gast.Name)):
                continue
            value = stmt.value
            if not (is_call(value, "expand_to") and len(value.args) == 4
                    and isinstance(value.args[1], gast.Name)
                    and all(isinstance(a, gast.Constant) for a in value.args[2:])
                    and value.args[2].value is None and value.args[3].value is False):
                continue
            adj, t = stmt.targets[0].id, value.args[1].id
            u = _square_of(forward, t)
            if (u is not None and len(_bindings(backward, adj)) == 1
                    and _reads_fit(backward, adj, u)):
                stmt.value = value.args[0]


def _pure(expr) -> bool:
    for node in walk(expr):
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult):
            return False
        if isinstance(node, gast.Call):
            if not is_call(node, "unbroadcast"):
                return False
        elif not isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Name, gast.Constant,
                                   gast.operator, gast.unaryop, gast.expr_context)):
            return False
    return True


def doubled_contributions(backward: list) -> None:
    """`_adj_u = zeros_plus(u, E); _adj_u = _adj_u + E` -> `_adj_u = zeros_plus(u, 2.0 * E)`
    (the module docstring's second rule)."""
    for block in blocks(backward):
        k = 0
        while k + 1 < len(block):
            first, second = block[k], block[k + 1]
            adj = _plain_target(first)
            if (adj and adj == _plain_target(second) and isinstance(second.value, gast.BinOp)
                    and isinstance(second.value.op, gast.Add)
                    and is_name(second.value.left, adj)):
                wrapped = is_call(first.value, "zeros_plus") and len(first.value.args) == 2
                e, again = first.value.args[1] if wrapped else first.value, second.value.right
                if (_pure(e) and gast.dump(e) == gast.dump(again)
                        and not any(is_name(n, adj) for n in walk(e))):
                    doubled = gast.BinOp(left=gast.Constant(value=2.0, kind=None),
                                         op=gast.Mult(), right=e)
                    if wrapped:
                        first.value.args[1] = doubled
                    else:
                        first.value = doubled
                    del block[k + 1]
            k += 1


def _plain_target(stmt):
    if (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], gast.Name)):
        return stmt.targets[0].id
    return None

