"""Part of pass 4 (desugar.py), run first: a `try` statement runs as written, in a helper.

srcgrad differentiates no code inside try/except (which line raises decides what
ran), but a try around code that is not differentiated (parsing options,
fallbacks for sizes, logging) should just run. Guarantees to the rest of desugar:
- No `Try` is left. Each outermost one becomes a call
  `w1, w2 = _sg_try_<f>_<line>(r1, r2, ...)` of a function holding the statement
  unchanged (`TryBlock.tree`; pipeline.py emits it into the generated module
  beside the gradient, and numba compiles it where numba compiles try: with a
  bare `except:` or `except Exception:`; else the gradient runs as Python with
  a warning). `r` are the function's variables the statement reads, or assigns
  if they may be bound before it; `w` the ones it assigns that the function
  reads elsewhere.
- Its results carry no gradient: a differentiable value that flows through one
  into the result raises MissingRuleError naming the try statement's line
  (transforms/missing.py), never a silently missing term. A variable the
  statement reads only as len(v), v.shape, v.size, v.ndim or v.dtype is passed
  as stop_gradient(v): nothing differentiable flows through those.
- A result assigned only on some paths through the statement and not bound before
  it, or a call of a local function inside it, raises SrcgradSyntaxError naming
  the user's line.
"""
from __future__ import annotations

import builtins
import copy
import re
from dataclasses import dataclass

import gast

from ..runtime import __all__ as RUNTIME_NAMES, stop_gradient
from .check import refuse
from ..syntax import const, function_def, line_comment, name as _name, walk


@dataclass(eq=False)
class TryBlock:
    """Stands for a try statement's helper in `Resolved.callees`: no derivative rule."""
    tree: gast.FunctionDef  # the helper, emitted into the generated module
    where: object  # the try statement (for its line)

    @property
    def __name__(self):
        return self.tree.name


def helper_trees(resolved) -> list:
    """The helpers of the try statements in `resolved` and the callees inlined into it."""
    return [obj.tree for obj in resolved.callees.values() if isinstance(obj, TryBlock)]


def _position(node):
    return (getattr(node, "lineno", 0) or 0, getattr(node, "col_offset", 0) or 0)


def _names(nodes, ctx) -> list[str]:
    """Names used with context `ctx`, in order of first appearance."""
    found: dict[str, None] = {}
    for node in nodes:
        for n in walk(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, ctx):
                found.setdefault(n.id, None)
    return list(found)


