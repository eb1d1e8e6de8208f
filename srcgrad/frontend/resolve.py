"""Pass 3, resolve: decide what every free name in the function refers to.

Guarantees to the next pass (`Resolved`):
- Every reference to a module, function or module constant is spelled the way
  generated code imports it: `np.<attr...>` for NumPy under any alias,
  `math.<attr>`, a builtin's own name, or a name listed in `namespace`, which
  the generated module receives as a global.
- Array methods and `.T` on values are rewritten as NumPy calls
  (`x.sum()` -> `np.sum(x)`, `A.T` -> `np.transpose(A)`); `.shape`, `.size`,
  `.ndim` stay attributes.
- Free names holding data (numbers, arrays, tuples, objects whose class sets
  `srcgrad_data`, such as `Variable`) from module globals or closure cells become extra trailing parameters (`data_globals`), read
  afresh at every call, so numba's cache never freezes a stale value.
- `callees` maps each spelled callee to the Python object it denotes.
- A call into user code (a Python function without a derivative rule, a numba
  `@njit` function without one, which stands for the Python function it compiles,
  or a `def`/`name = lambda` at the top of the function body, which are taken out
  of the body into `local_functions`) is marked with `call.callee`: the
  function object or the local `FunctionDef`. calls.py prepares it for
  inlining. A gradient called inside (an object with a `srcgrad_by_forward_mode`
  method, such as `srcgrad.grad(f)`) is replaced by the Python function that
  method returns, which is inlined in turn.
"""
from __future__ import annotations

import builtins
import copy
import inspect
import math
import types
from dataclasses import dataclass, field

import gast
import numpy as np

from .. import runtime
from ..errors import SrcgradError, SrcgradSyntaxError
from . import everyday
from .parse import Parsed, numba_function
from ..syntax import dotted, walk
from ..rules import DATA_ATTRIBUTES, METHODS, lookup, spelling

_ROOTS = {id(np): "np", id(math): "math"}
_DATA = (int, float, complex, bool, np.generic, np.ndarray)
# Array methods that also take their shape or axes as separate arguments.
_SHAPE_AS_ARGS = ("reshape", "transpose")
# Python functions from these packages are library code: they need rules, not inlining.
_LIBRARIES = ("numpy", "scipy", "numba", "srcgrad", "math", "builtins")


@dataclass
class Resolved:
    parsed: Parsed
    tree: gast.FunctionDef
    params: list[str]
    data_globals: list[str]  # names appended to the generated function's parameters
    namespace: dict[str, object] = field(default_factory=dict)
    callees: dict[str, object] = field(default_factory=dict)
    local_functions: dict[str, gast.FunctionDef] = field(default_factory=dict)
    # data global -> (function, name) it is read from, where that is not (parsed.func, itself)
    global_sources: dict[str, tuple] = field(default_factory=dict)
    recursive: list = field(default_factory=list)  # functions called recursively (calls.py)
    sources: list[str] = field(default_factory=list)  # callee sources the result depends on
    outlined: list = field(default_factory=list)  # `f__vjp`, `f__value` trees (calls.py)

    def read_globals(self) -> list:
        """Current values of `data_globals`, as the user's functions would see them now."""
        return current_values(self.parsed.func, self.data_globals, self.global_sources)


def is_user_function(obj) -> bool:
    """A Python function srcgrad differentiates by transforming its source (not a library's)."""
    module = (getattr(obj, "__module__", None) or "").split(".")[0]
    return inspect.isfunction(obj) and lookup(obj) is None and module not in _LIBRARIES


def user_function(obj):
    """The Python function a call of `obj` inlines, or None: `obj` if it is a user function; for
    a numba dispatcher (`@numba.njit`) without a rule of its own, the function it compiles."""
    if is_user_function(obj):
        return obj
    py_func = numba_function(obj)
    if py_func is not None and lookup(obj) is None and is_user_function(py_func):
        return py_func
    return None


def _is_data(value) -> bool:
    if isinstance(value, tuple):
        return all(_is_data(v) for v in value)
    return isinstance(value, _DATA) or getattr(type(value), "srcgrad_data", False)


def current_values(func, data_globals: list, global_sources: dict) -> list:
    """The values `data_globals` have now: each read where `global_sources` says (a callee's
    free name), else as a free name of `func`."""
    return [free_value(*global_sources.get(name, (func, name)))[1] for name in data_globals]


def free_value(func, name):
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
    return _attribute_value(func, name)


def attribute_global(func, parts: list) -> str | None:
    """The data global that stands for the attribute chain `CFG.lam` (`CFG__lam`, which
    `free_value` reads as that chain at each call), or None where that name would be
    ambiguous (a name of its own, a part with a double underscore)."""
    encoded = "__".join(parts)
    if encoded.split("__") != parts or encoded in func.__code__.co_freevars \
            or encoded in func.__globals__ or hasattr(builtins, encoded):
        return None
    return encoded


