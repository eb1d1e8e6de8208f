"""Where a sum loop's names hold their iteration's values, along the paths through its
`if` statements (transforms/immediate.py, conditions 1 and 2 of its docstring).

`bound_once(body, ...)` checks a forward body F: every local (a name F binds, other than
its sums) is bound at most once along each path through an iteration, and read only where
it is bound on every path leading there. It returns, for each `if` of F on a name, the
locals bound at the end of each of its branches. `reads_bound(kept, ...)` then checks that
the backward body B reads a local only where F's iteration has bound it: at B's top level
the locals F binds on every path, and inside `if c:` (or its `else`) also those bound at
the end of F's branch on c, which is the branch F took (c is a local, the same value).

Guarantee: when both hold, at each of B's reads of a local x, x holds the value F's
current iteration gave it (bound once on F's path, so never overwritten after).
"""
from __future__ import annotations

import gast

from ..analysis.liveness import reads
from ..frontend.trees import stores_in
from ..syntax import is_call, is_comment


def bound_once(body, var, sums, skip):
    """(locals, {test name: (bound after body, bound after orelse)}, the locals bound on
    every path) of F's body, or (None, None, None) when a local may be bound twice on a
    path or read before it is bound on every path there, an `if` tests anything but a
    bound local, or a statement is other than an assignment, an `if` of them, or one
    `skip(stmt)` accepts."""
    names = set().union(*(stores_in(s) for s in body if not skip(s))) - sums
    branches, tests = {}, []
    local = set()

    def block(stmts, definite, possible, top) -> bool:
        for stmt in stmts:
            if is_comment(stmt) or skip(stmt):
                continue
            if isinstance(stmt, gast.If):
                test = stmt.test
                if not (isinstance(test, gast.Name) and test.id in definite):
                    return False
                after = []
                for branch in (stmt.body, stmt.orelse):
                    d, p = set(definite), set(possible)
                    if not block(branch, d, p, False):
                        return False
                    after.append((d, p))
                tests.append(test.id)
                branches[test.id] = (after[0][0], after[1][0])
                definite |= after[0][0] & after[1][0]
                possible |= after[0][1] | after[1][1]
                continue
            if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
                return False
            if not (reads(stmt, False) & names) <= definite:
                return False
            target = stmt.targets[0]
            if isinstance(target, gast.Subscript):  # an element of a local array
                if element_base(target) not in local:
                    return False
                continue
            if not isinstance(target, gast.Name):
                return False
            x = target.id
            if x in sums and top:
                continue
            if x == var or x in sums or x in possible:
                return False
            definite.add(x)
            possible.add(x)
            local.add(x)
        return True

    definite = set()
    if not block(body, definite, set(), True):
        return None, None, None
    for test in {t for t in tests if tests.count(t) > 1}:
        del branches[test]  # two `if`s on one name: which bound what is not known
    return local, branches, definite


def reads_bound(kept, local, branches, definite) -> bool:
    """B's body reads a local only where F's iteration has bound it (module doc);
    `definite`: the locals F binds on every path."""
    def block(stmts, bound) -> bool:
        for stmt in stmts:
            if isinstance(stmt, gast.If):
                if not reads(stmt.test, False) & local <= bound:
                    return False
                test = stmt.test.id if isinstance(stmt.test, gast.Name) else None
                after = []
                for k, branch in enumerate((stmt.body, stmt.orelse)):
                    inner = set(bound) | (branches[test][k] if test in branches else set())
                    if not block(branch, inner):
                        return False
                    after.append(inner)
                bound |= after[0] & after[1]
                continue
            if isinstance(stmt, (gast.For, gast.While)):
                return False
            if not reads(stmt, False) & local <= bound:
                return False
            bound |= stores_in(stmt)
        return True
    return block(kept, set(definite))


def recorded(body, loads, restored, var) -> bool:
    """Every loaded x is bound in F, each binding followed in its block by
    `record_at(_tape_x, k, x)`, k the slot B loads (`loads`: {x: k dumped}) reading only
    the loop's index and names F does not bind; every restored x likewise by
    `_tape_x.append(x)`."""
    found, bound = set(), set().union(*map(stores_in, body)) - {var}

    def kept(stmt, x) -> bool:
        if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
            return False
        call, args = stmt.value, [_id(a) for a in stmt.value.args]
        if x in loads:
            return is_call(call, "record_at") and len(args) == 3 \
                and args[0] == "_tape_" + x and args[2] == x \
                and gast.dump(call.args[1]) == loads[x] \
                and not reads(call.args[1], False) & bound
        return isinstance(call.func, gast.Attribute) and call.func.attr == "append" \
            and _id(call.func.value) == "_tape_" + x and args == [x]

    def block(stmts) -> bool:
        for k, stmt in enumerate(stmts):
            if isinstance(stmt, gast.If):
                if not (block(stmt.body) and block(stmt.orelse)):
                    return False
                continue
            if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                    and stmt.targets[0].id in set(loads) | restored):
                continue
            x = stmt.targets[0].id
            if not any(kept(s, x) for s in stmts[k + 1:]):
                return False
            found.add(x)
        return True
    return block(body) and found == set(loads) | set(restored)


def _id(node):
    return node.id if isinstance(node, gast.Name) else None


def element_base(target) -> str | None:
    """The array name an element assignment's target `a[i][j]` writes into."""
    while isinstance(target, gast.Subscript):
        target = target.value
    return target.id if isinstance(target, gast.Name) else None
