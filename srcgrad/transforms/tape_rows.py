"""Arrays a compiled form records right after filling them, filled in their tape's row.

A loop that records a stage of a step (ode's `y + h * k1 / 2.0`, taped because the
backward sweep reads it) makes the array, fills it element by element, then copies it
into the tape: `A = np.empty(n)`, a loop over A's elements, `record_at(T, step, A)`.
`tape_rows(func, kinds, roots)` binds A to the row instead, `A = T[step]` (with
`same_shape(A, n)`), and drops the copy: one pass over the array and one allocation per
stage fewer (ode at n = 10,000: about 6% of the gradient).

Soundness rule. In one block, `A = np.empty(n)` (A a float array of rank r) comes before
`record_at(T, i, A)`, and
- T is a float array of rank r + 1 bound once in the function, by a statement of the
  function's body before the one holding this block (hoist_tapes.py moves tapes there):
  it exists, with its rows, when A is made;
- i calls nothing; no statement between the two binds A, T or a name of i, or mentions
  a name other than A that may share T's memory (analysis/roots.py): nothing reads the
  row before it is complete, and the statements between write T's memory through A only;
- no statement of the function outside those between the two but this record writes
  memory T's or A's roots reach, and none calls what srcgrad does not know: the row is
  written only while A is filled, and A never changes after its record.
Then the row holds, from the record on, what the copy would have put there, and A holds
what it held (same_shape fails, and the form falls back to the generated function, where
record_at would have raised; `T[i]` reads the row numba's `tape[k]` would have written).
Guarantee: every value read is the same; A is a view of T's row instead of an array of
its own.
"""
from __future__ import annotations

import copy

import gast

from ..analysis import kinds as K
from ..analysis.roots import UNKNOWN
from ..syntax import assign, blocks, call, dotted_name, is_call, name, walk
from .elementwise import effects, names_in


def tape_rows(func: gast.FunctionDef, kinds: dict, roots: dict) -> int:
    """Fill recorded arrays in their tapes' rows (module doc); how many."""
    writes = _writes(func, kinds, roots)
    bound = _bindings(func)
    done = 0
    for block in list(blocks(func.body)):
        top = _top_index(func.body, block)
        k = 0
        while k < len(block):
            made = _fill(block, k, kinds, roots, writes, bound, func.body, top)
            if made is not None:
                j, array, shape, tape, index = made
                row = gast.Subscript(value=name(tape), slice=index, ctx=gast.Load())
                block[j] = assign(array, row)
                block[k] = gast.Expr(value=call("same_shape", name(array), name(shape)))
                block.insert(j + 1, block.pop(k))
                done += 1
            k += 1
    return done


def _fill(block, k, kinds, roots, writes, bound, body, top):
    stmt = block[k]
    if not (isinstance(stmt, gast.Expr) and is_call(stmt.value, "record_at")
            and len(stmt.value.args) == 3
            and all(isinstance(stmt.value.args[p], gast.Name) for p in (0, 2))):
        return None
    tape, index, array = stmt.value.args[0].id, stmt.value.args[1], stmt.value.args[2].id
    j = next((j for j in range(k - 1, -1, -1) if _makes(block[j], array)), None)
    if j is None or not _shapes_fit(kinds.get(array), kinds.get(tape)) \
            or any(isinstance(n, gast.Call) for n in walk(index)):
        return None
    where = bound.get(tape)
    if where is None or (body is block and where >= j) or (body is not block and where >= top):
        return None
    tape_roots, array_roots = roots.get(tape), roots.get(array)
    if not tape_roots or not array_roots or UNKNOWN in tape_roots | array_roots:
        return None
    sharing = {n for n, r in roots.items() if r & tape_roots or UNKNOWN in r} - {array}
    between = block[j + 1:k]
    fixed = {array, tape} | names_in(index)
    for s in between:
        if _binds(s) & fixed or any(isinstance(n, gast.Name) and n.id in sharing
                                    for n in walk(s)):
            return None
    inside = {id(n) for s in between for n in walk(s)}
    for node, access in writes:
        if UNKNOWN in access:
            return None
        if id(node) not in inside and node is not stmt and access & (tape_roots | array_roots):
            return None
    return j, array, block[j].value.args[0].id, tape, index


def _makes(stmt, array) -> bool:
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
        and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == array \
        and isinstance(stmt.value, gast.Call) and dotted_name(stmt.value.func) == "np.empty" \
        and len(stmt.value.args) == 1 \
        and not stmt.value.keywords and isinstance(stmt.value.args[0], gast.Name)


def _shapes_fit(array, tape) -> bool:
    return K.is_array(array) and K.is_array(tape) and array[2] == tape[2] == "f" \
        and tape[1] == array[1] + 1


def _binds(stmt) -> set:
    return {n.id for n in walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _bindings(func) -> dict:
    """name -> index in the function's body of the statement binding it, for the names
    bound exactly once in the whole function, by a statement of its body."""
    count, where = {}, {}
    for k, stmt in enumerate(func.body):
        for n in walk(stmt):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                count[n.id] = count.get(n.id, 0) + 1
                if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
                        and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0] is n:
                    where[n.id] = k
    return {n: k for n, k in where.items() if count[n] == 1}


def _top_index(body, block) -> int:
    """The index of the statement of `body` holding `block` (len(body) for body itself)."""
    if block is body:
        return len(body)
    for k, stmt in enumerate(body):
        if any(inner is block for inner in blocks([stmt])):
            return k
    return -1


def _writes(func, kinds, roots) -> list:
    """(statement, roots it may write) for every statement at any depth that writes."""
    found = []
    for block in blocks(func.body):
        for stmt in block:
            if isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Expr)):
                parts = [stmt]
            else:  # a compound statement's own expressions (its blocks come on their own)
                parts = [gast.Expr(value=getattr(stmt, f)) for f in ("test", "iter", "value")
                         if isinstance(getattr(stmt, f, None), gast.expr)]
            for part in map(_without_pure_methods, parts):
                hit = set().union(*[a.roots for a in effects(part, kinds, roots).mem
                                    if a.write] or [set()])
                if hit:
                    found.append((stmt, frozenset(hit)))
    return found


_PURE_METHODS = {"copy", "reshape", "ravel", "astype", "transpose", "sum", "max", "min"}


def _without_pure_methods(stmt):
    """`stmt` with each `x.copy()` (and other methods that write nothing) read as `x`,
    for its writes only: elementwise.effects takes any method call for an unknown one."""
    if not any(_pure_method(node) for node in walk(stmt)):
        return stmt  # nothing to strip: no copy needed (effects only reads it)

    class Strip(gast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            return node.func.value if _pure_method(node) else node
    return Strip().visit(copy.deepcopy(stmt))


def _pure_method(node) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
        and node.func.attr in _PURE_METHODS
