"""The compiled form of a generated function: runs of elementwise array statements as
explicit loops, for arguments of given kinds.

numba compiles each array statement into a loop of its own with a new array, and at the
7 to 50 elements of an LSTM cell or a camera the allocations and reference counts cost
far more than the arithmetic. `fuse_loops(func, kinds)` rewrites a generated function,
given the kinds of its parameters (analysis/kinds.py), so that each run of statements
computing arrays element by element becomes loops over the elements, in which the arrays
that only the run itself reads are numbers. In each block, a window (windows.py) takes
consecutive simple statements and gives each a phase:
- LOOP: an elementwise statement (window_forms.py), run inside a loop, element by element;
- PRE: a statement run before the loops (it binds a view or a number the loops read);
- POST: a statement run after the loops, in its order (it reads what they computed).
Statements *conflict* when one binds a name the other reads or binds, or writes memory the
other touches (analysis/roots.py). LOOP statements conflicting by names share a loop,
running element by element in their order; memory two of them touch is touched through the
same view (each element then sees the same sequence of reads and writes as before) or only
accumulated into (`+=`: the order of a sum changes, its terms do not). Conflicting
statements of different loops, and of different phases, run in their order: a PRE
statement conflicts with no earlier LOOP or POST one, a LOOP one with no earlier POST one.

Each loop is emitted as: the views it reads bound to names; `_n = shape` of the first
array it reads and `same_shape(a, _n)` of every other; tapes it records into allocated;
`np.empty(_n)` of each array it computes that is read after it (by a POST statement or
outside the window; none for an update `v = v + e` that in_place.py lets write into v's
own array); then the loop, each statement as its element form, ending with those
arrays' elements. The function starts with `guard_kind` of each parameter whose kind was
assumed. A failed check raises ShapeGuard and the caller runs the function as it was
(backend/fused.py). Guarantee: when no check fails, the function returns what it returned
before: every element is computed by the same operations from the same values
(elementwise.py), sums accumulated in place up to their order.
"""
from __future__ import annotations

import gast

from ..analysis import kinds as K
from ..analysis.liveness import live_after
from ..analysis.roots import roots as roots_of
from ..syntax import assign, call, const, name, walk
from .elementwise import names_in
from .elements import rewrite
from .numbers import simplify
from .products import outer_products
from .contract import contract
from .dead_stores import dead_stores
from .first_writes import first_writes
from .coalesce import coalesce
from .copies import own_copies
from .exit_tapes import exit_tapes
from .hoist_buffers import hoist_buffers
from .hoist_tapes import hoist_tapes
from .in_place import in_place
from .next_rows import next_rows
from .tape_rows import tape_rows
from .reuse_buffers import reuse_buffers
from .flat_views import flatten_views
from .windows import POST, PRE, Window, view_path

_DTYPE_CODES = {"f": 1, "i": 2, "b": 3}


class Function:
    """What the windows of one function share."""

    def __init__(self, func, kinds):
        self.kinds = kinds
        self.roots = roots_of(func, kinds)
        self.live = live_after(func, shape_only=True)  # values read later
        self.shaped = live_after(func)  # values or shapes read later
        self.used = {n.id for n in walk(func) if isinstance(n, gast.Name)} | {func.name}
        self._indices = {}
        self.loops = 0

    def fresh(self, base: str) -> str:
        return _fresh(base, self.used)

    def indices(self, rank: int) -> list:
        while len(self._indices) < rank:
            self._indices[len(self._indices)] = self.fresh("_k" if not self._indices else "_j")
        return [self._indices[k] for k in range(rank)]

    def index_names(self) -> set:
        """The names of the elementwise loops' indices made so far."""
        return set(self._indices.values())


def fuse_loops(func: gast.FunctionDef, params: dict, returns=None):
    """(`func` with its elementwise runs as loops, or None if it has none; the kinds of its
    names). The tree is rewritten in place: pass one the caller owns. `returns`: what
    calls of the module's other functions return (analysis/kinds.infer)."""
    kinds = K.infer(func, params, returns)
    used = {n.id for n in walk(func) if isinstance(n, gast.Name)}
    roots, fresh = roots_of(func, kinds), (lambda base: _fresh(base, used))
    changed = rewrite(func.body, kinds, roots, fresh)
    changed += simplify(func, kinds)
    changed += outer_products(func.body, kinds, roots, fresh)
    changed += exit_tapes(func)
    fn = Function(func, kinds)
    func.body = _block(func.body, fn)
    if not fn.loops and not changed:
        return None, kinds
    looped = K.infer(func, params, returns)  # the loops' names too (views only go)
    dead_stores(func, roots_of(func, looped))
    flatten_views(func, looped)
    contract(func, looped, returns[0] if returns else ())
    own_copies(func, looped)
    hoist_tapes(func)
    tape_rows(func, looped, roots_of(func, looped))
    next_rows(func, looped, roots_of(func, looped))
    coalesce(func, looped)
    taken = {n.id for n in walk(func) if isinstance(n, gast.Name)}
    first_writes(func, looped, roots_of(func, looped), lambda base: _fresh(base, taken))
    reuse_buffers(func, looped, lambda base: _fresh(base, taken), fn.index_names())
    hoist_buffers(func, looped, lambda base: _fresh(base, taken))
    checks = []
    for p in func.args.args:
        kind = kinds.get(p.id, K.TOP)
        if kind[0] in ("num", "arr") and kind[-1] in _DTYPE_CODES:
            ndim = kind[1] if kind[0] == "arr" else 0
            checks.append(gast.Expr(value=call("guard_kind", name(p.id), const(ndim),
                                               const(_DTYPE_CODES[kind[-1]]))))
    func.body = checks + func.body
    return func, kinds


