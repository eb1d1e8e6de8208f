"""Pass 3, resolve: decide what every free name in the function refers to.

Guarantees to the next pass (`Resolved`):
- Every reference to a module, function or module constant is spelled the way
  generated code imports it: `np.<attr...>` for NumPy under any alias,
  `math.<attr>`, a builtin's own name, or a name listed in `namespace`, which
  the generated module receives as a global.
- Array methods and `.T` on values are rewritten as NumPy calls
  (`x.sum()` -> `np.sum(x)`, `A.T` -> `np.transpose(A)`); `.shape`, `.size`,
  `.ndim` stay attributes.
- Free names holding data (numbers, arrays, tuples) from module globals or
  closure cells become extra trailing parameters (`data_globals`), read
  afresh at every call, so numba's cache never freezes a stale value.
- `callees` maps each spelled callee to the Python object it denotes.
"""
from __future__ import annotations

import builtins
import math
import types
from dataclasses import dataclass, field

import gast
import numpy as np

from .errors import SrcgradError, SrcgradSyntaxError
from .parse import Parsed
from .rules import DATA_ATTRIBUTES, METHODS, spelling

_ROOTS = {id(np): "np", id(math): "math"}
_DATA = (int, float, complex, bool, np.generic, np.ndarray)
# Array methods that also take their shape or axes as separate arguments.
_SHAPE_AS_ARGS = ("reshape", "transpose")


@dataclass
class Resolved:
    parsed: Parsed
    tree: gast.FunctionDef
    params: list[str]
    data_globals: list[str]  # names appended to the generated function's parameters
    namespace: dict[str, object] = field(default_factory=dict)
    callees: dict[str, object] = field(default_factory=dict)

    def read_globals(self) -> list:
        """Current values of `data_globals`, as the user's function would see them now."""
        return [_lookup(self.parsed.func, name)[1] for name in self.data_globals]


def dotted(spelled: str):
    """A gast expression for a dotted name such as `np.linalg.norm`."""
    parts = spelled.split(".")
    node = gast.Name(id=parts[0], ctx=gast.Load(), annotation=None, type_comment=None)
    for part in parts[1:]:
        node = gast.Attribute(value=node, attr=part, ctx=gast.Load())
    return node


def _is_data(value) -> bool:
    if isinstance(value, tuple):
        return all(_is_data(v) for v in value)
    return isinstance(value, _DATA)


def _lookup(func, name):
    """(found, value) for a free name: closure cell, then globals, then builtins."""
    code = func.__code__
    if name in code.co_freevars and func.__closure__:
        cell = func.__closure__[code.co_freevars.index(name)]
        try:
            return True, cell.cell_contents
        except ValueError:
            return False, None
    if name in func.__globals__:
        return True, func.__globals__[name]
    if hasattr(builtins, name):
        return True, getattr(builtins, name)
    return False, None


def _chain(node):
    """['np', 'linalg', 'norm'] for np.linalg.norm, or None if not a pure dotted name."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, gast.Name):
        return [node.id] + parts[::-1]
    return None


class _Resolver(gast.NodeTransformer):
    def __init__(self, parsed: Parsed, local_names: set[str]):
        self.parsed = parsed
        self.locals = local_names
        self.data_globals: list[str] = []
        self.namespace: dict[str, object] = {}
        self.callees: dict[str, object] = {}

    def fail(self, node, message, syntax=False):
        cls = SrcgradSyntaxError if syntax else SrcgradError
        raise cls(f"srcgrad cannot differentiate {self.parsed.func.__qualname__}: {message}",
                  self.parsed.loc(node))

    # A free dotted name -> (spelled node, object, spelling), or None for locals and data.
    def _static(self, node):
        parts = _chain(node)
        if parts is None or parts[0] in self.locals:
            return None
        root = parts[0]
        found, first = _lookup(self.parsed.func, root)
        if not found:
            self.fail(node, f"name {root!r} is not defined")
        if _is_data(first):
            return None
        obj = first
        for i, attr in enumerate(parts[1:], 1):
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                self.fail(node, f"{'.'.join(parts[:i])} has no attribute {attr!r}")
        if isinstance(first, types.ModuleType) and id(first) in _ROOTS:
            spelled = ".".join([_ROOTS[id(first)]] + parts[1:])
        elif len(parts) == 1 and spelling(obj) is not None:
            spelled = spelling(obj)  # `from math import exp as mexp` -> math.exp
        else:
            spelled = ".".join(parts)
            if first is not getattr(builtins, root, None):
                self.namespace[root] = first
        return dotted(spelled), obj, spelled

    def visit_Name(self, node):
        if node.id in self.locals or not isinstance(node.ctx, gast.Load):
            return node
        found, value = _lookup(self.parsed.func, node.id)
        if not found:
            self.fail(node, f"name {node.id!r} is not defined")
        if _is_data(value):
            if node.id not in self.data_globals:
                self.data_globals.append(node.id)
            return node
        static = self._static(node)
        return gast.copy_location(static[0], node)

    def visit_Attribute(self, node):
        static = self._static(node)
        if static is not None:
            return gast.copy_location(static[0], node)
        node.value = self.visit(node.value)
        if node.attr in DATA_ATTRIBUTES:
            return node
        if node.attr == "T":
            return self._call("np.transpose", np.transpose, [node.value], [], node)
        self.fail(node, f"the attribute .{node.attr} is not supported", syntax=True)

    def visit_Call(self, node):
        func = node.func
        static = self._static(func)
        if static is None and isinstance(func, gast.Attribute):
            if func.attr == "append" and isinstance(func.value, gast.Name):
                node.args = [self.visit(a) for a in node.args]  # list.append, kept as written
                return node
            if func.attr not in METHODS:
                self.fail(node, f"the method call .{func.attr}() is not supported", syntax=True)
            method = METHODS[func.attr]
            rest = [self.visit(a) for a in node.args]
            if func.attr in _SHAPE_AS_ARGS and len(rest) > 1:
                # x.reshape(3, 4) means np.reshape(x, (3, 4)); x.transpose(1, 0) likewise
                rest = [gast.copy_location(gast.Tuple(elts=rest, ctx=gast.Load()), node)]
            args = [self.visit(func.value)] + rest
            return self._call(spelling(method), method, args,
                              [self.visit(k) for k in node.keywords], node)
        if static is None:
            self.fail(node, f"calling the local value {gast.dump(func)[:40]!r} is not supported")
        node.func, obj, spelled = static
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        if obj is np.matmul and len(node.args) == 2 and not node.keywords:
            # numba compiles `a @ b` but not np.matmul(a, b)
            binop = gast.BinOp(left=node.args[0], op=gast.MatMult(), right=node.args[1])
            return gast.copy_location(binop, node)
        self.callees[spelled] = obj
        return node

    def _call(self, spelled, obj, args, keywords, where):
        self.callees[spelled] = obj
        call = gast.Call(func=dotted(spelled), args=args, keywords=keywords)
        return gast.copy_location(call, where)


def resolve(parsed: Parsed) -> Resolved:
    tree = parsed.tree
    params = [a.id for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs]
    local_names = set(params) | {n.id for n in gast.walk(tree)
                                 if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    resolver = _Resolver(parsed, local_names)
    tree.body = [resolver.visit(stmt) for stmt in tree.body]
    return Resolved(parsed, tree, params, resolver.data_globals, resolver.namespace,
                    resolver.callees)
