"""Where each adjoint lives: the block whose backward sweep sets it to zero.

An adjoint `_adj_v` must start at zero exactly once per execution of the
smallest block that contains every use and definition of `v` (its *home*):
a temporary used within one loop iteration is zeroed at the start of that
iteration's backward sweep; a loop-carried value (read in an iteration before
it is assigned, like `s` in `s = s + x[i]`) lives in the block around the
loop, so its adjoint carries from one reversed iteration to the next.

After the backward sweep handles an assignment to `v`, the adjoint of the
value `v` held before must start from zero again, unless that assignment runs
at most once per execution of the home block (`needs_reset`).
"""
from __future__ import annotations

from dataclasses import dataclass

import gast

from .activity import names_in
from ..syntax import walk


@dataclass(frozen=True)
class Scopes:
    home: dict[str, int]  # name -> id() of the statement list whose backward zeroes it
    resets: frozenset[str]  # names whose adjoint is zeroed again after each assignment


def _children(stmt):
    if isinstance(stmt, gast.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, (gast.For, gast.While)):
        return [stmt.body]
    return []


def _mentions(stmt) -> set[str]:
    return {n.id for n in walk(stmt) if isinstance(n, gast.Name)}


def _assigns(stmt, name) -> bool:
    return (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
            and stmt.targets[0].id == name)


def upward_exposed(name: str, body: list) -> bool:
    """Whether an iteration may read `name` before assigning it (conservatively).

    A branch assigns `name` when both of its arms do; a nested loop never does
    (it may run no iteration), but it exposes `name` if its own body does.
    """
    return _first_use(name, body) == "read"


def _first_use(name: str, body: list) -> str | None:
    """"read" if `body` may read `name` before assigning it, "assigned" if every path
    assigns it first, None if neither.

    Desugar's return slot `_retval` (of a function or of an inlined copy, same
    suffix as its flag `_ret`) is assigned whenever its flag is set, so the
    rest of a body guarded by `if not _ret:` counts as assigning it where the
    guard is false.
    """
    negated = {}  # temporary -> the name it negates (`_t9 = not _ret__h1`)
    for stmt in body:
        if _assigns(stmt, name) and name not in names_in(stmt.value):
            return "assigned"
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) \
                and isinstance(stmt.value, gast.UnaryOp) and isinstance(stmt.value.op, gast.Not) \
                and isinstance(stmt.value.operand, gast.Name):
            negated[stmt.targets[0].id] = stmt.value.operand.id
        if isinstance(stmt, gast.If) and name not in names_in(stmt.test):
            flag_set = (isinstance(stmt.test, gast.Name) and name.startswith("_retval")
                        and negated.get(stmt.test.id) == "_ret" + name[len("_retval"):])
            arms = (_first_use(name, stmt.body),
                    "assigned" if flag_set and not stmt.orelse else _first_use(name, stmt.orelse))
            if "read" in arms:
                return "read"
            if arms == ("assigned", "assigned"):
                return "assigned"
        elif isinstance(stmt, (gast.For, gast.While)) and name not in _header(stmt):
            if _first_use(name, stmt.body) == "read":
                return "read"
        elif name in _mentions(stmt):
            return "read"
    return None


def scopes(body: list, names, top_level: set[str], inputs: set[str]) -> Scopes:
    """Homes for `names` in the function `body`; `top_level` names live in the whole body.

    `inputs` (parameters, globals) count as assigned once on entry to the body.
    """
    paths: dict[str, list] = {}  # name -> common block path of its mentions
    defs: dict[str, list] = {n: [[body]] for n in inputs}  # name -> paths of its assignments
    loops: dict[int, gast.AST] = {}  # id(loop body) -> loop

    def visit(block, path):
        for stmt in block:
            mentioned = _header(stmt) if _children(stmt) else _mentions(stmt)
            for name in mentioned & names:
                _merge(paths, name, path)
            target = _target(stmt)
            if target in names:
                defs.setdefault(target, []).append(path)
            for child in _children(stmt):
                if isinstance(stmt, (gast.For, gast.While)):
                    loops[id(child)] = stmt
                visit(child, path + [child])

    visit(body, [body])
    home, resets = {}, set()
    for name in names:
        path = [body] if name in top_level else list(paths.get(name, [body]))
        while len(path) > 1 and id(path[-1]) in loops and upward_exposed(name, path[-1]):
            path.pop()
        home[name] = id(path[-1])
        assigned = defs.get(name, [])
        loops_home = [b for b in path if id(b) in loops]
        if len(assigned) > 1 or any([b for b in p if id(b) in loops] != loops_home
                                    for p in assigned):
            resets.add(name)
    return Scopes(home, frozenset(resets))


def _header(stmt) -> set[str]:
    """Names read by a compound statement's own header (condition, loop bounds)."""
    if isinstance(stmt, gast.For):
        return set(names_in(stmt.iter)) | {stmt.target.id}
    return set(names_in(stmt.test))


def _target(stmt):
    if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
        return stmt.targets[0].id
    return None


def _merge(paths, name, path):
    if name not in paths:
        paths[name] = list(path)
        return
    common = paths[name]
    k = 0
    while k < min(len(common), len(path)) and common[k] is path[k]:
        k += 1
    del common[k:]
