"""Pass 1b, flatten: a function specialised to structured arguments, as plain code.

`Specialized(func, structures)` is `func` with parameters bound to the `Node`s
of structured arguments (structures.py): dicts, lists, tuples, namedtuples,
dataclasses, objects. srcgrad parses it (`srcgrad_parse`, so every later pass,
callees included, sees it like any function) as `func`'s source where
- each structured parameter is replaced by one keyword parameter per leaf it
  holds (an object's: per attribute the code reads), named after its path
  (`params_W`, `layers_0_b`; `Specialized.name_of`), and every read reaching
  a leaf reads that parameter (structure_reads.py);
- `W, b = p` and `layer = params["layers"][0]` bind names to entries: a leaf
  is assigned, a container is remembered (a name bound to different
  containers on two paths of a branch or loop may not be read after it);
- a loop over a structure (`for v in s`, `enumerate(s)`, `zip(s, t)`,
  `d.items()`, `d.keys()`, `d.values()`, `range(len(s))`, or `range(k)` whose
  body indexes a structure with the loop variable) is unrolled: one copy of
  its body per entry, the loop variable bound as above (a key or position
  becomes a constant); `break` and `continue` are refused there, and so are
  loops over more than `UNROLLED` entries (pass an array);
- writing into a structure (`p["W"] = ...`, `m.b += 1`) is refused.
Calls passing structures call the callee specialised in turn (flattened at
once, so the caller knows which leaves it reads). The source text keeps its
lines; a comment line appended to it names the structures, so the cache key
of the generated code depends on them.
"""
from __future__ import annotations

import copy
import dataclasses
import inspect

import gast

from ..errors import SrcgradSyntaxError
from .loop_else import lower_loop_else
from .parse import parse
from .structure_reads import AMBIGUOUS, Const, Reads
from .structures import Node, below, flat_name
from ..syntax import assign, const, name, walk

_CONTAINERS = ("dict", "list", "tuple", "namedtuple", "dataclass", "object")
UNROLLED = 256  # the most copies of a loop body over a structure


class Specialized:
    """`func` with parameters bound to structures (see the module docstring)."""

    def __init__(self, func, structures: dict, registry: dict | None = None):
        self.func = func
        self.structures = structures  # parameter -> Node
        self.registry = {} if registry is None else registry  # the specialisations of a build
        for attr in ("__code__", "__globals__", "__closure__", "__name__", "__qualname__",
                     "__module__", "__defaults__", "__kwdefaults__"):
            setattr(self, attr, getattr(func, attr))
        self.flat: dict = {}  # id(leaf) -> flat parameter name
        self.groups: dict = {}  # structured parameter -> its leaves, in parameter order
        self.params: list | None = None  # every parameter, flat, once flattened
        self.expansion = None  # (arguments, body), once flattened
        self.taken = {n.id for n in walk(parse(func).tree) if isinstance(n, gast.Name)}
        if registry is None:  # the root of a build: a recursive call finds it
            self.registry[_key(func, structures)] = self

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.__qualname__} specialised by srcgrad is not called directly")

    @property
    def __signature__(self):
        original = inspect.signature(self.func).parameters
        keyword = inspect.Parameter.KEYWORD_ONLY
        return inspect.Signature([original[p].replace(kind=keyword) if p in original
                                  else inspect.Parameter(p, keyword) for p in self.params or []])

    def name_of(self, leaf: Node) -> str:
        """This function's flat parameter for `leaf` (made on first use)."""
        if id(leaf) not in self.flat:
            param, node = next((p, n) for p, n in self.structures.items() if below(leaf, n))
            self.flat[id(leaf)] = flat_name(leaf, param, node, self.taken)
        return self.flat[id(leaf)]

    def description(self) -> str:
        return "; ".join(f"{p}: {n.signature()!r}" for p, n in self.structures.items())

    def srcgrad_parse(self):
        if self.expansion is None:
            flatten(self)
        parsed = parse(self.func)
        parsed.tree.args, parsed.tree.body = copy.deepcopy(self.expansion)
        text = f"{parsed.text.rstrip()}\n# srcgrad structures: {self.description()}\n"
        return dataclasses.replace(parsed, func=self, text=text)