def _fresh(base: str, used: set) -> str:
    candidate, k = base, 2
    while candidate in used:
        candidate, k = f"{base}{k}", k + 1
    used.add(candidate)
    return candidate


def calls(func: gast.FunctionDef, kinds: dict, names) -> list:
    """(name, kinds of its arguments) of each call in `func` to a function in `names`."""
    found = []
    for node in walk(func):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                and node.func.id in names and not node.keywords:
            found.append((node.func.id, [K.kind_of(a, kinds) or K.TOP for a in node.args]))
    return found


def _block(stmts, fn, looped=False):
    out, k, paths = [], 0, {}
    while k < len(stmts):
        window = Window(fn, paths)
        j = k
        while j < len(stmts) and window.add(stmts[j]):
            j += 1
        taken = window.finish()
        if taken and _worth(window):
            out += _emit(window, stmts[k + taken - 1], looped)
            fn.loops += len(window.comps)
            for stmt in stmts[k:k + taken]:
                _follow(paths, stmt)
            k += taken
            continue
        stmt = stmts[k]
        for field in ("body", "orelse"):
            if isinstance(stmt, (gast.For, gast.While, gast.If)) and getattr(stmt, field):
                setattr(stmt, field, _block(getattr(stmt, field), fn, looped or isinstance(
                    stmt, (gast.For, gast.While)) and field == "body"))
        _follow(paths, stmt)
        out.append(stmt)
        k += 1
    return out


def _follow(paths, stmt):
    """Keep `paths` (name -> (path of the view it holds, names the path reads)) true
    after `stmt`: forget what it rebinds, learn the views it binds."""
    bound = {n.id for n in walk(stmt) if isinstance(n, gast.Name)
             and isinstance(n.ctx, gast.Store)}
    for n in list(paths):
        if n in bound or paths[n][1] & bound:
            del paths[n]
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) and isinstance(stmt.value, gast.Subscript):
        path = view_path(stmt.value, {n: p for n, (p, _) in paths.items()})  # (version 0)
        target = stmt.targets[0].id
        if path is not None and target not in names_in(stmt.value):
            paths[target] = (path, names_in(stmt.value) | {path[0]})


def _worth(window) -> bool:
    """Whether a loop computes anything (an operation, two statements) or stores into a
    view: numba compiles its own slice assignment (`m[:, :j] = a[1:, :j]`) slowly (det's
    first call: 6.3-7.1 s of CPU with it, 3.1-3.3 s with a loop)."""
    for comp in window.comps:
        ops = sum(isinstance(n, (gast.BinOp, gast.UnaryOp, gast.Call))
                  for i in comp.items for s in i.body for n in walk(s))
        stores = any(isinstance(t, gast.Subscript) for i in comp.items
                     for t in getattr(i.node, "targets", None) or [getattr(i.node, "target",
                                                                           None)])
        if ops or len(comp.items) > 1 or stores:
            return True
    return False


def _noted(items) -> list:
    """The statements of `items`, each run under its line comment."""
    out, said = [], None
    for item in items:
        if item.note is not None and item.note is not said:
            out.append(item.note)
            said = item.note
        out.append(item.node)
    return out


def _emit(window, last, looped=False) -> list:
    """The window's code; updates in a loop's body may write in place (in_place.py: once
    per call elsewhere, the allocation saved is not worth it, and measured, gmm's form ran
    1.05-1.07x slower with its one update after the loops written in place)."""
    fn = window.fn
    live = {n for n in window.objects if n in fn.live[id(last)] or window.objects[n].post_reads}
    shaped = {n for n in window.objects if n in fn.shaped[id(last)]} - live
    out = _noted([i for i in window.items if i.phase == PRE])
    bound, overwritten = set(), in_place(window, last) if looped else set()
    for comp in window.comps:
        out += _loop(window, comp, live, shaped, bound, overwritten)
    return out + _noted([i for i in window.items if i.phase == POST])


def _arrays(window, comp, live, overwritten=()):
    """Obj -> (name of its array, other names to bind to it after the loop), for the
    loop's arrays whose values are read after it; a name in `overwritten` (in_place.py)
    names the array it held before."""
    names = {}
    for n, obj in window.objects.items():
        if obj.comp is comp and n in live:
            names.setdefault(obj, []).append(n)
    arrays = {}
    for obj, bound in names.items():
        direct = [n for n in bound if n not in window.external or n in overwritten]
        array = direct[0] if direct else window.fn.fresh(f"_{bound[0]}_a")
        arrays[obj] = (array, [n for n in bound if n != array])
    return arrays