def _attribute_value(func, name):
    """(found, value) of a data global made by `attribute_global`: the chain read now."""
    root, *attrs = name.split("__")
    if not attrs or not root:
        return False, None
    found, value = free_value(func, root)
    for attr in attrs:
        if not found or not attr:
            return False, None
        try:
            value = getattr(value, attr)
        except AttributeError:
            return False, None
    return found, value


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

    def __init__(self, parsed: Parsed, local_names: set[str], local_functions: dict):
        self.parsed = parsed
        self.locals = local_names
        self.local_functions = local_functions
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
        found, first = free_value(self.parsed.func, root)
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
        if _is_data(obj) and not isinstance(first, types.ModuleType):
            encoded = attribute_global(self.parsed.func, parts)  # CFG.lam: read at each call
            if encoded is not None and encoded not in self.locals:
                if encoded not in self.data_globals:
                    self.data_globals.append(encoded)
                return gast.Name(id=encoded, ctx=gast.Load(), annotation=None,
                                 type_comment=None), obj, encoded
        if isinstance(first, types.ModuleType) and id(first) in _ROOTS:
            spelled = ".".join([_ROOTS[id(first)]] + parts[1:])
        elif spelling(obj) is not None:
            spelled = spelling(obj)  # `from math import exp as mexp` -> math.exp
        else:
            spelled = ".".join(parts)
            if first is not getattr(builtins, root, None):
                self.namespace[root] = first
        return dotted(spelled), obj, spelled

    def visit_Name(self, node):
        if node.id in self.local_functions:
            self.fail(node, f"using the function {node.id!r} as a value", syntax=True)
        if node.id in self.locals or not isinstance(node.ctx, gast.Load):
            return node
        found, value = free_value(self.parsed.func, node.id)
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
        local = isinstance(func, gast.Name) and func.id in self.local_functions
        preset = getattr(node, "srcgrad_callee", None)  # specialised by flatten.py
        if local or preset is not None:
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
            node.callee = preset or self.local_functions[func.id]
            return node
        static = self._static(func)
        if static is None and isinstance(func, gast.Attribute):
            rewritten = everyday.method_call(self, node)  # "{}".format(x), rng.normal(...)
            if rewritten is not None:
                return rewritten
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
        by_forward_mode = getattr(obj, "srcgrad_by_forward_mode", None)
        if by_forward_mode is not None:  # srcgrad.grad(f) called inside: inline its code
            try:
                obj = by_forward_mode()
            except NotImplementedError as exc:
                self.fail(node, str(exc))
        if inspect.ismethod(obj) and user_function(obj.__func__) is not None:
            self.fail(node, f"calling the method {spelled}() of an object srcgrad reads as a "
                            f"global; pass {spelled.split('.')[0]} to the function as an argument "
                            "(srcgrad differentiates methods of arguments)")
        inlined = user_function(obj)  # a numba function (generated code too): its Python source
        if inlined is not None:
            node.callee = inlined  # inlined by normalize (calls.py), not looked up as a rule
            if self.namespace.get(spelled) is obj:
                del self.namespace[spelled]
            return node
        rewritten = self._rewrite(obj, node)
        if rewritten is not None:
            return rewritten
        self.callees[spelled] = obj
        return node

    def _rewrite(self, obj, node):
        """Calls generated code spells another way (forms numba compiles, rules exist for)."""
        args, plain = node.args, not node.keywords
        rewritten = everyday.library_call(self, obj, node)  # scipy.special, eigh, svd, ...
        if rewritten is not None:
            return rewritten
        if obj is np.matmul and len(args) == 2 and plain:  # numba compiles `a @ b` only
            binop = gast.BinOp(left=args[0], op=gast.MatMult(), right=args[1])
            return gast.copy_location(binop, node)
        if obj is np.linalg.slogdet and len(args) == 1 and plain:  # a pair with one gradient
            halves = [self._call(f.__name__, f, [copy.deepcopy(args[0])], [], node)
                      for f in (runtime.slogdet_sign, runtime.slogdet_logabs)]
            return gast.copy_location(gast.Tuple(elts=halves, ctx=gast.Load()), node)
        if obj is np.einsum and len(args) == 2 and plain:  # one operand
            return self._call("einsum_single", runtime.einsum_single, args, [], node)
        if obj is np.linalg.norm:  # 'fro' is the default for matrices; numba rejects the string
            for holder in [k for k in node.keywords if k.arg == "ord"] or [None]:
                value = holder.value if holder else (args[1] if len(args) > 1 else None)
                if isinstance(value, gast.Constant) and value.value == "fro":
                    value.value = None
        return None

    def _call(self, spelled, obj, args, keywords, where):
        self.callees[spelled] = obj
        call = gast.Call(func=dotted(spelled), args=args, keywords=keywords)
        return gast.copy_location(call, where)


def _param_names(args) -> list[str]:
    return [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]


def _local_functions(tree) -> dict[str, gast.FunctionDef]:
    """Take `def g(...)` and `g = lambda ...` statements out of the top of the body."""
    found, body = {}, []
    for stmt in tree.body:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Lambda):
            lam = stmt.value
            ret = gast.copy_location(gast.Return(value=lam.body), stmt)
            stmt = gast.copy_location(gast.FunctionDef(
                name=stmt.targets[0].id, args=lam.args, body=[ret], decorator_list=[],
                returns=None, type_comment=None, type_params=[]), stmt)
        if isinstance(stmt, gast.FunctionDef):
            found[stmt.name] = stmt
        else:
            body.append(stmt)
    tree.body = body
    return found


def resolve(parsed: Parsed) -> Resolved:
    tree = parsed.tree
    params = _param_names(tree.args)
    local_functions = _local_functions(tree)
    local_names = set(params) | {n.id for n in walk(tree)
                                 if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    for fdef in local_functions.values():
        local_names |= set(_param_names(fdef.args)) | {
            n.id for n in walk(fdef) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Store)}
    resolver = _Resolver(parsed, local_names, local_functions)
    for fdef in local_functions.values():
        if fdef.name in local_names:
            resolver.fail(fdef, f"assigning to the name of the local function {fdef.name!r}",
                          syntax=True)
        fdef.args.defaults = [resolver.visit(d) for d in fdef.args.defaults]
        fdef.body = [resolver.visit(stmt) for stmt in fdef.body]
    tree.body = [resolver.visit(stmt) for stmt in tree.body]
    return Resolved(parsed, tree, params, resolver.data_globals, resolver.namespace,
                    resolver.callees, local_functions)