def flatten(spec: Specialized) -> None:
    """Rewrite `spec`'s function for its structures (the module docstring); sets
    `spec.expansion`, `spec.params` and `spec.groups`."""
    parsed = parse(spec.func)
    tree = parsed.tree
    args = tree.args
    originals = args.posonlyargs + args.args + args.kwonlyargs
    lower_loop_else(tree)  # before loops over structures are unrolled
    for param, node in spec.structures.items():
        for leaf in node.leaves():
            spec.name_of(leaf)
    spec.expansion = "flattening"
    walker = _Flattener(spec, parsed)
    body = walker.block(tree.body)
    params, defaults = [], []
    positional = args.posonlyargs + args.args
    default_of = dict(zip([a.id for a in positional[len(positional) - len(args.defaults):]],
                          args.defaults))
    default_of.update({a.id: d for a, d in zip(args.kwonlyargs, args.kw_defaults)})
    for arg in originals:
        if arg.id in spec.structures:
            spec.groups[arg.id] = spec.structures[arg.id].leaves()
            for leaf in spec.groups[arg.id]:
                params.append(spec.name_of(leaf))
                defaults.append(None)
        else:
            params.append(arg.id)
            defaults.append(default_of.get(arg.id))
    spec.params = params
    spec.expansion = (gast.arguments(
        args=[], posonlyargs=[], vararg=None, kwarg=None, defaults=[], kw_defaults=defaults,
        kwonlyargs=[gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None)
                    for p in params]), body)


def specialize(spec: Specialized, func, structures: dict, where) -> Specialized:
    """`func` specialised to `structures`, once per build, flattened."""
    key = _key(func, structures)
    callee = spec.registry.get(key)
    if callee is None:
        callee = spec.registry[key] = Specialized(func, structures, spec.registry)
    if callee.expansion == "flattening":
        raise _recursion(spec, func, where)
    if callee.expansion is None:
        flatten(callee)
    return callee


def _key(func, structures: dict):
    return func, tuple(sorted((p, id(n)) for p, n in structures.items()))


def _recursion(spec, func, where):
    return SrcgradSyntaxError(
        f"srcgrad cannot differentiate {spec.__qualname__}: {func.__qualname__} calls itself "
        "with a structured argument; pass arrays to recursive functions", parse(spec.func).loc(
            where))


