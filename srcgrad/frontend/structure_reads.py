"""Expressions over structured values, for flatten.py: what an expression reaching into a
structure denotes, and what it becomes in flat code.

`Reads` is the expression half of the flatten pass. It guarantees, for the
expressions it visits:
- `s["W"]`, `s.W`, `s[0]`, `s[-1]` and chains of them (constant keys, or names an
  unrolled loop made constant) that reach a leaf become that leaf's flat
  parameter; a string, None or number entry becomes the constant;
- `len(s)` becomes a constant; `d.get("k")` the entry (or the default given);
- a tuple or list reached as a value becomes a display of its entries;
- a property read (`m.area`) becomes a call of its getter, and a method call
  (`self.forward(x)`) or a call of a user function with structured arguments a
  call of that function specialised to them (`call.srcgrad_callee`), passing
  each leaf it reads as a keyword argument;
- a comprehension over a structure becomes a display (`sum(...)` of one a chain
  of `+` starting at 0, as Python's sum adds).
Anything else a structure is used for raises SrcgradSyntaxError at its line.
"""
from __future__ import annotations

import builtins
import copy
import inspect

import gast

from ..errors import SrcgradSyntaxError
from .resolve import free_value, is_user_function
from .structures import Node, is_data
from ..syntax import const, name, walk

AMBIGUOUS = object()  # a name bound to different structures on different paths
_NO = object()  # "not a constant"
_SEQUENCES = ("list", "tuple", "namedtuple")


class Const:
    """A key or position an unrolled loop binds its variable to."""

    def __init__(self, value):
        self.value = value


class Member:
    """A method, static method or property reached through a structure."""

    def __init__(self, kind, func, owner):
        self.kind, self.func, self.owner = kind, func, owner


