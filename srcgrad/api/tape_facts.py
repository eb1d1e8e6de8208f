"""What a tape's `with` block says, computed once per code location, and the values a
frame sees, read without copying them (gradient_tape.py's per-step path).

- `with_site(frame)`: the module text and the `with` node at the frame's line, found
  once per (code object, line). A code object's source does not change while it
  runs, so a tape in a loop walks its module's tree once, not at every step.
- `facts(block)`: for the block's current range (start, stop), the names its body
  reads before assigning them, the names it assigns, and its assignments as
  (line, written, read) for `Facts.dependencies(executed)`, which is kept per set of
  lines that ran (NOTE [executed lines]), and `Facts.reached`, the names computed
  from a set of names. These depend only on the source.
- `name_read`, `name_assigned`: the block's name for a value, by identity, as
  `GradientTape.gradient` looks it up; `read_data(block, resolved, values)`: the
  current data globals, read straight from their dictionaries (the values of
  `Resolved.read_globals`).
- `straight(block)`: whether every line of the block runs unless an exception stops
  it; such a block needs no line events (NOTE [executed lines]).
- `FrameValues(frame)`: the mapping `{**f_globals, **f_locals}` stands for, without
  building it: a module-level training loop has every global of a notebook there.
- `refresh(block, frame)`: the block's namespace brought up to date with the frame
  (its globals, and the functions and modules its locals hold); done before the
  block is resolved or built, not at every step. `read_data` updates just the data
  globals the generated code reads through that namespace, before a call.
"""
from __future__ import annotations

import gast

import numpy as np

from ..errors import SourceUnavailableError, SrcgradError
from .binding import readers
from .tape_blocks import grown_by, is_data, names, source_tree, with_at
from .variables import Variable
from ..syntax import walk

_SITES: dict = {}  # (code object, line) -> (module text, `with` node or None)
_MEMO_LIMIT = 64  # dependency sets kept per block range


def with_site(frame):
    """(module text, `with` node) of the statement a tape is entered at in `frame`."""
    key = (frame.f_code, frame.f_lineno)
    site = _SITES.get(key)
    if site is None:
        text, tree = source_tree(frame.f_code.co_filename, frame.f_globals)
        site = _SITES[key] = (text, with_at(tree, frame.f_lineno))
    if site[1] is None:
        raise SourceUnavailableError(
            f"srcgrad.GradientTape could not find its `with` statement at "
            f"{frame.f_code.co_filename}:{frame.f_lineno}; use it as `with "
            "srcgrad.GradientTape() as tape:`, or use srcgrad.grad on a function")
    return site


class FrameValues:
    """Read-only `{**frame.f_globals, **frame.f_locals}`, looked up name by name."""

    __slots__ = ("globals", "locals")

    def __init__(self, frame):
        self.globals = frame.f_globals
        self.locals = frame.f_locals  # a snapshot on Python <= 3.12: take it once per use

    def __contains__(self, name) -> bool:
        return name in self.locals or name in self.globals

    def __getitem__(self, name):
        if name in self.locals:
            return self.locals[name]
        return self.globals[name]

    def get(self, name, default=None):
        return self[name] if name in self else default


class Facts:
    """The source facts of one block range (see the module docstring)."""

    def __init__(self, stmts):
        self.reads = _read_before_written(stmts)
        self.assigned = sorted({n for s in stmts for n in names(s, gast.Store)})
        self.assignments = _assignments(stmts)
        self.appended = {written for _, written, _, grown in self.assignments if grown == "grown"}
        self._deps: dict = {}
        self._reached: dict = {}  # (id of a dependencies dict kept in _deps, start) -> names

    def snapshot(self, frame) -> dict:
        """name -> value of the names the body reads before assigning them that hold data
        (numbers, arrays, Variables, ...) in `frame`, locals over globals."""
        local, outer = frame.f_locals, frame.f_globals
        found = {}
        for name in self.reads:
            if name in local:
                value = local[name]
            elif name in outer:
                value = outer[name]
            else:
                continue
            if is_data(value):
                found[name] = value
        return found

    def reached(self, deps, start) -> frozenset:
        """`start` and every name computed from it, through `deps` (one of `dependencies`)."""
        key = (id(deps), frozenset(start))
        seen = self._reached.get(key)
        if seen is None:
            seen, todo = set(start), list(start)
            while todo:
                current = todo.pop()
                for name, reads in deps.items():
                    if current in reads and name not in seen:
                        seen.add(name)
                        todo.append(name)
            seen = self._reached[key] = frozenset(seen)
        return seen

    def dependencies(self, executed=None) -> dict:
        """name -> names it is computed from, over every assignment (any depth) that ran: on
        a line in `executed`, when the lines that ran are known."""
        key = None if executed is None else frozenset(executed)
        deps = self._deps.get(key)
        if deps is None:
            if len(self._deps) >= _MEMO_LIMIT:
                self._deps.clear()
                self._reached.clear()
            deps = self._deps[key] = {}
            for line, written, reads, augmented in self.assignments:
                if key is not None and line not in key:
                    continue
                deps.setdefault(written, set()).update(reads)
                if augmented:
                    deps[written].add(written)
        return deps


