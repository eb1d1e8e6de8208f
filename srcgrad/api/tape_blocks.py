"""The source side of `GradientTape`: find a `with` block, and make it a function.

`source_tree` and `with_at` locate the `with` statement a tape was entered at
(in a file, or an IPython cell through `linecache`; tape_facts.with_site keeps
what they find per code location); `Block` holds one such statement per code
location, with the compiled gradients made from it and the facts about its
source (tape_facts.py). `Block.function` turns
the block's body into a stand-in function the pipeline transforms like any
other (its `srcgrad_parse` gives the tree): the names the block reads become
parameters, tape calls (`watch`, ...) are dropped, `with tape.stop_recording():`
bodies have their values' gradients stopped, inner tapes' blocks are inlined
and their `gradient` calls become calls srcgrad differentiates (nested tapes).
"""
from __future__ import annotations

import copy
import inspect
import linecache
import types
from dataclasses import dataclass, field

import gast
import numpy as np

from ..errors import SourceUnavailableError
from ..frontend.parse import Parsed
from .programs import gradient_by_forward_mode
from .variables import Variable
from ..syntax import walk

_TAPE_METHODS = ("watch", "gradient", "jacobian", "batch_jacobian", "reset",
                 "watched_variables")


def is_data(value) -> bool:
    """Numbers, arrays, Variables and lists of them: what a block's function takes as input."""
    if isinstance(value, (Variable, np.ndarray, float, int, np.number)) and not isinstance(
            value, (bool, np.bool_)):
        return True
    return isinstance(value, (list, tuple)) and all(is_data(v) for v in value)


_TREES: dict = {}


def source_tree(filename: str, module_globals):
    lines = linecache.getlines(filename, module_globals)
    if not lines:
        raise SourceUnavailableError(
            f"srcgrad.GradientTape cannot read the source of the code using it ({filename!r}): "
            "the tape compiles the `with` block's source, so it must be in a file, a module "
            "or a notebook cell (not `python -c` or exec). Use srcgrad.grad on a function "
            "instead.")
    text = "".join(lines)
    key = (filename, hash(text))
    if key not in _TREES:
        _TREES[key] = (text, gast.parse(text))
    return _TREES[key]


def with_at(tree, line: int):
    for node in walk(tree):
        if isinstance(node, gast.With) and node.lineno <= line <= max(
                getattr(item.context_expr, "end_lineno", node.lineno) for item in node.items):
            return node
    return None


def names(node, ctx) -> list[str]:
    return [n.id for n in walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, ctx)]


def _tape_call(stmt, attrs) -> bool:
    """Whether `stmt` is an expression `<something>.<attr>(...)` for attr in attrs."""
    value = getattr(stmt, "value", None)
    return (isinstance(stmt, gast.Expr) and isinstance(value, gast.Call)
            and isinstance(value.func, gast.Attribute) and value.func.attr in attrs)


def _item_method(with_node, attr: str) -> bool:
    expr = with_node.items[0].context_expr
    return (isinstance(expr, gast.Call) and isinstance(expr.func, gast.Attribute)
            and expr.func.attr == attr)


