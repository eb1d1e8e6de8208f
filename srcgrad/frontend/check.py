"""Pass 2, check: reject what srcgrad cannot differentiate, before any rewriting.

Guarantees to the next pass: the function body uses only the statement and
expression forms listed in `_STATEMENTS` and `_EXPRESSIONS`, and no complex
constant (complex numbers are not supported yet); loops have no
`else`; assignment targets are names, tuples of names, or one subscript of a
name (`y[i] = v`); every `return` has a value and there is at least one; no
parameter is `*args`/`**kwargs` (helpers' were specialised per call before,
varargs.py); a try statement holds those forms and `raise`, no `return`, and
no `break`/`continue` leaving it (it runs as written: trying.py); a nested
function is a `def` or a `name = lambda ...` at the top level of the body,
following the same rules, which may start with `nonlocal` and may have no
`return` (resolve.py takes it out of the body); no user identifier collides with a name
srcgrad generates (`RESERVED`) or with a helper generated code calls.
Everything else raises `SrcgradSyntaxError` naming the construct and the
user's file:line:col.
"""
from __future__ import annotations

import os
import re

import gast
import numpy as np

from ..config import cache_dir
from ..errors import SrcgradSyntaxError
from .parse import Parsed
from ..runtime import __all__ as RUNTIME_NAMES
from ..syntax import walk

# Names srcgrad generates: adjoints `_adj_x`, tangents `_tan_x`/`_tan2_x`, tapes `_tape_x` (and
# their `_made_x` flags), temporaries `_t1`/`_r1`,
# loop indices and counters `_i1`/`_n1`, hoisted sequences `_s1`, control flags
# `_brk1`/`_skip1`/`_ret`/`_retval`, the captured output `_out`, and SSA versions `x__2`.
RESERVED = re.compile(r"^_(adj|tape|made|sg|tan\d*)_|^_[trins]\d+$|^_(brk|skip)\d+$|^_(ret|retval|out)$|__\d+$")
MODULE_NAMES = ("np", "math")

_STATEMENTS = (gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Return, gast.Expr,
               gast.Pass, gast.Assert, gast.For, gast.While, gast.If, gast.Break, gast.Continue,
               gast.Try)  # a try runs as written, not differentiated (frontend/trying.py)
_EXPRESSIONS = (gast.BinOp, gast.UnaryOp, gast.Call, gast.Attribute, gast.Subscript,
                gast.Name, gast.Constant, gast.Tuple, gast.Compare, gast.Slice, gast.keyword,
                gast.IfExp, gast.BoolOp, gast.List,
                # lowered by frontend/comprehensions.py (issue 15)
                gast.ListComp, gast.GeneratorExp, gast.JoinedStr, gast.FormattedValue,
                gast.Load, gast.Store, gast.operator, gast.unaryop, gast.cmpop, gast.boolop)

_NAMES = {
    "For": "for loop", "AsyncFor": "async for loop", "While": "while loop",
    "If": "if statement", "IfExp": "conditional expression (a if c else b)",
    "BoolOp": "'and'/'or' expression", "Try": "try statement", "TryStar": "try/except* statement",
    "With": "with statement", "AsyncWith": "async with statement", "Raise": "raise statement",
    "Global": "global statement", "Nonlocal": "nonlocal statement",
    "ClassDef": "class definition", "FunctionDef": "nested function definition",
    "AsyncFunctionDef": "async function definition", "Lambda": "lambda expression",
    "Delete": "del statement", "Import": "import statement", "ImportFrom": "import statement",
    "Match": "match statement", "Yield": "yield expression", "YieldFrom": "yield from expression",
    "Await": "await expression", "ListComp": "list comprehension",
    "SetComp": "set comprehension", "DictComp": "dict comprehension",
    "GeneratorExp": "generator expression", "List": "list display", "Dict": "dict display",
    "Set": "set display", "JoinedStr": "f-string", "NamedExpr": "assignment expression (:=)",
    "Starred": "starred expression (*x)", "Break": "break statement",
    "Continue": "continue statement",
}


_HINTS = {
    "Nonlocal": "srcgrad differentiates nonlocal at the top of a function defined inside the "
                "one it differentiates",
    "Raise": "srcgrad runs raise inside a try statement only",
}


def refuse(parsed: Parsed, node, what: str, hint: str = "") -> None:
    """Raise the SrcgradSyntaxError for `what` at `node` (the front end's passes share it)."""
    raise SrcgradSyntaxError(
        f"srcgrad cannot differentiate {parsed.func.__qualname__}: {what} is not supported"
        + (f"; {hint}" if hint else ""), parsed.loc(node))