class _Flattener(Reads):
    """The statement half of the pass: bindings, branches, loops (unrolled or kept)."""

    def __init__(self, spec, parsed):
        super().__init__(spec, parsed, lambda f, s, where: specialize(spec, f, s, where))

    def block(self, stmts) -> list:
        out = []
        for stmt in stmts:
            out += self.statement(stmt)
        return out

    def statement(self, stmt) -> list:
        if isinstance(stmt, gast.For):
            return self.loop(stmt)
        if isinstance(stmt, gast.Assign):
            return self.assignment(stmt)
        if isinstance(stmt, (gast.AugAssign, gast.AnnAssign)):
            self.refuse_write(stmt.target, stmt)
            self.forget(stmt.target)
            if stmt.value is not None:
                stmt.value = self.visit(stmt.value)
            return [stmt]
        if isinstance(stmt, gast.If):
            stmt.test = self.visit(stmt.test)
            stmt.body, stmt.orelse = self.branches(stmt.body, stmt.orelse)
            return [stmt]
        if isinstance(stmt, gast.While):
            stmt.test = self.visit(stmt.test)
            stmt.body, _ = self.branches(stmt.body, [])
            return [stmt]
        if isinstance(stmt, gast.Try):
            stmt.body, stmt.orelse = self.branches(stmt.body, stmt.orelse)
            stmt.finalbody = self.block(stmt.finalbody)
            for handler in stmt.handlers:
                handler.body, _ = self.branches(handler.body, [])
            return [stmt]
        if isinstance(stmt, gast.FunctionDef):
            def inner():
                stmt.body = self.block(stmt.body)
                return stmt
            return [self.scoped(stmt, inner)]
        return [self.visit(stmt)]

    def branches(self, first, second):
        """Two blocks that may run instead of each other (or a loop body and nothing): a
        name bound to different structures afterwards is AMBIGUOUS."""
        before = dict(self.env), dict(self.consts)
        one = self.block(first)
        after_one = self.env, self.consts
        self.env, self.consts = dict(before[0]), dict(before[1])
        two = self.block(second)
        for mine, other in ((self.env, after_one[0]), (self.consts, after_one[1])):
            for key in set(mine) | set(other):
                if mine.get(key, AMBIGUOUS) is not other.get(key, AMBIGUOUS):
                    if mine is self.env:
                        mine[key] = AMBIGUOUS
                    else:
                        mine.pop(key, None)
        return one, two

    def assignment(self, stmt) -> list:
        found = self.node_of(stmt.value) if isinstance(
            stmt.value, (gast.Name, gast.Subscript, gast.Attribute)) else None
        if isinstance(found, Node) and found.kind in _CONTAINERS:
            out = []
            for target in stmt.targets:
                self.refuse_write(target, stmt)
                out += self.bind(target, found, stmt)
            return out
        stmt.value = self.visit(stmt.value)
        for target in stmt.targets:
            self.refuse_write(target, stmt)
            self.forget(target)
            if isinstance(target, (gast.Subscript, gast.Attribute)):
                target.value = self.visit(target.value)
                if isinstance(target, gast.Subscript):
                    target.slice = self.visit(target.slice)
        return [stmt]

    def refuse_write(self, target, stmt):
        if isinstance(target, (gast.Tuple, gast.List)):
            for elt in target.elts:
                self.refuse_write(elt, stmt)
        elif isinstance(target, (gast.Subscript, gast.Attribute)):
            load = copy.deepcopy(target.value)
            for node in walk(load):
                if hasattr(node, "ctx"):
                    node.ctx = gast.Load()
            found = self.node_of(load)
            if isinstance(found, Node) and found.kind in _CONTAINERS:
                self.fail(stmt, f"writing into {found.spelled()}; srcgrad reads structures "
                                "but does not write into them (make a new one)")

    def forget(self, target):
        for node in walk(target):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                self.env.pop(node.id, None)
                self.consts.pop(node.id, None)
                self.values.pop(node.id, None)

    def bind(self, target, item, where, inline=False) -> list:
        """Statements binding `target` to `item` (a Node, a Const, an expression, or a tuple
        of those); `inline`: by substitution only (inside an expression)."""
        if isinstance(target, gast.Name):
            self.forget(target)
            if isinstance(item, Node) and item.kind in _CONTAINERS:
                self.env[target.id] = item
                return []
            if isinstance(item, Const) or isinstance(item, Node) and item.kind == "const":
                self.consts[target.id] = item.value
                return []
            value = self.as_value(item, where) if isinstance(item, Node) else item
            if inline:
                self.values[target.id] = value
                return []
            return [gast.copy_location(assign(target.id, value), where)]
        if isinstance(target, (gast.Tuple, gast.List)):
            if isinstance(item, Node) and item.kind in ("list", "tuple", "namedtuple"):
                item = tuple(child for _, child in item.entries())
            if not isinstance(item, tuple) or len(item) != len(target.elts):
                self.fail(where, "unpacking a structure into a different number of names")
            out = []
            for elt, part in zip(target.elts, item):
                out += self.bind(elt, part, where, inline)
            return out
        self.fail(where, "binding an entry of a structure to anything but names")

    # ---- loops ---------------------------------------------------------------------------

    def loop(self, stmt) -> list:
        items = self.elements(stmt.iter, stmt.body, stmt.target)
        if items is None:
            stmt.iter = self.visit(stmt.iter)
            self.forget(stmt.target)
            stmt.body, _ = self.branches(stmt.body, [])
            return [stmt]
        for node in _own_statements(stmt.body):
            if isinstance(node, (gast.Break, gast.Continue)):
                self.fail(node, "break or continue in a loop over a structure (srcgrad unrolls "
                                "it); use a flag")
        if len(items) > UNROLLED:
            self.fail(stmt, f"a loop over {len(items)} entries of a structure (srcgrad unrolls "
                            f"loops over structures, up to {UNROLLED} entries); pass an array")
        out = []
        for item in items:
            out += self.bind(stmt.target, item, stmt)
            out += self.block(copy.deepcopy(stmt.body))
        return out

    def elements(self, expr, body, target=None):
        """What a loop (or comprehension) over `expr` visits, if it must be unrolled: Nodes,
        Consts, or tuples of them; None for a loop that stays a loop."""
        found = self.node_of(expr) if not isinstance(expr, gast.Call) else None
        if isinstance(found, Node) and found.kind in ("dict", "list", "tuple", "namedtuple"):
            return [Const(k) if found.kind == "dict" else child for k, child in found.entries()]
        if isinstance(found, Node) and found.kind in ("dataclass", "object"):
            self.fail(expr, f"a loop over {found.spelled()}, a {found.kind}")
        if not isinstance(expr, gast.Call):
            return None
        if isinstance(expr.func, gast.Attribute):
            owner = self.node_of(expr.func.value)
            if isinstance(owner, Node) and owner.kind == "dict" and not expr.args:
                pairs = list(owner.children.items())
                views = {"items": [(Const(k), v) for k, v in pairs],
                         "keys": [Const(k) for k, _ in pairs], "values": [v for _, v in pairs]}
                if expr.func.attr in views:
                    return views[expr.func.attr]
            return None
        if self.builtin_call(expr, "enumerate") and len(expr.args) in (1, 2):
            inner = self.elements(expr.args[0], body)
            start = self.static(expr.args[1]) if len(expr.args) == 2 else 0
            return None if inner is None else [(Const(k + start), v) for k, v in enumerate(inner)]
        if self.builtin_call(expr, "zip") and expr.args:
            parts = [self.elements(a, body) for a in expr.args]
            if all(p is None for p in parts):
                return None
            if any(p is None for p in parts):
                self.fail(expr, "zip of a structure with something else")
            return list(zip(*parts))
        if self.builtin_call(expr, "range"):
            return self.range_elements(expr, body, target)
        return None

    def range_elements(self, expr, body, target):
        bounds = [self.static(a) for a in expr.args]
        by_len = any(self.builtin_call(a, "len") and self.structured(a.args[0])
                     for a in expr.args if isinstance(a, gast.Call) and a.args)
        indexes = isinstance(target, gast.Name) and any(
            isinstance(n, gast.Subscript) and isinstance(n.slice, gast.Name)
            and n.slice.id == target.id and _root_name(n.value) in self.env
            for stmt in body for n in walk(stmt))
        if not (by_len or indexes):
            return None
        if any(not isinstance(b, int) for b in bounds):
            self.fail(expr, "a loop indexing a structure by a count known only when the code "
                            "runs; loop over range(len(...)) of the structure")
        return [Const(k) for k in range(*bounds)]


def _root_name(expr):
    while isinstance(expr, (gast.Subscript, gast.Attribute)):
        expr = expr.value
    return expr.id if isinstance(expr, gast.Name) else None


def _own_statements(body):
    """The statements of a loop body, not those of loops nested in it."""
    todo = list(body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (gast.For, gast.While, gast.FunctionDef)):
            todo.extend(n for n in gast.iter_child_nodes(node) if isinstance(n, gast.stmt))
