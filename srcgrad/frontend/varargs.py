"""Before check: a helper's `*args` and `**kwargs`, specialised to each call.

srcgrad inlines calls into user code, so at every call it knows how many extra
positional arguments and which extra keywords a helper receives. For one such
*shape*, `specialise` turns `def f(x, *args, **kwargs)` into a function with
one keyword-only parameter per extra argument (`args_0`, `args_1`,
`kwargs_scale`, ...), and `Shape.rewrite` makes the call pass them by name, in
the order Python evaluates them. Guarantees to check, for every specialised
helper: no `*args`/`**kwargs` parameter is left, and in its body
- `g(*args)`, `g(**kwargs)` pass the elements on to g;
- `args[k]` and `args[i:j]` with constant indices, `kwargs["k"]`,
  `kwargs.get("k", d)`, `"k" in kwargs`, `len(args)`, `len(kwargs)` are
  replaced by what they evaluate to for this call;
- `a, b = args` unpacks `(args_0, args_1)`; any other read of `args` is the list
  display `[args_0, args_1, ...]` (srcgrad differentiates through lists);
- an `if` or `a if c else b` whose test is now a constant keeps only the branch
  taken (`if "k" in kwargs: ... kwargs["k"]`);
- any other use of `kwargs`, assigning either name, or reading a key the call
  does not pass raises `SrcgradSyntaxError` naming the user's line.

A function at the top of a body (`def g(*args)`) gets one copy per call shape
(`g`, `g_2`, ...), with its calls renamed: `specialise_locals`. The function
being differentiated itself keeps its `*args` (check refuses them).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import gast

from .check import refuse
from ..syntax import const, name as _name, walk


@dataclass(frozen=True)
class Shape:
    """How one call binds a helper's `*args`/`**kwargs`: the parameter names it gets."""
    positional: int | None  # the helper's named positional parameters, if it has *args
    extra: tuple[str, ...]  # a parameter per extra positional argument
    keywords: tuple[tuple[str, str], ...]  # (keyword, parameter) per extra keyword

    def rewrite(self, call) -> None:
        """Pass the extra arguments of `call` by their parameters' names (extras first:
        Python evaluates positional arguments before keywords). Without *args, too many
        positional arguments stay, for the inliner to refuse."""
        extras = []
        if self.positional is not None:
            extras, call.args = call.args[self.positional:], call.args[:self.positional]
        renamed = dict(self.keywords)
        call.keywords = [gast.keyword(arg=p, value=v) for p, v in zip(self.extra, extras)] + [
            gast.keyword(arg=renamed.get(k.arg, k.arg), value=k.value) for k in call.keywords]


def _names(args) -> tuple[list[str], list[str]]:
    """(positional parameters, all named parameters)."""
    positional = [a.id for a in args.posonlyargs + args.args]
    return positional, positional + [a.id for a in args.kwonlyargs]


def shape_of(fdef, call, taken: set[str]) -> Shape | None:
    """The shape of `call` into `fdef`, or None if `fdef` has no *args/**kwargs."""
    args = fdef.args
    if args.vararg is None and args.kwarg is None:
        return None
    positional, named = _names(args)
    keywords = [a.id for a in args.args + args.kwonlyargs]  # posonly ones are not keywords
    taken = taken | set(named)
    extra = []
    if args.vararg is not None:
        for k in range(max(len(call.args) - len(positional), 0)):
            extra.append(_fresh(f"{args.vararg.id}_{k}", taken))
    pairs = []
    if args.kwarg is not None:
        for k in call.keywords:
            if k.arg is not None and k.arg not in keywords:
                pairs.append((k.arg, _fresh(f"{args.kwarg.id}_{k.arg}", taken)))
    star = len(positional) if args.vararg is not None else None
    return Shape(star, tuple(extra), tuple(pairs))


def _fresh(stem: str, taken: set[str]) -> str:
    while stem in taken:
        stem += "_"
    taken.add(stem)
    return stem


