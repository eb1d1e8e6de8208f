"""Pass 1, parse: a Python function object -> its gast `FunctionDef`.

Guarantees to the next pass: `Parsed.tree` is a single `gast.FunctionDef`
without decorators whose node line numbers are relative to `Parsed.text`;
`Parsed.loc(node)` turns any node into the user's absolute file:line:col.
A lambda becomes a `def` whose body is `return <lambda body>`.

NOTE [inlined lines]: statements inlined from another function (calls.py)
keep their own source's line numbers shifted by `k * LINE_BLOCK`, where
`others[k]` is that function's `Parsed`; `loc` maps them back, so every pass
locates inlined code with the caller's `Parsed`.

NOTE [generated lines]: srcgrad transforms its own generated code again (second
order: reverse mode over a forward-mode module). The pipeline registers each
generated module's line map (`generated_lines`), and `loc` of a line in such a
module is the user's line it came from, so errors, warnings and the comments of
code generated from generated code name the user's file:line, never the cache's.
"""
from __future__ import annotations

import functools
import inspect
import linecache
import os
import textwrap
from dataclasses import dataclass, field
from typing import Callable

import gast

from ..errors import Location, SourceUnavailableError, SrcgradSyntaxError
from ..syntax import walk


LINE_BLOCK = 1_000_000
_GENERATED: dict[str, dict] = {}  # NOTE [generated lines]: file -> {line: "user file:line"}


def generated_lines(path, line_map: dict) -> None:
    """Register a generated module's lines: `loc` of its code names the user's lines."""
    _GENERATED[os.path.realpath(str(path))] = line_map


def user_location(where: str) -> Location:
    """The Location a generated line's `file:line` (its `line_map` entry) names."""
    filename, _, number = where.rpartition(":")
    text = linecache.getline(filename, int(number)).rstrip("\n")
    return Location(filename, int(number), len(text) - len(text.lstrip()), text)


@dataclass(frozen=True)
class _Shifted:
    node: object
    lineno: int

    @property
    def col_offset(self):
        return getattr(self.node, "col_offset", 0)


@dataclass(frozen=True)
class Parsed:
    func: Callable
    tree: gast.FunctionDef
    filename: str
    first_line: int  # absolute line number of the first line of `text`
    indent: int  # columns removed by dedenting
    text: str
    others: dict = field(default_factory=dict, compare=False)  # NOTE [inlined lines]

    @functools.cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    @functools.cached_property
    def _real_filename(self) -> str:
        return os.path.realpath(self.filename)

    def adopt(self, other: "Parsed") -> int:
        """Register `other` for inlined lines (NOTE [inlined lines]); the block to shift by."""
        for k, known in self.others.items():
            if known is other:
                return k
        k = len(self.others) + 1
        self.others[k] = other
        return k

    def loc(self, node) -> Location:
        """The user's file, absolute line, column and line text (as in the file) of `node`."""
        rel = getattr(node, "lineno", None) or 1
        if rel > LINE_BLOCK and rel // LINE_BLOCK in self.others:
            other = self.others[rel // LINE_BLOCK]
            return other.loc(_Shifted(node, rel % LINE_BLOCK))
        generated = _GENERATED.get(self._real_filename)
        if generated is not None and self.first_line + rel - 1 in generated:
            return user_location(generated[self.first_line + rel - 1])
        lines = self.lines
        text = " " * self.indent + lines[rel - 1] if 0 < rel <= len(lines) else ""
        return Location(self.filename, self.first_line + rel - 1,
                        getattr(node, "col_offset", 0) + self.indent, text)


def numba_function(obj):
    """The Python function a numba dispatcher (`@numba.njit`, `@numba.jit`) compiles, or None.

    srcgrad differentiates that function's source like any other: the transforms
    (api/) take a dispatcher for the function it compiles, and resolve inlines calls
    into one (resolve.user_function).
    """
    py_func = getattr(obj, "py_func", None)
    if inspect.isfunction(py_func) and type(obj).__module__.split(".")[0] == "numba":
        return py_func
    return None


def parse(func: Callable) -> Parsed:
    """Read and parse `func`'s source; raise `SourceUnavailableError` saying why not.

    An object with a `srcgrad_parse()` method (a `GradientTape` block) parses itself.
    """
    if hasattr(func, "srcgrad_parse"):
        return func.srcgrad_parse()
    if not inspect.isfunction(func):
        raise TypeError(f"srcgrad differentiates Python functions defined with def or lambda; "
                        f"got {type(func).__name__} {func!r}. Wrap the call in a def.")
    filename = inspect.getsourcefile(func) or func.__code__.co_filename
    try:
        lines, first_line = inspect.getsourcelines(func)
    except (OSError, TypeError) as exc:
        raise SourceUnavailableError(
            f"cannot read the source of {func.__qualname__} (defined in {func.__code__.co_filename!r}): "
            f"{exc}. srcgrad transforms source code, so the function must be defined in a file "
            "(a module, a script, or a notebook cell), not in a plain interactive prompt or via exec/eval."
        ) from None
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    first_line = max(first_line, 1)
    if func.__name__ == "<lambda>":
        return _parse_lambda(func, text, filename, first_line, indent)
    module = gast.parse(text)
    tree = module.body[0]
    if isinstance(tree, gast.AsyncFunctionDef):
        loc = Location(filename, first_line + tree.lineno - 1, tree.col_offset + indent,
                       lines[tree.lineno - 1].rstrip("\n") if tree.lineno <= len(lines) else "")
        raise SrcgradSyntaxError(f"srcgrad cannot differentiate {func.__qualname__}: an async "
                                 "function definition is not supported", loc)
    if not isinstance(tree, gast.FunctionDef):
        raise SourceUnavailableError(f"the source found for {func.__qualname__} is not a def statement")
    if tree.name != func.__code__.co_name:  # the file changed since the function was made
        raise SourceUnavailableError(
            f"the source of {func.__qualname__} in {filename} (line {first_line}) is now "
            f"`def {tree.name}`: the file was edited after {func.__qualname__} was defined; "
            "reload the module (importlib.reload) or run the script again")
    tree.decorator_list = []
    return Parsed(func, tree, filename, first_line, indent, text)


def _parse_lambda(func, text, filename, first_line, indent) -> Parsed:
    """Find the one lambda in `text` whose parameters match `func`'s."""
    try:
        module = gast.parse(text)
    except SyntaxError:
        module = gast.parse("(" + text.strip().rstrip(",") + ")")
    code = func.__code__
    want = list(code.co_varnames[:code.co_argcount])
    found = [n for n in walk(module) if isinstance(n, gast.Lambda)
             and [a.id for a in n.args.args] == want]
    loc = Location(filename, first_line, indent, text.splitlines()[0] if text else "")
    if len(found) != 1:
        raise SourceUnavailableError(
            f"found {len(found)} lambdas with parameters ({', '.join(want)}) on this line; "
            "srcgrad cannot tell which one to differentiate. Give the function a name with def.", loc)
    lam = found[0]
    ret = gast.Return(value=lam.body)
    gast.copy_location(ret, lam.body)
    tree = gast.FunctionDef(name=f"lambda_{first_line}", args=lam.args, body=[ret],
                            decorator_list=[], returns=None, type_comment=None, type_params=[])
    gast.copy_location(tree, lam)
    return Parsed(func, tree, filename, first_line, indent, text)