class Reads(gast.NodeTransformer):

    def __init__(self, spec, parsed, specialize):
        self.spec, self.parsed, self.specialize = spec, parsed, specialize
        self.env = dict(spec.structures)  # name -> Node (or AMBIGUOUS)
        self.consts: dict = {}  # name -> constant, bound by an unrolled loop
        self.values: dict = {}  # name -> expression, bound by an unrolled comprehension
        self.locals = {n.id for n in walk(parsed.tree) if isinstance(n, gast.Name)
                       and isinstance(n.ctx, gast.Store)} | set(spec.structures)

    def fail(self, node, message):
        raise SrcgradSyntaxError(f"srcgrad cannot differentiate {self.spec.__qualname__}: "
                                 f"{message}", self.parsed.loc(node))

    # ---- what an expression denotes ------------------------------------------------------

    def static(self, expr):
        """The constant `expr` is (a key or position), or _NO."""
        if isinstance(expr, gast.Constant):
            return expr.value
        if isinstance(expr, gast.Name) and expr.id in self.consts:
            return self.consts[expr.id]
        if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, gast.USub):
            inner = self.static(expr.operand)
            return -inner if isinstance(inner, int) else _NO
        if isinstance(expr, gast.BinOp) and isinstance(expr.op, (gast.Add, gast.Sub)):
            left, right = self.static(expr.left), self.static(expr.right)
            if isinstance(left, int) and isinstance(right, int):
                return left + right if isinstance(expr.op, gast.Add) else left - right
        if self.builtin_call(expr, "len") and len(expr.args) == 1:
            node = self.node_of(expr.args[0])
            if isinstance(node, Node) and node.kind not in ("leaf", "const", "object"):
                return len(node.children)
        return _NO

    def node_of(self, expr):
        """The Node (or Member) `expr` reaches in a structure, or None."""
        if isinstance(expr, gast.Name) and isinstance(expr.ctx, gast.Load) and expr.id in self.env:
            found = self.env[expr.id]
            if found is AMBIGUOUS:
                self.fail(expr, f"{expr.id!r} is bound to a structure in a branch or loop and "
                                "read after it; bind it before the branch")
            return found
        if isinstance(expr, gast.Subscript):
            base = self.node_of(expr.value)
            if not isinstance(base, Node) or base.kind in ("leaf", "const"):
                return None
            if base.kind not in ("dict",) + _SEQUENCES:
                self.fail(expr, f"{base.spelled()} is a {base.kind}; read its attributes "
                                f"({base.spelled()}.name), not entries")
            key = self.static(expr.slice)
            if key is _NO:
                self.fail(expr, f"indexing {base.spelled()} (a {base.kind}) with a value known "
                                "only when the code runs; use a constant, or loop over it "
                                f"(for v in ..., for i in range(len({base.spelled()})))")
            child = base.item(key)
            if child is None:
                self.fail(expr, f"{base.spelled()} has no entry {key!r}")
            return child
        if isinstance(expr, gast.Attribute):
            base = self.node_of(expr.value)
            if not isinstance(base, Node) or base.kind in ("leaf", "const"):
                return None
            return self.member(base, expr)
        return None

    def member(self, base: Node, expr):
        attr = expr.attr
        if base.kind in ("namedtuple", "dataclass") and attr in base.children:
            return base.children[attr]
        if base.kind in ("dict", "list", "tuple"):
            return Member("builtin", attr, base)
        found = inspect.getattr_static(base.value, attr, _NO)
        if isinstance(found, property) and found.fget is not None:
            return Member("property", found.fget, base)
        if isinstance(found, staticmethod):
            return Member("static", found.__func__, None)
        if inspect.isfunction(found) and attr not in getattr(base.value, "__dict__", {}):
            return Member("method", found, base)
        if isinstance(found, classmethod) or inspect.isfunction(found):
            self.fail(expr, f"calling {base.spelled()}.{attr}: srcgrad calls methods and "
                            "static methods of a structure's class")
        if base.wrt and is_data(getattr(base.value, attr, None)):
            self.fail(expr, f"reading {base.spelled()}.{attr}, which is not a field of "
                            f"{base.cls.__name__}: srcgrad differentiates a dataclass through "
                            "its fields (make it a field, or a property computing it)")
        child = base.attribute(attr)
        if child is None:
            self.fail(expr, f"{base.spelled()} has no attribute {attr!r}")
        return child

    def as_value(self, node, expr):
        """`node` as flat code: its parameter, a constant, or a display of its entries."""
        if isinstance(node, Member):
            if node.kind == "property":
                call = gast.copy_location(gast.Call(func=expr, args=[], keywords=[]), expr)
                return self.call_into(call, node.func, node.owner, [])
            self.fail(expr, f"using the method {node.func!r} as a value; call it")
        if node.kind == "leaf":
            return gast.copy_location(name(self.spec.name_of(node)), expr)
        if node.kind == "const":
            value = node.value
            if value is None or isinstance(value, (str, bytes, int, float)):
                return gast.copy_location(const(value), expr)
            self.fail(expr, f"using {node.spelled()} ({type(value).__name__}) as a value")
        if node.kind in _SEQUENCES:
            elts = [self.as_value(child, expr) for _, child in node.entries()]
            display = gast.List if node.kind == "list" else gast.Tuple
            return gast.copy_location(display(elts=elts, ctx=gast.Load()), expr)
        example = f"{node.spelled()}['key']" if node.kind == "dict" else f"{node.spelled()}.name"
        self.fail(expr, f"{node.spelled()} is a {node.kind} used as a value here; srcgrad reads "
                        f"its entries ({example}), passes it to your functions and loops over "
                        "it")

    # ---- visiting ------------------------------------------------------------------------

    def visit_Name(self, node):
        if not isinstance(node.ctx, gast.Load):
            return node
        if node.id in self.consts:
            return gast.copy_location(const(self.consts[node.id]), node)
        if node.id in self.values:
            return copy.deepcopy(self.values[node.id])
        if node.id in self.env:
            return self.as_value(self.node_of(node), node)
        return node

    def _reach(self, node):
        found = self.node_of(node)
        if found is None:
            return self.generic_visit(node)
        return self.as_value(found, node)

    visit_Subscript = visit_Attribute = _reach

    def visit_Lambda(self, node):
        return self.scoped(node, lambda: self.generic_visit(node))

    def scoped(self, node, work):
        """Run `work` with `node`'s parameters shadowing the structure names bound outside."""
        params = {a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
        saved = self.env, self.consts, self.values
        self.env = {k: v for k, v in self.env.items() if k not in params}
        self.consts = {k: v for k, v in self.consts.items() if k not in params}
        self.values = {k: v for k, v in self.values.items() if k not in params}
        try:
            return work()
        finally:
            self.env, self.consts, self.values = saved

    def builtin_call(self, expr, which: str) -> bool:
        """Whether `expr` is a call of the builtin `which` (not shadowed)."""
        if not (isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name)
                and expr.func.id == which and which not in self.locals):
            return False
        found, value = free_value(self.spec, which)
        return found and value is getattr(builtins, which)

    def visit_Call(self, node):
        if self.builtin_call(node, "len") and len(node.args) == 1:
            count = self.static(node)
            if count is not _NO:
                return gast.copy_location(const(count), node)
        if self.builtin_call(node, "sum") and len(node.args) == 1 and not node.keywords:
            items = self.comprehension(node.args[0])
            if items is not None:
                total = const(0)
                for item in items:
                    total = gast.BinOp(left=total, op=gast.Add(), right=item)
                return gast.copy_location(total, node)
        target = self.node_of(node.func) if isinstance(node.func, gast.Attribute) else None
        if isinstance(target, Member):
            return self.member_call(node, target)
        if isinstance(target, Node):
            self.fail(node, f"calling {target.spelled()}")
        if any(self.structured(a) for a in node.args) or any(
                self.structured(k.value) for k in node.keywords):
            func = self.user_function(node.func)
            if func is not None:
                return self.call_into(node, func, None, node.args)
        return self.generic_visit(node)  # a tuple or list as a display (as_value)

    def member_call(self, node, member: Member):
        if member.kind == "builtin":
            base, attr = member.owner, member.func
            if base.kind == "dict" and attr == "get" and node.args and not node.keywords:
                key = self.static(node.args[0])
                if key is not _NO and key in base.children:
                    return self.as_value(base.children[key], node)
                if key is not _NO and len(node.args) == 2:
                    return self.visit(node.args[1])
            self.fail(node, f"calling {base.spelled()}.{attr}() here")
        if member.kind == "property":
            self.fail(node, "calling the value of a property")
        return self.call_into(node, member.func, member.owner, node.args)

    def structured(self, expr) -> bool:
        found = self.node_of(expr)
        return isinstance(found, Node) and found.kind not in ("leaf", "const")

    def user_function(self, func):
        """The user function a call's `func` names statically, or None."""
        parts = []
        while isinstance(func, gast.Attribute):
            parts.append(func.attr)
            func = func.value
        if not isinstance(func, gast.Name) or func.id in self.locals or func.id in self.env:
            return None
        found, value = free_value(self.spec, func.id)
        for attr in reversed(parts):
            value = getattr(value, attr, None)
        return value if found and is_user_function(value) else None

    def call_into(self, node, func, owner, args):
        """`node` calling `func` specialised to the structures it passes (and `owner` as
        its first parameter, for a method)."""
        if any(isinstance(a, gast.Starred) for a in args) or any(k.arg is None
                                                                 for k in node.keywords):
            self.fail(node, "*args or **kwargs in a call that passes a structure")
        signature = inspect.signature(func).parameters
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in signature.values()):
            self.fail(node, f"passing a structure to {func.__qualname__}, which takes *args or "
                            "**kwargs; list its parameters")
        params = list(signature)
        given = list(zip(params, ([owner] if owner is not None else []) + list(args)))
        if len(given) < len(args) + (owner is not None):
            self.fail(node, f"too many arguments for {func.__qualname__}")
        given += [(k.arg, k.value) for k in node.keywords]
        structures = {}
        for param, arg in given:
            found = arg if isinstance(arg, Node) else self.node_of(arg)
            if isinstance(found, Node) and found.kind not in ("leaf", "const"):
                structures[param] = found
        callee = self.specialize(func, structures, node)
        keywords = []
        for param, arg in given:
            if param in structures:
                keywords += [gast.keyword(arg=callee.name_of(leaf), value=self.as_value(
                    leaf, node)) for leaf in callee.groups[param]]
            else:
                keywords.append(gast.keyword(arg=param, value=self.visit(arg)))
        call = gast.Call(func=name(func.__name__), args=[], keywords=keywords)
        call.srcgrad_callee = callee
        return gast.copy_location(call, node)

    def comprehension(self, expr):
        """The elements of a comprehension over a structure, or None for other expressions."""
        if not isinstance(expr, (gast.ListComp, gast.GeneratorExp)) or len(expr.generators) != 1:
            return None
        gen = expr.generators[0]
        items = self.elements(gen.iter, [])
        if items is None:
            return None
        if gen.ifs:
            self.fail(expr, "an if in a comprehension over a structure")
        out = []
        for item in items:
            saved = dict(self.env), dict(self.consts), dict(self.values)
            self.bind(gen.target, item, expr, inline=True)
            out.append(self.visit(copy.deepcopy(expr.elt)))
            self.env, self.consts, self.values = saved
        return out

    def visit_ListComp(self, node):
        items = self.comprehension(node)
        if items is None:
            return self.generic_visit(node)
        return gast.copy_location(gast.List(elts=items, ctx=gast.Load()), node)

    def visit_GeneratorExp(self, node):
        items = self.comprehension(node)
        if items is None:
            return self.generic_visit(node)
        return gast.copy_location(gast.Tuple(elts=items, ctx=gast.Load()), node)
