"""Which arrays a name of a generated function may share memory with.

`roots(func)` maps each name to a set of *roots*: an allocation site (the statement
binding a new array: arithmetic, a NumPy constructor, `snapshot`, `zeros_like`, ...;
one root for every array that site makes, in any iteration), `IN` (the function's
parameters: never written by a function transforms/loops.py changes, so they share one
root), or `UNKNOWN` (what an unknown call returns: may be anything). A view, an alias or
a helper that may return one of its arguments (`unbroadcast(g, t)` returns g when the
shapes agree, `restore_at(tape, k, x)` a row of the tape or x; `np.ravel(x)`,
`np.split(x, k)`, `np.array(x, copy=False)` and NumPy's other functions that may return
views, x's memory) takes the roots of what it may return; a list takes the roots of
what is appended to it. Flow-insensitive, to a fixed point. A call of a function in
`generated` (the generated functions of the same module) returns new arrays or views of
its arguments: the call's site and the arguments' roots (generated code binds no global
arrays). Guarantee: two names whose root sets are disjoint and free of `UNKNOWN` never
hold views of the same memory.
"""
from __future__ import annotations

import gast

from .kinds import kind_of, is_number
from ..syntax import walk

IN, UNKNOWN = "in", "unknown"
_FRESH = {"snapshot", "zeros_like", "expand_to", "seed_like", "fill_like", "tape_like",
          "tape_array", "axis_extremum_share", "zeros", "ones", "empty", "full", "copy",
          "exp", "log", "sqrt", "tanh", "sin", "cos", "array", "empty_like", "ones_like",
          "matmul_lhs_grad", "matmul_rhs_grad"}
_RETURNS_ARG = {"unbroadcast": (0,), "zeros_plus": (1,), "restore_at": (0, 2), "restore": (0, 1)}
_NO_ARRAY = {"trip_count", "range_last", "len", "float", "int", "record_at"}
_NP_VIEWS = {"ravel", "reshape", "transpose", "asarray", "squeeze", "expand_dims",
             "atleast_1d", "atleast_2d", "atleast_3d", "diagonal", "swapaxes", "moveaxis",
             "broadcast_to", "real", "imag", "flip", "fliplr", "flipud", "rot90",
             "ascontiguousarray", "asfortranarray", "asanyarray", "require", "diag",
             "split", "array_split", "hsplit", "vsplit", "dsplit", "broadcast_arrays",
             "matrix_transpose", "permute_dims"}


_GENERATED = "<generated>"  # not a name: where roots keeps `generated` while it runs


def roots(func: gast.FunctionDef, kinds: dict, generated=frozenset()) -> dict:
    """name -> frozenset of roots (see the module docstring)."""
    found = {p.id: {IN} for p in func.args.args}
    found[_GENERATED] = set(generated)
    sites = {}
    for _ in range(20):
        before = {n: set(r) for n, r in found.items()}
        _visit(func.body, found, kinds, sites)
        if found == before:
            break
    else:
        return {n: frozenset({UNKNOWN}) for n in found if n != _GENERATED}
    return {n: frozenset(r) for n, r in found.items() if n != _GENERATED}


def of_expr(node, found, kinds, site) -> set:
    """The roots of the value `node` evaluates to (`site` names a new array it makes)."""
    if isinstance(node, gast.Name):
        return set(found.get(node.id, ()))
    if isinstance(node, gast.Constant):
        return set()
    if is_number(kind_of(node, kinds)):
        return set()
    if isinstance(node, (gast.Subscript, gast.Attribute)):
        return of_expr(node.value, found, kinds, site)
    if isinstance(node, (gast.Tuple, gast.List)):
        out = {site} if isinstance(node, gast.List) else set()
        for elt in node.elts:
            out |= of_expr(elt, found, kinds, site)
        return out
    if isinstance(node, gast.IfExp):
        return of_expr(node.body, found, kinds, site) | of_expr(node.orelse, found, kinds, site)
    if isinstance(node, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.BoolOp)):
        return {site}
    if isinstance(node, gast.Call):
        return _call(node, found, kinds, site)
    return {UNKNOWN}


def _call(node, found, kinds, site):
    func = node.func
    attr = func.attr if isinstance(func, gast.Attribute) else func.id \
        if isinstance(func, gast.Name) else None
    numpy = isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name) \
        and func.value.id in ("np", "math")
    if attr in _NO_ARRAY:
        return set()
    if attr in _RETURNS_ARG and isinstance(func, gast.Name):
        out = {site}
        for k in _RETURNS_ARG[attr]:
            if k < len(node.args):
                out |= of_expr(node.args[k], found, kinds, site)
        return out
    if attr in _FRESH and (numpy or isinstance(func, gast.Name) or attr == "copy") \
            and not (attr == "array" and node.keywords):  # np.array(a, copy=False): a's
        return {site}
    if isinstance(func, gast.Name) and attr in found.get(_GENERATED, ()):
        out = {site}
        for arg in node.args:
            out |= of_expr(arg, found, kinds, site)
        return out
    if numpy and (attr in _NP_VIEWS or attr == "array") and node.args:  # may share arg 0
        return {site} | of_expr(node.args[0], found, kinds, site)
    if numpy:
        return {site}  # other NumPy functions return new arrays or numbers
    return {UNKNOWN}


def _add(found, name, new, kinds):
    if not is_number(kinds.get(name)):  # numbers share no memory
        found.setdefault(name, set()).update(new)


def _visit(stmts, found, kinds, sites):
    for stmt in stmts:
        site = sites.setdefault(id(stmt), f"site{len(sites)}")
        if isinstance(stmt, gast.Assign):
            value = of_expr(stmt.value, found, kinds, site)
            for target in stmt.targets:
                for node in walk(target):
                    if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                        _add(found, node.id, value, kinds)
        elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
            _add(found, stmt.target.id, of_expr(stmt.value, found, kinds, site), kinds)
        elif isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
            call = stmt.value
            if isinstance(call.func, gast.Attribute) and call.func.attr in ("append", "extend") \
                    and isinstance(call.func.value, gast.Name) and call.args:
                _add(found, call.func.value.id, of_expr(call.args[0], found, kinds, site),
                     kinds)
        elif isinstance(stmt, gast.For):
            if isinstance(stmt.target, gast.Name):
                _add(found, stmt.target.id, of_expr(stmt.iter, found, kinds, site) - {site},
                     kinds)
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                _visit(inner, found, kinds, sites)
        for handler in getattr(stmt, "handlers", []) or []:
            _visit(handler.body, found, kinds, sites)


def may_alias(a, b) -> bool:
    return bool(a & b) or UNKNOWN in a or UNKNOWN in b
