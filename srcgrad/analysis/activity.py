"""Pass 6, activity: which values need an adjoint, and which are assigned repeatedly.

A name is *active* when it depends differentiably on a `wrt` parameter
(forward) and the result depends differentiably on it (backward). Only
active names get adjoints; everything else (integers, shapes, masks, values
that do not reach the result) flows through the backward sweep untouched.
Inside loops both directions are iterated to a fixed point.

A name is *reassigned* when it may be assigned more than once while the
function runs (two assignments, one inside a loop, or a parameter assigned
again). Only reassigned names can need recording on the tape; which of them
actually do is decided after the backward sweep is built (record.py).

`definitions(stmt)` and `operands(value)` are the single place that says what
a normalized statement defines and which names it differentiates through
(the elements of a display passed to np.concatenate(...) are operands too).

A name is an *integer* when every assignment gives it an int (`integer_names`):
an index made of those, constants and slices reads one element or a slice
(`plain_index`); any other index may be an integer array or a mask.
"""
from __future__ import annotations

from dataclasses import dataclass

import gast

from ..frontend.normalize import Normalized
from ..rules import lookup
from ..syntax import dotted_name


@dataclass(frozen=True)
class Activity:
    active: frozenset[str]
    reassigned: frozenset[str]
    integers: frozenset[str] = frozenset()  # names that certainly hold an int (`integer_names`)


def names_in(node) -> list[str]:
    """Names read by an expression, skipping static references such as `np.sin`."""
    if node is None:
        return []
    if isinstance(node, gast.Name):
        return [node.id]
    if isinstance(node, gast.Attribute):
        return []  # static (np.pi) or a data attribute (x.shape): never differentiable
    return [n for child in gast.iter_child_nodes(node) for n in names_in(child)]


def operation_rule(value, norm: Normalized):
    """The registry rule for a normalized right-hand side, or None (no rule known)."""
    if isinstance(value, gast.BinOp):
        return lookup(type(value.op))
    if isinstance(value, (gast.UnaryOp, gast.Compare)):
        return lookup(type(value.op if isinstance(value, gast.UnaryOp) else value.ops[0]))
    if isinstance(value, gast.Call):
        return lookup(norm.resolved.callees.get(dotted_name(value.func)))
    return None


def rule_arguments(value) -> tuple[list, dict]:
    """(positional operands, keyword operands) of a normalized operation, as its rule takes them."""
    if isinstance(value, gast.BinOp):
        return [value.left, value.right], {}
    if isinstance(value, gast.UnaryOp):
        return [value.operand], {}
    return value.args, {k.arg: k.value for k in value.keywords}


def differentiable(value, norm: Normalized) -> bool:
    """Whether a right-hand side can carry a gradient at all."""
    if isinstance(value, (gast.Attribute, gast.Constant, gast.Compare)):
        return False
    rule = operation_rule(value, norm)
    if isinstance(value, gast.Call) and rule is None:
        return True  # unknown callee: the reverse pass reports it if it matters
    return rule is None or rule.vjp is not None


def operands(value, norm: Normalized) -> list[str]:
    """Names a right-hand side differentiates through (indices and options excluded)."""
    if not differentiable(value, norm):
        return []
    if isinstance(value, gast.Subscript):
        return names_in(value.value)
    if isinstance(value, gast.Call):  # keyword arguments may carry values too (np.sum(a=x))
        return [n for a in value.args + [k.value for k in value.keywords] for n in names_in(a)]
    return names_in(value)


def is_append(stmt) -> bool:
    return (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)
            and isinstance(stmt.value.func, gast.Attribute) and stmt.value.func.attr == "append")


def definitions(stmt, norm: Normalized) -> list[tuple[str, list[str]]]:
    """[(name defined, names it depends on differentiably)] for one simple statement."""
    if isinstance(stmt, gast.Assign):
        target = stmt.targets[0]
        if isinstance(target, gast.Subscript):  # y[i] = v: y now also depends on v
            return [(target.value.id, [target.value.id] + names_in(stmt.value))]
        return [(target.id, operands(stmt.value, norm))]
    if is_append(stmt):
        receiver = stmt.value.func.value.id
        return [(receiver, [receiver] + names_in(stmt.value.args[0]))]
    return []