def _stopped(stmts) -> list:
    """Statements whose assigned values carry no gradient (`with tape.stop_recording():`)."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, (gast.Assign, gast.AugAssign, gast.AnnAssign)) and stmt.value:
            value = stmt.value
            if isinstance(stmt, gast.AugAssign):  # y += v: y = y + stop(v) keeps y's own path
                value = gast.BinOp(left=copy.deepcopy(stmt.target), op=stmt.op, right=value)
                stmt = gast.Assign(targets=[stmt.target], value=value, type_comment=None)
                value = stmt.value.right
                stmt.value.right = _stop(value)
            else:
                stmt.value = _stop(value)
        out.append(stmt)
    return out


def _stop(value):
    stop = gast.Attribute(value=gast.Name(id="srcgrad", ctx=gast.Load(), annotation=None,
                                          type_comment=None), attr="stop_gradient",
                          ctx=gast.Load())
    return gast.copy_location(gast.Call(func=stop, args=[value], keywords=[]), value)


def _prepared(stmts, start: int, stop: int) -> list:
    """The block's statements from line `start` to before line `stop`, without tape calls;
    nested `with` blocks inlined (`stop_recording` ones with their gradients stopped)."""
    out = []
    for stmt in stmts:
        if stmt.lineno >= stop:
            break
        if getattr(stmt, "end_lineno", stmt.lineno) < start or _tape_call(stmt, _TAPE_METHODS):
            continue
        if isinstance(stmt, gast.With):
            body = _prepared(stmt.body, start, stop)
            out += _stopped(body) if _item_method(stmt, "stop_recording") else body
        else:
            out.append(stmt)
    return out


# ---- the block as a function -----------------------------------------------------------

@dataclass
class Block:
    """One `with tape:` statement's body, from `start` to before `stop`, as a function."""

    filename: str
    text: str
    node: gast.With
    start: int
    stop: int
    namespace: dict  # the caller's globals, plus functions and modules its locals hold
    programs: dict = field(default_factory=dict)  # compiled gradients of this block
    resolved: dict = field(default_factory=dict)  # inputs -> the block resolved (its globals)
    facts: dict = field(default_factory=dict)  # (start, stop) -> tape_facts.Facts
    straight: bool | None = None  # tape_facts.straight: every line runs, once known

    @property
    def statements(self) -> list:
        return _prepared(copy.deepcopy(self.node.body), self.start, self.stop)

    def function(self, inputs, cut, objective, name, inner=None):
        """A stand-in function: `name(inputs..., cut...)` running the body with the names in
        `cut` taken as parameters (their assignment removed), returning `objective`.
        `inner(call)` rewrites an inner tape's `t.gradient(y, x)` call (nested tapes)."""
        statements = self.statements
        literals = _ArrayLiterals(statements)
        body = [literals.visit(s) for s in statements
                if not (isinstance(s, gast.Assign) and len(s.targets) == 1
                        and isinstance(s.targets[0], gast.Name) and s.targets[0].id in cut)]
        if inner is not None:
            body = [_InnerGradients(inner).visit(s) for s in body]
        ret = gast.parse(f"return {objective}").body[0]
        for node in walk(ret):
            gast.copy_location(node, self.node)
        params = [gast.Name(id=p, ctx=gast.Param(), annotation=None, type_comment=None)
                  for p in list(inputs) + list(cut)]
        tree = gast.FunctionDef(
            name=name, body=body + [ret], decorator_list=[], returns=None,
            type_comment=None, type_params=[],
            args=gast.arguments(args=params, posonlyargs=[], vararg=None, kwonlyargs=[],
                                kw_defaults=[], kwarg=None, defaults=[]))
        func = _BlockFunction(tree, self)
        func.__signature__ = inspect.Signature(
            [inspect.Parameter(p.id, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params])
        return func


def grown_by(node):
    """The list `node` grows in place (`xs.append(v)`, `extend`, `insert`), or None."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
            and node.func.attr in ("append", "extend", "insert") \
            and isinstance(node.func.value, gast.Name):
        return node.func.value.id
    return None


class _ArrayLiterals(gast.NodeTransformer):
    """`[3., 4.]` in a tape block is an array, as TensorFlow makes it a tensor; not `[]`,
    nor a list the block appends to (`losses = [...]; losses.append(...)`)."""

    def __init__(self, statements):
        self.grown = {grown_by(n) for s in statements for n in walk(s)} - {None}

    def visit_Assign(self, node):
        if isinstance(node.value, gast.List) and any(
                isinstance(t, gast.Name) and t.id in self.grown for t in node.targets):
            node.value.elts = [self.visit(e) for e in node.value.elts]
            return node
        return self.generic_visit(node)

    def visit_List(self, node):
        if node.elts and all(isinstance(e, (gast.Constant, gast.List, gast.UnaryOp))
                             for e in node.elts):
            array = gast.Attribute(value=gast.Name(id="np", ctx=gast.Load(), annotation=None,
                                                   type_comment=None), attr="array",
                                   ctx=gast.Load())
            return gast.copy_location(gast.Call(func=array, args=[node], keywords=[]), node)
        return self.generic_visit(node)


class _InnerGradients(gast.NodeTransformer):
    """`t1.gradient(y, x)` of an inner tape -> a call srcgrad differentiates (nested tapes)."""

    def __init__(self, rewrite):
        self.rewrite = rewrite

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, gast.Attribute) and node.func.attr == "gradient":
            return self.rewrite(node) or node
        return node


class BlockGradient:
    """The gradient of an inner tape's block, as `srcgrad.grad` would give it: calls to it
    are inlined by forward mode (programs.gradient_by_forward_mode)."""

    def __init__(self, func, source: str):
        self.__wrapped__, self.wrt = func, [source]
        self._many = self._with_value = False

    def srcgrad_by_forward_mode(self):
        return gradient_by_forward_mode(self)


class _BlockFunction:
    """What the pipeline needs of a Python function, for a tape block (see parse.py)."""

    def __init__(self, tree, block: Block):
        self._tree, self._block = tree, block
        self.__name__ = self.__qualname__ = tree.name
        self.__module__ = block.namespace.get("__name__", "__main__")
        self.__globals__ = block.namespace
        self.__closure__ = None
        self.__code__ = types.SimpleNamespace(co_freevars=(), co_filename=block.filename)

    def __call__(self, *args):
        raise TypeError("a GradientTape block is differentiated, not called")

    def srcgrad_parse(self) -> Parsed:
        return Parsed(self, copy.deepcopy(self._tree), self._block.filename, 1, 0,
                      self._block.text)


def leaves(structure) -> list:
    """The arrays and numbers in a nest of lists, tuples and dicts, in order."""
    if isinstance(structure, dict):
        return [leaf for key in structure for leaf in leaves(structure[key])]
    if isinstance(structure, (list, tuple)):
        out = []
        for item in structure:
            if isinstance(item, (dict, list, tuple)):
                out += leaves(item)
            else:
                out.append(item)
        return out
    return [structure]


def rebuild(structure, results):
    """`structure` with its leaves replaced by the next items of `results`."""
    if isinstance(structure, dict):
        return {key: rebuild(value, results) for key, value in structure.items()}
    if isinstance(structure, (list, tuple)):
        items = [rebuild(item, results) if isinstance(item, (dict, list, tuple))
                 else next(results) for item in structure]
        return items if type(structure) is list else type(structure)(items)
    return next(results)