# Statements after which, or inside which, some lines of a block may not run.
_BRANCHING = frozenset({"If", "For", "AsyncFor", "While", "Try", "TryStar", "Match", "Return",
                        "Break", "Continue", "FunctionDef", "AsyncFunctionDef", "ClassDef",
                        "Yield", "YieldFrom", "Await", "AsyncWith"})


def straight(block) -> bool:
    """Whether every line of the block's body runs, in order, unless an exception stops it:
    no branch, loop, try, early exit, nested definition, or `with` other than the tape's own
    (`stop_recording()`, an inner `GradientTape(...)`). Kept on the block."""
    if block.straight is None:
        block.straight = not any(
            type(node).__name__ in _BRANCHING
            or (isinstance(node, gast.With) and not all(_tape_context(i.context_expr)
                                                        for i in node.items))
            for stmt in block.node.body for node in walk(stmt))
    return block.straight


def _tape_context(expr) -> bool:
    if not isinstance(expr, gast.Call):
        return False
    func = expr.func
    name = func.attr if isinstance(func, gast.Attribute) else getattr(func, "id", None)
    return name in ("stop_recording", "GradientTape")


def facts(block) -> Facts:
    key = (block.start, block.stop)
    found = block.facts.get(key)
    if found is None:
        found = block.facts[key] = Facts(block.statements)
    return found


def refresh(block, frame) -> None:
    """The block's namespace: the frame's globals, then the non-data values of its locals."""
    block.namespace.update(frame.f_globals)
    block.namespace.update({k: v for k, v in frame.f_locals.items() if not is_data(v)})


def name_read(snapshot: dict, value):
    """The first name the block read `value` from (by identity), or None."""
    for name, held in snapshot.items():
        if held is value:
            return name
    return None


def held_inside(reads, values: FrameValues) -> dict:
    """id -> where the block reaches that value inside another, as `name[k]` or `name.attr`:
    in a list, tuple or dict, or an attribute of an object of the user's (a layer holding
    its Variables), up to three levels down. Names read directly are not in it."""
    found: dict = {}
    for name in reads:
        if name in values:
            _collect(values[name], name, 0, found)
    return found


def _collect(held, path: str, depth: int, found: dict) -> None:
    if depth > 2 or isinstance(held, (np.ndarray, Variable, str, bytes, int, float)):
        return
    if isinstance(held, (list, tuple)) and len(held) <= 10_000:
        items = [(f"[{k}]", v) for k, v in enumerate(held)]
    elif isinstance(held, dict) and len(held) <= 10_000:
        items = [(f"[{k!r}]", v) for k, v in held.items()]
    elif (isinstance(getattr(held, "__dict__", None), dict) and not isinstance(held, type)
          and not type(held).__module__.startswith(("srcgrad", "builtins"))):
        items = [(f".{k}", v) for k, v in vars(held).items()]
    else:
        return
    for key, item in items:
        found.setdefault(id(item), path + key)
        _collect(item, path + key, depth + 1, found)


def name_assigned(values: FrameValues, assigned, value):
    """The first of the names the block assigns that holds `value` now, or None."""
    local, outer = values.locals, values.globals
    for name in assigned:
        if name in local:
            if local[name] is value:
                return name
        elif name in outer and outer[name] is value:
            return name
    return None


_READERS: dict = {}  # id(resolved) -> (resolved, its readers, the block's own data globals)