def specialise(fdef, shape: Shape, parsed):
    """`fdef` rewritten in place for calls of `shape` (see the module docstring)."""
    args = fdef.args
    star = args.vararg.id if args.vararg is not None else None
    stars = args.kwarg.id if args.kwarg is not None else None
    new = list(shape.extra) + [p for _, p in shape.keywords]
    args.kwonlyargs = args.kwonlyargs + [gast.Name(id=p, ctx=gast.Param(), annotation=None,
                                                   type_comment=None) for p in new]
    args.kw_defaults = args.kw_defaults + [None] * len(new)
    args.vararg = args.kwarg = None
    expand = _Expand(star, list(shape.extra), stars, dict(shape.keywords), parsed)
    fdef.body = expand.block(fdef.body)
    return fdef


def _is(node, id_) -> bool:
    return id_ is not None and isinstance(node, gast.Name) and node.id == id_


class _Expand(gast.NodeTransformer):
    """Replaces the uses of `*args` (`star`) and `**kwargs` (`stars`) in a helper's body."""

    def __init__(self, star, extra, stars, keywords: dict, parsed):
        self.star, self.extra, self.stars, self.keywords = star, extra, stars, keywords
        self.parsed = parsed

    def fail(self, node, what: str, hint: str):
        refuse(self.parsed, node, what, hint)

    def block(self, stmts) -> list:
        out = []
        for stmt in stmts:
            new = self.visit(stmt)
            out += new if isinstance(new, list) else [new]
        return out

    def tuple_of(self, names):
        return gast.Tuple(elts=[_name(n) for n in names], ctx=gast.Load())

    def visit_Name(self, node):
        if not (_is(node, self.star) or _is(node, self.stars)):
            return node
        if not isinstance(node.ctx, gast.Load):
            self.fail(node, f"assigning to {node.id}", "give the value a name of its own")
        if _is(node, self.stars):
            self.fail(node, f"using **{node.id} as a dict",
                      f"read {node.id}['key'], {node.id}.get('key', default) or 'key' in "
                      f"{node.id}, or pass it on as **{node.id}")
        listed = gast.List(elts=[_name(n) for n in self.extra], ctx=gast.Load())
        return gast.copy_location(listed, node)  # srcgrad differentiates lists, not tuples

    def visit_Assign(self, node):
        if _is(node.value, self.star) and all(isinstance(t, gast.Tuple) for t in node.targets):
            node.value = gast.copy_location(self.tuple_of(self.extra), node.value)  # a, b = args
        return self.generic_visit(node)

    def visit_Call(self, node):
        func, args = node.func, node.args
        if _is(func, "len") and len(args) == 1 and (_is(args[0], self.star)
                                                    or _is(args[0], self.stars)):
            count = len(self.extra) if _is(args[0], self.star) else len(self.keywords)
            return gast.copy_location(const(count), node)
        if isinstance(func, gast.Attribute) and _is(func.value, self.stars) and func.attr == "get":
            key = self.key(node, args[0] if args else None)
            default = self.visit(args[1]) if len(args) > 1 else const(None)
            return gast.copy_location(
                _name(self.keywords[key]) if key in self.keywords else default, node)
        spliced = []
        for arg in args:
            if isinstance(arg, gast.Starred) and _is(arg.value, self.star):
                spliced += [_name(n) for n in self.extra]
            else:
                spliced.append(self.visit(arg))
        keywords = []
        for k in node.keywords:
            if k.arg is None and _is(k.value, self.stars):
                keywords += [gast.keyword(arg=key, value=_name(p)) for key, p in self.keywords.items()]
            else:
                keywords.append(self.visit(k))
        node.func, node.args, node.keywords = self.visit(func), spliced, keywords
        return node

    def visit_Subscript(self, node):
        if _is(node.value, self.stars):
            key = self.key(node, node.slice)
            if key not in self.keywords:
                self.fail(node, f"{self.stars}[{key!r}] where the call passes no {key}=",
                          f"pass {key}=... or read {self.stars}.get({key!r}, default)")
            return gast.copy_location(_name(self.keywords[key]), node)
        if _is(node.value, self.star):
            picked = self.constant_index(node.slice)
            if picked is not None:
                return gast.copy_location(picked, node)
        return self.generic_visit(node)

    def constant_index(self, index):
        """args[k] or args[i:j:s] with constant parts, as this call binds them (else None)."""
        if isinstance(index, gast.Constant) and isinstance(index.value, int):
            k = index.value
            if not -len(self.extra) <= k < len(self.extra):
                self.fail(index, f"{self.star}[{k}] where the call passes {len(self.extra)} "
                          "extra arguments", "pass as many as the function reads")
            return _name(self.extra[k])
        if isinstance(index, gast.Slice):
            parts = [index.lower, index.upper, index.step]
            if all(p is None or (isinstance(p, gast.Constant) and isinstance(p.value, int))
                   for p in parts):
                chosen = slice(*(None if p is None else p.value for p in parts))
                return self.tuple_of(self.extra[chosen])
        return None

    def visit_If(self, node):
        """`if "k" in kwargs:` is decided for this call: only the branch taken stays (so a
        read of kwargs["k"] under it is checked only where the call passes k)."""
        node.test = self.visit(node.test)
        if not isinstance(node.test, gast.Constant):
            node.body, node.orelse = self.block(node.body), self.block(node.orelse)
            return node
        kept = self.block(node.body if node.test.value else node.orelse)
        return kept or [gast.copy_location(gast.Pass(), node)]

    def visit_IfExp(self, node):
        node.test = self.visit(node.test)
        if isinstance(node.test, gast.Constant):
            return self.visit(node.body if node.test.value else node.orelse)
        node.body, node.orelse = self.visit(node.body), self.visit(node.orelse)
        return node

    def visit_Compare(self, node):
        if (len(node.ops) == 1 and isinstance(node.ops[0], (gast.In, gast.NotIn))
                and _is(node.comparators[0], self.stars)):
            found = self.key(node, node.left) in self.keywords
            return gast.copy_location(const(found == isinstance(node.ops[0], gast.In)), node)
        return self.generic_visit(node)

    def key(self, node, key) -> str:
        if not (isinstance(key, gast.Constant) and isinstance(key.value, str)):
            self.fail(node, f"reading **{self.stars} with a key that is not a string constant",
                      f"write the key out: {self.stars}['name']")
        return key.value