def _loop(window, comp, live, shaped, bound, overwritten=()) -> list:
    """The code of one component: its prologue, its loop and what it binds after."""
    fn = window.fn
    tapes = [i.tape for i in comp.items if i.tape is not None]
    taped = {t[1] for t in tapes}
    used = {v for i in comp.items for v in _names(i.body) | {a.id for a in i.arrays}}
    views = [(v, node) for v, node in window.views.values() if v in used and v not in bound]
    bound |= {v for v, _ in views}
    late = {v for v, node in views if _root(node) in taped}
    checked = list(dict.fromkeys(a.id for i in comp.items for a in i.arrays))
    first = next(a for a in checked if a not in late)
    shape = fn.fresh("_n")
    code = [assign(v, node) for v, node in views if v not in late]
    code.append(assign(shape, gast.Attribute(value=name(first), attr="shape", ctx=gast.Load())))
    like = next((a for a in checked if a not in late and K.is_array(fn.kinds.get(a))
                 and fn.kinds[a][2] == "f"), None)  # a float64 array of the loop's shape
    for test, tape, count in tapes:  # what tape_like makes of an array of the loop's shape
        made = call("tape_like", name(like), count) if like else call(_NP_EMPTY, gast.BinOp(
            left=gast.Tuple(elts=[count], ctx=gast.Load()), op=gast.Add(), right=name(shape)))
        code.append(gast.If(test=test, body=[assign(tape, made)], orelse=[]))
    code += [assign(v, node) for v, node in views if v in late]
    code += [gast.Expr(value=call("same_shape", name(a), name(shape))) for a in checked
             if a != first]
    needed = live | (shaped if like is None else set())
    arrays = _arrays(window, comp, needed, overwritten)
    code += [assign(array, call(_NP_EMPTY, name(shape))) for array, _ in arrays.values()
             if array not in overwritten]
    sums = [i.reduce for i in comp.items if i.reduce is not None]
    code += [assign(acc, const(0.0)) for acc, _, _ in sums]
    moved = _recorded_after(comp, arrays)
    code.append(_nest(window, comp, arrays, shape, moved))
    code += [gast.Expr(value=call("record_at", name(i.record[0]), i.record[1],
                                  name(arrays[i.record[2]][0]))) for i in moved]
    code += [assign(total, name(acc)) if op is None else
             gast.AugAssign(target=name(total, store=True), op=op, value=name(acc))
             for acc, total, op in sums]
    done = set()
    for array, others in arrays.values():
        code += [assign(n, name(array)) for n in others]
        done |= {array, *others}
    for n, obj in window.objects.items():  # read later for its shape only: any array of it
        if obj.comp is comp and n in shaped and n not in done:  # (also a second name of
            code.append(assign(n, name(like)))                   # an array made above)
    return code


_NP_EMPTY = gast.Attribute(value=name("np"), attr="empty", ctx=gast.Load())


def _recorded_after(comp, arrays) -> list:
    """The record_at items of `comp` recording an array the loop makes anyway (in
    `arrays`) that no later statement of the loop updates: recorded after the loop from
    that array (the same numbers). A store into a tape row inside the loop kept LLVM from
    seeing that the loop's indices are not negative (the tape is allocated in an `if` of
    the enclosing loop): every array of the loop was then read by gathers."""
    moved = []
    for k, item in enumerate(comp.items):
        if item.record is None or item.record[2] not in arrays:
            continue
        root = item.record[2].root
        if not any(a.write and root in a.roots for later in comp.items[k + 1:]
                   for a in later.obj_mem):
            moved.append(item)
    return moved


def _nest(window, comp, arrays, shape, moved=()):
    """The loops over every element, innermost holding the statements (but the records
    `moved` after the loop)."""
    indices = window.fn.indices(comp.rank)
    body, said = [], None
    for item in comp.items:
        if item in moved:
            continue
        if item.body and item.note is not None and item.note is not said:
            body.append(item.note)
            said = item.note
        body += item.body
    index = name(indices[0]) if comp.rank == 1 else gast.Tuple(
        elts=[name(n) for n in indices], ctx=gast.Load())
    for obj, (array, _) in arrays.items():
        body.append(gast.Assign(targets=[gast.Subscript(value=name(array), slice=index,
                                                        ctx=gast.Store())],
                                value=name(obj.scalar), type_comment=None))
    for depth in reversed(range(comp.rank)):
        extent = gast.Subscript(value=name(shape), slice=const(depth), ctx=gast.Load())
        body = [gast.For(target=name(indices[depth], store=True), iter=call("range", extent),
                         body=body, orelse=[], type_comment=None)]
    return body[0]


def _names(stmts) -> set:
    return {n.id for s in stmts for n in walk(s) if isinstance(n, gast.Name)}


def _root(node):
    while isinstance(node, gast.Subscript):
        node = node.value
    return node.id if isinstance(node, gast.Name) else None