def read_data(block, resolved, values: FrameValues) -> list:
    """`resolved.read_globals()` now: each value read straight from its dict or closure
    cell. Those the block's own function reads (not through a callee) come from the
    namespace, which they are first brought up to date in from `values`, as `refresh`
    would: a local that is not data, else the global."""
    hit = _READERS.get(id(resolved))
    if hit is None or hit[0] is not resolved:
        own = [n for n in resolved.data_globals if n not in resolved.global_sources]
        hit = _READERS[id(resolved)] = (resolved, readers(resolved, resolved.parsed.func), own)
    for name in hit[2]:
        if name in values.locals and not is_data(values.locals[name]):
            block.namespace[name] = values.locals[name]
        elif name in values.globals:
            block.namespace[name] = values.globals[name]
    out = []
    for where, key in hit[1]:
        try:
            out.append(key.cell_contents if where is None else where[key])
        except (KeyError, ValueError):  # gone: as read_globals sees it
            return resolved.read_globals()
    return out


def is_float(value) -> bool:
    if isinstance(value, Variable):
        return True
    if isinstance(value, (bool, np.bool_, int, np.integer)):
        return False
    return isinstance(value, (float, np.floating)) or (
        isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating))


def plain(value, copy=True):
    """The numbers generated code computes with (nested lists of numbers become arrays);
    arrays are copies unless `copy` is false."""
    if isinstance(value, Variable):
        return value.value
    if isinstance(value, (list, tuple)):
        try:
            value = np.asarray(value, dtype=np.float64)
        except ValueError:  # arrays of different shapes: a list of them
            return [plain(v, copy) for v in value]
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return float(value)
        return np.array(value, dtype=np.float64) if copy else np.asarray(value, np.float64)
    return value


def fresh(value):
    return value.copy() if isinstance(value, np.ndarray) else value


def check_cut(stmts, cut) -> None:
    """An intermediate source must be assigned once, at the top of the block."""
    for name in cut:
        top = [s for s in stmts if isinstance(s, gast.Assign) and len(s.targets) == 1
               and isinstance(s.targets[0], gast.Name) and s.targets[0].id == name]
        anywhere = [n for s in stmts for n in names(s, gast.Store) if n == name]
        if len(top) != 1 or len(anywhere) != 1:
            raise SrcgradError(
                f"srcgrad.GradientTape: the gradient with respect to {name!r}, a value "
                "computed in the block, needs it assigned exactly once, as `name = ...` at "
                "the top level of the block")


def _assignments(stmts) -> list:
    """(line, written name, names read, augmented) for every assignment at any depth, and
    for `xs.append(v)` (`extend`, `insert`): xs is computed from itself and v ("grown")."""
    found = []
    for stmt in stmts:
        for node in walk(stmt):
            if grown_by(node) is not None:
                reads = frozenset(n for a in node.args for n in names(a, gast.Load))
                found.append((getattr(node, "lineno", None), grown_by(node), reads, "grown"))
            if isinstance(node, (gast.Assign, gast.AugAssign, gast.For)):
                targets = node.targets if isinstance(node, gast.Assign) else [node.target]
                source = node.iter if isinstance(node, gast.For) else node.value
                reads = frozenset(names(source, gast.Load))
                for target in targets:
                    for written in names(target, gast.Store) + (
                            [target.value.id] if isinstance(target, gast.Subscript)
                            and isinstance(target.value, gast.Name) else []):
                        found.append((getattr(node, "lineno", None), written, reads,
                                      isinstance(node, gast.AugAssign)))
    return found


def _read_before_written(stmts) -> list[str]:
    """Names the statements read before (or without) assigning them, in first-read order."""
    found, assigned = [], set()

    def visit(node):
        if isinstance(node, gast.Assign):
            visit(node.value)
            for target in node.targets:
                visit_target(target)
            return
        if isinstance(node, gast.AugAssign):
            visit(node.value)
            visit(node.target if not isinstance(node.target, gast.Name) else gast.Name(
                id=node.target.id, ctx=gast.Load(), annotation=None, type_comment=None))
            visit_target(node.target)
            return
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            if node.id not in assigned and node.id not in found:
                found.append(node.id)
            return
        for child in gast.iter_child_nodes(node):
            visit(child)

    def visit_target(target):
        if isinstance(target, gast.Name):
            assigned.add(target.id)
        elif isinstance(target, gast.Tuple):
            for elt in target.elts:
                visit_target(elt)
        else:
            visit(target)

    for stmt in stmts:
        visit(stmt)
    return found