def specialise_locals(parsed):
    """Give each `def` with *args/**kwargs at the top of `parsed.tree`'s body one copy per
    call shape, its calls renamed and rewritten; return `parsed`."""
    tree = parsed.tree
    local = {stmt.name: stmt for stmt in tree.body if isinstance(stmt, gast.FunctionDef)
             and (stmt.args.vararg is not None or stmt.args.kwarg is not None)}
    if not local:
        return parsed
    taken = {n.id for n in walk(tree) if isinstance(n, gast.Name)} | {
        s.name for s in tree.body if isinstance(s, gast.FunctionDef)}
    copies: dict[tuple, tuple] = {}  # (function, shape) -> (the copy's name, its Shape)
    made: dict[str, list] = {name: [] for name in local}
    todo = [stmt for stmt in tree.body if not (isinstance(stmt, gast.FunctionDef)
                                               and stmt.name in local)]
    while todo:
        for call in [n for n in walk(todo.pop()) if isinstance(n, gast.Call)]:
            fdef = local.get(call.func.id) if isinstance(call.func, gast.Name) else None
            if fdef is None:
                continue
            shape = shape_of(fdef, call, taken)
            key = (fdef.name, len(shape.extra), tuple(k for k, _ in shape.keywords))
            if key not in copies:
                new = _fresh(f"{fdef.name}_{len(copies) + 1}", taken) if made[fdef.name] \
                    else fdef.name
                copies[key] = new, shape
                made[fdef.name].append(specialise(copy.deepcopy(fdef), shape, parsed))
                made[fdef.name][-1].name = new
                todo.append(made[fdef.name][-1])  # its own calls, with *args spliced
            call.func.id, shape = copies[key]
            shape.rewrite(call)
    body = []
    for stmt in tree.body:
        is_local = isinstance(stmt, gast.FunctionDef) and stmt.name in local
        body += (made[stmt.name] or [stmt]) if is_local else [stmt]
    tree.body = body
    return parsed
