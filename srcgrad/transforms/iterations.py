"""Which statements run once per iteration of counted loops, and the iteration's number.

record.py keeps a value recorded once per iteration in an array preallocated by trip
count instead of on a growable stack. That needs, at the statement, a number that
counts its executions 0, 1, 2, ... in the forward order, and the total, both as
expressions that the backward sweep can evaluate again at the same point.

`places(forward)` maps each statement to its block and the chain of `for` loops
around it. `iteration(block, chain)` gives (index, size) when the statement runs
exactly once per iteration of every loop of the chain:

- every loop of the chain is a `for` over `range` that cannot end early (desugar
  turns `break`, `continue` and `return` into flags, so a statement after one sits in
  an `if`), and each inner loop is a statement of its outer loop's body itself,
  not of a branch; the statement is in the innermost loop's body itself;
- an inner loop's bounds read no name that anything inside the outermost loop
  assigns, writes into or appends to, and call nothing, so every inner loop has the
  same trip count in every outer iteration, the count the outermost loop's entry sees.

Then the statement's k-th execution has the flattened number
`((i0 * T1 + i1) * T2 + i2) ...` (i_j the iteration number of loop j, T_j its trip
count) and the total is T0 * T1 * ...: numbers unique, consecutive and in execution
order, so `restore_at(tape, k, x)` (the value of execution k - 1) is the value a stack
would pop. The backward sweep's loops bind the same loop variables, and the bounds'
names hold the same values there (they do not change inside the loop). A chain of one
loop is the outermost loop alone, as before nested loops were indexed.

`in_branches(forward)` maps each statement inside `if`s (only `if`s) of such an
innermost loop body to (that body, the chain): it runs at most once per iteration,
under the same number (record.py's branch tapes); `mirrored_branch(backward, undo)`
finds the backward sweep's block of that branch.
"""
from __future__ import annotations

import copy

import gast

from ..syntax import call, const, name, walk
from .optimize import blocks
from .recompute import changes
from .reverse import ends_early


def places(forward: list) -> dict:
    """id(statement) -> (its block, the `for` loops around it, outermost first, or None
    when a loop around it is reached through a branch or is a `while`)."""
    found = {}

    def visit(block, chain):
        for stmt in block:
            found[id(stmt)] = (block, chain)
            if isinstance(stmt, gast.If):  # a branch outside every loop changes nothing
                visit(stmt.body, None if chain else chain)
                visit(stmt.orelse, None if chain else chain)
            elif isinstance(stmt, gast.For):
                visit(stmt.body, None if chain is None else chain + [stmt])
            elif isinstance(stmt, gast.While):
                visit(stmt.body, None)
    visit(forward, [])
    return found


def in_branches(forward: list) -> dict:
    """id(statement) -> (the loop body, the chain of `for` loops) for a statement reached
    from the innermost loop's body through `if`s only (a loop reached as `places` does)."""
    found = {}

    def visit(block, chain, body):
        for stmt in block:
            if body is not None:
                found[id(stmt)] = (body, chain)
            if isinstance(stmt, gast.If):
                inner = block if chain and body is None else body
                visit(stmt.body, chain, inner)
                visit(stmt.orelse, chain, inner)
            elif isinstance(stmt, gast.For) and body is None:
                visit(stmt.body, chain + [stmt], None)
    visit(forward, [], None)
    return found


def mirrored_branch(backward: list, undo):
    """(the body of the backward `for` loop around `undo`, the block holding it) when the
    block is reached from that body through `if`s only and is not the body itself."""
    for block in blocks(backward):
        for stmt in block:
            if isinstance(stmt, gast.For):
                inner = _through_ifs(stmt.body, undo)
                if inner is not None and inner is not stmt.body:
                    return stmt.body, inner
    return None


def _through_ifs(block: list, target):
    """The block holding `target`, reached from `block` through `if`s only, or None."""
    if any(s is target for s in block):
        return block
    for stmt in block:
        if isinstance(stmt, gast.If):
            for branch in (stmt.body, stmt.orelse):
                found = _through_ifs(branch, target)
                if found is not None:
                    return found
    return None