def _construct(node) -> str:
    name = type(node).__name__
    return _NAMES.get(name, f"{name} construct")


def check(parsed: Parsed, callee: bool = False) -> Parsed:
    """`parsed` if srcgrad can differentiate it, else SrcgradSyntaxError at the line. A
    `callee` (a function the differentiated one calls) may end without a return, or return
    bare: it returns None, as in Python (`return None` is written for it)."""
    tree = parsed.tree
    args = tree.args
    if args.vararg is not None or args.kwarg is not None:
        refuse(parsed, tree, "a *args/**kwargs parameter", "list the parameters explicitly")
    params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    for stmt in tree.body:
        if isinstance(stmt, gast.FunctionDef):
            _check_local_function(parsed, stmt)
        elif (isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Lambda)
              and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            _check_local_function(parsed, stmt.value)
        else:
            _check_statement(parsed, stmt)
    _check_return(parsed, tree, callee)
    if not is_generated(parsed.func):  # generated code uses the reserved names on purpose
        _check_names(parsed, tree, params)
    return parsed


def is_generated(func) -> bool:
    """Whether `func` is code srcgrad generated (differentiated again for higher order)."""
    where = os.path.dirname(os.path.abspath(func.__code__.co_filename))
    return where == os.path.abspath(cache_dir())


def _check_local_function(parsed: Parsed, fdef) -> None:
    """A `def` or `lambda` at the top of the body: inlined where it is called."""
    args = fdef.args
    if args.vararg is not None or args.kwarg is not None:
        refuse(parsed, fdef, "a *args/**kwargs parameter", "list the parameters explicitly")
    if getattr(fdef, "decorator_list", None):
        refuse(parsed, fdef, "a decorator on a nested function")
    body = fdef.body if isinstance(fdef, gast.FunctionDef) else [gast.Return(value=fdef.body)]
    declared = 0  # `nonlocal v` at the top: v is the enclosing function's (calls.py)
    while declared < len(body) and isinstance(body[declared], gast.Nonlocal):
        declared += 1
    for stmt in body[declared:]:
        _check_statement(parsed, stmt)
    for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
        if not isinstance(default, gast.Constant):
            refuse(parsed, default, "a default value that is not a constant in a nested function")
    if isinstance(fdef, gast.FunctionDef) and own_returns(fdef):  # none: it returns None
        _check_return(parsed, fdef, False)


def _check_statement(parsed: Parsed, stmt) -> None:
    inside: set[int] = set()
    for node in walk(stmt):  # breadth first: a try before what it holds
        if id(node) in inside:
            continue
        if isinstance(node, gast.Try):
            _check_try(parsed, node)
            inside |= {id(n) for n in walk(node)}
        _check_node(parsed, node)


def _check_try(parsed: Parsed, stmt) -> None:
    """What a try statement holds runs as written: the forms allowed elsewhere and `raise`;
    no `return`, and `break`/`continue` only for a loop inside it."""
    looped = {id(n) for loop in walk(stmt) if isinstance(loop, (gast.For, gast.While))
              for n in walk(loop)}
    for node in walk(stmt):
        if node is stmt or isinstance(node, gast.Raise):
            continue
        if isinstance(node, gast.Return):
            refuse(parsed, node, "return inside a try statement",
                  "assign the value in the try statement and return it after")
        if isinstance(node, (gast.Break, gast.Continue)) and id(node) not in looped:
            refuse(parsed, node, f"a {_construct(node)} leaving a try statement",
                  "set a flag in the try statement and test it after")
        _check_node(parsed, node)


def _check_node(parsed: Parsed, node) -> None:
    if isinstance(node, gast.stmt) and not isinstance(node, _STATEMENTS):
        refuse(parsed, node, _construct(node), _HINTS.get(type(node).__name__, ""))
    if isinstance(node, gast.expr) and not isinstance(node, _EXPRESSIONS):
        refuse(parsed, node, _construct(node))
    if isinstance(node, (gast.Assign, gast.AugAssign, gast.AnnAssign)):
        targets = node.targets if isinstance(node, gast.Assign) else [node.target]
        for target in targets:
            _check_target(parsed, target)
    if isinstance(node, gast.Constant) and isinstance(node.value, complex):
        refuse(parsed, node, f"the complex number {node.value!r}",
              "srcgrad does not support complex numbers yet")
    if isinstance(node, gast.Call) and _makes_complex(parsed, node.func):
        refuse(parsed, node, "making a complex number",
              "srcgrad does not support complex numbers yet")
    if _makes_complex(parsed, node) or _complex_dtype_text(node):
        refuse(parsed, node, "a complex dtype", "srcgrad differentiates real values only")
    if isinstance(node, gast.Call):
        if any(k.arg is None for k in node.keywords):
            refuse(parsed, node, "a **kwargs argument in a call")
    if isinstance(node, gast.For):
        _check_target(parsed, node.target, subscript=False)
    if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Tuple):
        refuse(parsed, node, "augmented assignment to a tuple")


