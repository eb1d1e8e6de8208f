"""Building and editing the gast trees every pass works on.

Shared by all layers: constructors for names, constants, calls and
assignments; `Comment`, the statement emit.py prints as a `# ...` line (each
block of generated code starts with one naming the user's line); and
insertion and removal of a statement wherever it is nested in a body.
Nothing here knows about derivatives.
"""
from __future__ import annotations

import os
from collections import deque

import gast


class Comment(str):
    """Text that emit.py prints as a `# ...` line; `where` is the user's file:line, if any."""

    where: str | None = None


def comment(text: str, where: str | None = None):
    note = Comment(text)
    note.where = where
    return gast.Expr(value=gast.Constant(value=note, kind=None))


def is_comment(stmt) -> bool:
    return (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant)
            and isinstance(stmt.value.value, Comment))


def walk(node):
    """Every node of `node`'s tree, `node` first, in `gast.walk`'s order (breadth first,
    each node's children taken before it is yielded). `gast.walk` goes through two
    generators per node; this one reads the fields directly, about twice as fast, and
    srcgrad's passes walk trees about a million times per gradient."""
    todo = deque((node,))
    take, put = todo.popleft, todo.append
    while todo:
        node = take()
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, gast.AST):
                        put(item)
            elif isinstance(value, gast.AST):
                put(value)
        yield node


def is_name(node, var: str) -> bool:
    """`node` is the name `var` (read or written)."""
    return isinstance(node, gast.Name) and node.id == var


def named(node, var: str) -> list:
    """Every name `var` in `node`, at any depth (read or written)."""
    return [n for n in walk(node) if is_name(n, var)]


def is_call(node, func: str) -> bool:
    """`node` calls the plain name `func` (a runtime helper such as `unbroadcast`)."""
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == func


def name(id_, store=False):
    return gast.Name(id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None,
                     type_comment=None)


def const(value):
    return gast.Constant(value=value, kind=None)


def call(func, *args):
    func = name(func) if isinstance(func, str) else func
    return gast.Call(func=func, args=list(args), keywords=[])


def method(receiver: str, attr: str, *args):
    return call(gast.Attribute(value=name(receiver), attr=attr, ctx=gast.Load()), *args)


def assign(target, value):
    target = name(target, store=True) if isinstance(target, str) else target
    return gast.Assign(targets=[target], value=value, type_comment=None)


def binop(left, op, right):
    """`left op right` for + and -, folding constants (loop bounds read better that way)."""
    if isinstance(right, gast.Constant) and right.value == 0:
        return left
    if isinstance(left, gast.Constant) and isinstance(right, gast.Constant):
        return const(left.value + right.value if isinstance(op, gast.Add)
                     else left.value - right.value)
    return gast.BinOp(left=left, op=op, right=right)


def blocks(body):
    """`body` and every nested statement list of its `if`/`for`/`while`, outermost first."""
    yield body
    for stmt in body:
        for field in ("body", "orelse"):
            if isinstance(stmt, (gast.If, gast.For, gast.While)) and getattr(stmt, field):
                yield from blocks(getattr(stmt, field))


def rewrite_blocks(body: list, rewrite) -> None:
    """Replace, in place, every statement of `body` at any depth (the bodies of compound
    statements, `try` handlers included), inner blocks first, by the list of statements
    `rewrite(stmt)` returns; the statements it returns are not visited again."""
    k = 0
    while k < len(body):
        stmt = body[k]
        for field in ("body", "orelse", "finalbody"):
            if isinstance(getattr(stmt, field, None), list):
                rewrite_blocks(getattr(stmt, field), rewrite)
        for handler in getattr(stmt, "handlers", []):
            rewrite_blocks(handler.body, rewrite)
        new = rewrite(stmt)
        body[k:k + 1] = new
        k += len(new)


def function_def(called: str, params: list[str], body: list) -> gast.FunctionDef:
    """`def called(params...): body`, plain positional parameters, no decorators."""
    args = gast.arguments(args=[gast.Name(id=p, ctx=gast.Param(), annotation=None,
                                          type_comment=None) for p in params],
                          posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                          kwarg=None, defaults=[])
    return gast.FunctionDef(name=called, args=args, body=body, decorator_list=[],
                            returns=None, type_comment=None, type_params=[])


def line_comment(parsed, stmt, prefix: str = ""):
    """`# <prefix><the user's line>   (file.py:12)` for the line `stmt` came from."""
    loc = parsed.loc(stmt)
    text = f"{prefix}{loc.text.strip()}   ({os.path.basename(loc.filename)}:{loc.lineno})"
    return comment(text, f"{loc.filename}:{loc.lineno}")


def with_comments(stmts, parsed, prefix: str) -> list:
    """`stmts` with a comment before each run that came from one user line (recursively)."""
    result, last, said = [], None, None
    for stmt in stmts:
        line = getattr(stmt, "lineno", None)
        if line is not None and line != last:
            last = line
            note = line_comment(parsed, stmt, prefix)
            if note.value.value != said:  # generated code's lines of one user line: one note
                said = note.value.value
                result.append(note)
        for field in ("body", "orelse"):
            if isinstance(stmt, (gast.If, gast.For, gast.While)) and getattr(stmt, field):
                setattr(stmt, field, with_comments(getattr(stmt, field), parsed, prefix))
        result.append(stmt)
    return result


def _search(body, target):
    for k, stmt in enumerate(body):
        if stmt is target:
            return body, k
        for field in ("body", "orelse"):
            found = _search(getattr(stmt, field, []) or [], target)
            if found:
                return found
    return None


def _find(body, target):
    found = _search(body, target)
    if found is None:
        raise AssertionError("statement not found in the generated code")
    return found


def insert_before(body, target, new):
    """Insert `new` just before statement `target`, wherever it is nested in `body`."""
    block, k = _find(body, target)
    block.insert(k, gast.copy_location(new, target))


def insert_after(body, target, new):
    block, k = _find(body, target)
    block.insert(k + 1, gast.copy_location(new, target))


def remove(body, target):
    block, k = _find(body, target)
    del block[k]


def dotted_name(node) -> str:
    """The spelling of a name or attribute chain, such as `np.linalg.norm`."""
    parts = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join(([node.id] if isinstance(node, gast.Name) else []) + parts[::-1])


def dotted(spelled: str):
    """A gast expression for a dotted name such as `np.linalg.norm`."""
    parts = spelled.split(".")
    node = name(parts[0])
    for part in parts[1:]:
        node = gast.Attribute(value=node, attr=part, ctx=gast.Load())
    return node