def bounds(loop) -> list:
    """[start, stop, step] of a `for ... in range(...)` loop, as fresh expressions."""
    args = loop.iter.args
    if len(args) == 1:
        return [const(0), copy.deepcopy(args[0]), const(1)]
    return [copy.deepcopy(a) for a in args] + ([const(1)] if len(args) == 2 else [])


def _number(loop):
    """The iteration number of a `for` loop without break, as an expression of its variable."""
    start, _, step = bounds(loop)
    i = name(loop.target.id)
    unit = isinstance(step, gast.Constant) and step.value == 1
    if isinstance(start, gast.Constant) and start.value == 0 and unit:
        return i
    shifted = gast.BinOp(left=i, op=gast.Sub(), right=start)
    return shifted if unit else gast.BinOp(left=shifted, op=gast.FloorDiv(), right=step)


def _counted(loop) -> bool:
    it = loop.iter
    return (isinstance(loop.target, gast.Name) and isinstance(it, gast.Call)
            and isinstance(it.func, gast.Name) and it.func.id == "range" and not ends_early(loop))


def _steady(expr, block, before, outermost) -> bool:
    """Whether `expr` has the same value in every iteration of `outermost` at position
    `before` of `block`: it calls nothing, and each name it reads is unchanged inside
    `outermost`, or bound there once, by an assignment earlier in `block` whose value is
    steady in turn (normalize's `_t2 = w.shape; _s4 = _t2[0]` before `for c in range(_s4)`)."""
    nodes = list(walk(expr))
    if any(isinstance(node, gast.Call) for node in nodes):
        return False
    for var in {node.id for node in nodes if isinstance(node, gast.Name)}:
        if not changes(outermost, {var}):
            continue
        sites = [k for k in range(before) if changes(block[k], {var})]
        if len(sites) != 1 or _change_count(outermost, var) != 1:
            return False
        site = block[sites[0]]
        if not (isinstance(site, gast.Assign) and len(site.targets) == 1
                and isinstance(site.targets[0], gast.Name)
                and _steady(site.value, block, sites[0], outermost)):
            return False
    return True


def _change_count(tree, var: str) -> int:
    return sum(1 for node in walk(tree) if isinstance(node, gast.stmt)
               and not isinstance(node, (gast.For, gast.While, gast.If)) and changes(node, {var})) \
        + sum(1 for node in walk(tree) if isinstance(node, gast.For)
              and changes(node.target, {var}))


def iteration(block, chain):
    """(index, size, ahead) for the statement's execution number (module doc), or None;
    `ahead`: the size can be computed before the outermost loop (no inner bound reads a
    name bound inside it)."""
    if not chain or block is not chain[-1].body or not all(_counted(l) for l in chain):
        return None
    outer = chain[0]
    for parent, loop in zip(chain, chain[1:]):
        where = parent.body.index(loop)
        if not all(_steady(arg, parent.body, where, outer) for arg in loop.iter.args):
            return None
    index, size = _number(outer), call("trip_count", *bounds(outer))
    for loop in chain[1:]:
        count = call("trip_count", *bounds(loop))
        index = gast.BinOp(left=gast.BinOp(left=index, op=gast.Mult(), right=_stride(loop)),
                           op=gast.Add(), right=_number(loop))
        size = gast.BinOp(left=size, op=gast.Mult(), right=count)
    ahead = not any(changes(outer, {node.id}) for loop in chain[1:] for arg in loop.iter.args
                    for node in walk(arg) if isinstance(node, gast.Name))
    return index, size, ahead


def _stride(loop):
    """The trip count of an inner loop where its body runs: `k` itself for `range(k)`."""
    start, stop, step = bounds(loop)
    if all(isinstance(e, gast.Constant) for e in (start, step)) and (start.value, step.value) == (0, 1):
        return stop
    return call("trip_count", start, stop, step)