_COMPLEX_TYPES = ("complex64", "complex128", "complex256", "complex_", "csingle", "cdouble",
                  "clongdouble", "complexfloating")


def _makes_complex(parsed: Parsed, func) -> bool:
    """`complex` (the builtin, not shadowed by a global) or `np.complex128`, called or as a
    dtype (`dtype=complex`, `x.astype(np.complex64)`)."""
    if isinstance(func, gast.Name):
        return (func.id == "complex" and isinstance(func.ctx, gast.Load)
                and "complex" not in getattr(parsed.func, "__globals__", {}))
    return isinstance(func, gast.Attribute) and func.attr in _COMPLEX_TYPES


def _complex_dtype_text(node) -> bool:
    """A dtype spelled as text that is complex: `dtype="complex128"`, `.astype("c16")`."""
    if isinstance(node, gast.keyword) and node.arg == "dtype":
        texts = [node.value]
    elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
            and node.func.attr == "astype":
        texts = node.args[:1]
    else:
        return False
    for text in texts:
        if isinstance(text, gast.Constant) and isinstance(text.value, str):
            try:
                return np.dtype(text.value).kind == "c"
            except TypeError:
                return False
    return False


def _check_target(parsed: Parsed, target, subscript=True) -> None:
    if isinstance(target, (gast.Tuple, gast.List)):  # `a[i], a[j] = ...`: element_tuples.py
        for elt in target.elts:
            _check_target(parsed, elt, subscript)
    elif isinstance(target, gast.Subscript) and subscript:
        if not isinstance(target.value, gast.Name):
            refuse(parsed, target, "assignment into a nested subscript (y[i][j] = v)",
                  "index once: y[i, j] = v")
    elif not isinstance(target, gast.Name):
        refuse(parsed, target, f"assignment to {_target_kind(target)} here")


def _target_kind(target) -> str:
    return {"Subscript": "an array element", "Attribute": "an attribute",
            "Starred": "a starred name"}.get(type(target).__name__, type(target).__name__)


def own_returns(tree) -> list:
    """The function's own return statements (not those of nested functions)."""
    found, todo = [], list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Return):
            found.append(node)
        if not isinstance(node, (gast.FunctionDef, gast.Lambda)):
            todo.extend(gast.iter_child_nodes(node))
    return found


def _check_return(parsed: Parsed, tree, callee: bool) -> None:
    returns = own_returns(tree)
    if callee:  # Python's implicit `return None`, written out
        for ret in returns:
            if ret.value is None:
                ret.value = gast.copy_location(gast.Constant(value=None, kind=None), ret)
        if not returns:
            tree.body.append(gast.copy_location(
                gast.Return(value=gast.Constant(value=None, kind=None)), tree.body[-1]))
        return
    if not returns:
        refuse(parsed, tree, "a function without a return statement",
              "return the scalar to differentiate")
    for ret in returns:
        if ret.value is None:
            refuse(parsed, ret, "a bare return (it returns None)")


def _check_names(parsed: Parsed, tree, params) -> None:
    stores = set(params)
    for node in walk(tree):
        if isinstance(node, gast.Name):
            if RESERVED.search(node.id):
                refuse(parsed, node, f"the name {node.id!r}",
                      "names like _adj_x, _t1, _tape_x and x__2 are reserved for srcgrad's "
                      "generated code; rename it")
            if isinstance(node.ctx, gast.Store):
                stores.add(node.id)
    for name in MODULE_NAMES:
        if name in stores:
            refuse(parsed, tree, f"a parameter or local variable named {name!r}",
                  f"generated code uses {name!r} for the module; rename the variable")
    for node in walk(tree):
        if isinstance(node, gast.Name) and node.id in RUNTIME_NAMES:
            refuse(parsed, node, f"the name {node.id!r}",
                  f"generated code calls srcgrad's helper {node.id}(); rename your variable")