def _assigns(stmts, var: str) -> bool:
    """Whether running `stmts` to their end, or to a `raise`, leaves `var` bound."""
    for stmt in stmts:
        if isinstance(stmt, gast.Raise):
            return True
        if isinstance(stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
            if var in _names(targets, gast.Store):
                return True
        if isinstance(stmt, gast.If) and _assigns(stmt.body, var) and _assigns(stmt.orelse, var):
            return True
        if isinstance(stmt, gast.Try) and _always(stmt, var):
            return True
    return False


def _always(stmt, var: str) -> bool:
    """Whether every way through the try statement `stmt` leaves `var` bound."""
    if _assigns(stmt.finalbody, var):
        return True
    return _assigns(stmt.body + stmt.orelse, var) and all(
        _assigns(h.body, var) for h in stmt.handlers)


_SHAPES = ("shape", "size", "ndim", "dtype")


def _shapes_only(stmt) -> set[str]:
    """Names the try statement reads only as len(v), v.shape, v.size, v.ndim or v.dtype:
    no gradient flows through those, so the call passes them as stop_gradient(v)."""
    parents = {id(child): node for node in walk(stmt)
               for child in gast.iter_child_nodes(node)}
    verdict: dict[str, bool] = {}
    for node in walk(stmt):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            up = parents.get(id(node))
            shape = (isinstance(up, gast.Attribute) and up.attr in _SHAPES) or (
                isinstance(up, gast.Call) and isinstance(up.func, gast.Name)
                and up.func.id == "len" and up.args == [node])
            verdict[node.id] = verdict.get(node.id, True) and shape
    return {v for v, only in verdict.items() if only}


class _Lowering:
    def __init__(self, resolved):
        self.resolved = resolved
        self.parsed = resolved.parsed
        tree = resolved.tree
        self.stores = [n for n in walk(tree) if isinstance(n, gast.Name)
                       and isinstance(n.ctx, gast.Store)]
        bound = set(resolved.params) | {n.id for n in self.stores} | set(resolved.data_globals)
        free = {n.id for n in walk(tree) if isinstance(n, gast.Name)
                and n.id not in bound and not self.static(n.id)}  # a local function's definer's
        self.local, self.free = bound | free, free
        self.loads = [n for f in [tree, *resolved.local_functions.values()]
                      for n in walk(f) if isinstance(n, gast.Name)
                      and isinstance(n.ctx, gast.Load)]
        stem = re.sub(r"\W", "_", self.parsed.func.__name__)
        self.stem = f"_sg_try_{stem}_"

    def static(self, name: str) -> bool:
        """Whether `name` is a module-level name of the generated module (np, a runtime
        helper, a builtin, an object resolve put in the namespace), not a variable."""
        resolved = self.resolved
        return (name in ("np", "math") or name in RUNTIME_NAMES or name in resolved.namespace
                or hasattr(builtins, name)
                or any(spelled.split(".")[0] == name for spelled in resolved.callees))

    def fail(self, node, what: str, hint: str):
        refuse(self.parsed, node, what, hint)

    def block(self, stmts) -> list:
        out = []
        for stmt in stmts:
            if isinstance(stmt, gast.Try):
                out.append(self.lower(stmt))
                continue
            for field in ("body", "orelse"):
                if isinstance(stmt, (gast.If, gast.For, gast.While)):
                    setattr(stmt, field, self.block(getattr(stmt, field)))
            out.append(stmt)
        return out

    def lower(self, stmt):
        """The call replacing `stmt`; its helper goes into `Resolved.callees`."""
        inputs, outputs = self.interface(stmt)
        shapes_only = _shapes_only(stmt)
        helper = f"{self.stem}{self.parsed.loc(stmt).lineno}"  # the line in the user's file
        result = (gast.Tuple(elts=[_name(v) for v in outputs], ctx=gast.Load())
                  if len(outputs) != 1 else _name(outputs[0]))
        body = [line_comment(self.parsed, stmt), copy.deepcopy(stmt),
                gast.Return(value=result if outputs else const(None))]
        tree = function_def(helper, inputs, body)
        self.resolved.callees[helper] = TryBlock(tree, stmt)
        if any(v in shapes_only for v in inputs):
            self.resolved.callees.setdefault("stop_gradient", stop_gradient)
        call = gast.Call(func=_name(helper), keywords=[], args=[
            gast.Call(func=_name("stop_gradient"), args=[_name(v)], keywords=[])
            if v in shapes_only else _name(v) for v in inputs])
        if not outputs:
            return gast.copy_location(gast.Expr(value=call), stmt)
        target = copy.deepcopy(result)
        for n in walk(target):
            if isinstance(n, gast.Name):
                n.ctx = gast.Store()
        return gast.copy_location(gast.Assign(targets=[target], value=call, type_comment=None),
                                  stmt)

    def interface(self, stmt) -> tuple[list[str], list[str]]:
        """(the variables the helper takes, those it returns), in order of appearance."""
        inside = {id(n) for n in walk(stmt)}
        for node in walk(stmt):
            callee = getattr(node, "callee", None)
            if isinstance(callee, gast.FunctionDef):
                self.fail(node, f"calling the local function {callee.name}() inside a try "
                          "statement", "call it before or after the try statement")
            if callee is not None and isinstance(node.func, gast.Name):  # runs as Python
                self.resolved.namespace[node.func.id] = callee
        before = set(self.resolved.params) | set(self.resolved.data_globals) | self.free | {
            n.id for n in self.stores if id(n) not in inside and _position(n) < _position(stmt)}
        written = [v for v in _names([stmt], gast.Store) if v in self.local]
        inputs = list(dict.fromkeys(v for v in _names([stmt], gast.Load) + written
                                    if v in self.local and v in before))
        outside = {n.id for n in self.loads if id(n) not in inside}
        outputs = [v for v in written if v in outside]
        for var in outputs:
            if var not in before and not _always(stmt, var):
                self.fail(stmt, f"a try statement that assigns {var!r} on some paths only",
                          f"give {var} a value before the try statement")
        return inputs, outputs


def lower_try(resolved) -> None:
    """Lower every try statement of `resolved.tree` as the module docstring says, in place."""
    if any(isinstance(n, gast.Try) for n in walk(resolved.tree)):
        resolved.tree.body = _Lowering(resolved).block(resolved.tree.body)