def simple_statements(body, depth=0):
    """(statement, loop depth) for every non-compound statement, in program order."""
    for stmt in body:
        if isinstance(stmt, gast.If):
            yield from simple_statements(stmt.body, depth)
            yield from simple_statements(stmt.orelse, depth)
        elif isinstance(stmt, (gast.For, gast.While)):
            yield from simple_statements(stmt.body, depth + 1)
        else:
            yield stmt, depth


def _reachable(start, edges) -> set[str]:
    """Names reachable from `start` along `edges` (pairs source -> target)."""
    successors: dict[str, list[str]] = {}
    for source, target in edges:
        successors.setdefault(source, []).append(target)
    seen, todo = set(start), list(start)
    while todo:
        for target in successors.get(todo.pop(), []):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def analyze(norm: Normalized, wrt: list[str]) -> Activity:
    stmts = list(simple_statements(norm.body))
    edges = [(dep, d) for stmt, _ in stmts for d, deps in definitions(stmt, norm) for dep in deps]
    varied = _reachable(wrt, edges)  # depends on wrt
    useful = _reachable(names_in(norm.result), [(d, dep) for dep, d in edges])  # reaches result
    return Activity(frozenset(varied & useful), frozenset(_reassigned(norm, stmts)),
                    frozenset(integer_names(norm)))


def _reassigned(norm: Normalized, stmts) -> set[str]:
    count: dict[str, int] = {name: 1 for name in norm.inputs}
    looped = set()
    for stmt, depth in stmts:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            name = stmt.targets[0].id
            count[name] = count.get(name, 0) + 1
            if depth:
                looped.add(name)
    return looped | {name for name, n in count.items() if n > 1}


# ---- integers and plain indices ---------------------------------------------------------
_INT_OPS = (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)


def integer_names(norm: Normalized) -> set[str]:
    """Names that certainly hold a Python int: loop variables, `len(x)`, `x.shape[0]`, `i + 1`.

    A name qualifies when every assignment to it gives an int (parameters never
    do: their type is not known). Reads indexed only by these, constants and
    slices are plain (one element or a slice, see `plain_index`).
    """
    values: dict[str, list] = {}
    loops: set[str] = set()

    def visit(body):
        for stmt in body:
            if isinstance(stmt, gast.For):
                loops.add(stmt.target.id)
                visit(stmt.body)
            elif isinstance(stmt, (gast.If, gast.While)):
                visit(stmt.body)
                visit(stmt.orelse)
            elif isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                values.setdefault(stmt.targets[0].id, []).append(stmt.value)
    visit(norm.body)
    shapes = {n for n, vs in values.items()
              if all(isinstance(v, gast.Attribute) and v.attr == "shape" for v in vs)}
    ints = (set(values) | loops) - set(norm.inputs) - shapes
    while True:  # drop names with an assignment not known to give an int, to a fixed point
        dropped = {n for n in ints if not all(_is_int(v, ints, shapes) for v in values.get(n, []))}
        if not dropped:
            return ints
        ints -= dropped


def _is_int(value, ints, shapes) -> bool:
    if isinstance(value, gast.Constant):
        return type(value.value) is int
    if isinstance(value, gast.Name):
        return value.id in ints
    if isinstance(value, gast.BinOp):
        return isinstance(value.op, _INT_OPS) and all(
            _is_int(v, ints, shapes) for v in (value.left, value.right))
    if isinstance(value, gast.UnaryOp):
        return isinstance(value.op, (gast.USub, gast.UAdd)) and _is_int(value.operand, ints, shapes)
    if isinstance(value, gast.Call):
        return isinstance(value.func, gast.Name) and value.func.id in ("len", "int")
    if isinstance(value, gast.Attribute):
        return value.attr in ("size", "ndim")
    if isinstance(value, gast.Subscript):  # x.shape[0]
        return (isinstance(value.value, gast.Name) and value.value.id in shapes
                and isinstance(value.slice, gast.Constant) and type(value.slice.value) is int)
    return False


def plain_index(index, ints) -> bool:
    """Whether an index reads one element or a slice: constants, slices, ints from `ints`.

    Any other name may hold an integer array or a boolean mask (a gather).
    """
    if isinstance(index, gast.Tuple):
        return all(plain_index(e, ints) for e in index.elts)
    if isinstance(index, gast.Name):
        return index.id in ints
    return isinstance(index, (gast.Constant, gast.Slice, gast.Attribute))
