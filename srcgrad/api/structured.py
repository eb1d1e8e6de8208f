"""Derivatives of functions called with structured arguments (pytrees and objects), for
gradient.py and derivatives.py.

A call whose arguments include structures (`pytrees.is_structured`) is served by a
`Layout`: the function specialised to those arguments' structure
(frontend/flatten.py), its program built with respect to the float leaves of the
differentiated ones, where each flat parameter is read from the arguments, and how
derivatives go back into their arguments' structures (`pytrees.rebuild`).
`Calls` keeps the layouts of one function and mode, keyed by `wrt` and the
arguments' signatures; a layout also checks that what the code read from objects
(`structures.reads_of`) still has the same kind, so a new structure (another key,
another length, an attribute now holding a dict) builds a new layout.

A bound method (`grad(model.loss)`) is its function with the instance as the first
argument (`unbind`); a function that reads a parameter as a structure and cannot be
transformed for plain arguments is built at its first structured call (`eager_build`).
"""
from __future__ import annotations

import inspect

import gast

from ..errors import SrcgradError
from ..frontend.flatten import Specialized
from ..frontend.parse import parse
from ..frontend.resolve import free_value, is_user_function
from ..frontend.structures import describe, forget_values, mark_differentiated, reads_of
from ..pipeline import build
from ..rules import DATA_ATTRIBUTES, METHODS
from .arguments import _check_differentiable, _shaped_like, inputs_of
from .pytrees import at, is_structured, rebuild
from ..syntax import walk

_CALLS: dict = {}


def calls_of(func, mode: str, jit: bool) -> "Calls":
    key = (func, mode, jit)
    if key not in _CALLS:
        _CALLS[key] = Calls(func, mode, jit)
    return _CALLS[key]


def unbind(func, wrt):
    """(function, the instance it is bound to or None, wrt as that function's names)."""
    if not inspect.ismethod(func) or not inspect.isfunction(func.__func__):
        return func, None, wrt
    visible = list(inspect.signature(func).parameters)
    many = isinstance(wrt, (tuple, list))
    items = [visible[w] if isinstance(w, int) and not isinstance(w, bool) and 0 <= w < len(
        visible) else w for w in (wrt if many else [wrt])]
    return func.__func__, func.__self__, tuple(items) if many else items[0]


def eager_build(func, wrt, jit, memory_limit=None):
    """The program for plain arguments, or None for a function that reads a parameter as a
    structure (`p["W"]`, `m.W`, `self.forward(x)`) and cannot be built for plain ones."""
    try:
        return build(func, wrt, jit=jit, memory_limit=memory_limit)
    except SrcgradError as exc:
        if not _reads_structures(func):
            raise exc
        return None


_JOINS = ("stack", "concatenate", "hstack", "vstack", "dstack", "column_stack", "array",
          "asarray")


def _reads_structures(func, depth: int = 3) -> bool:
    """Whether `func`, or a function it calls by name, reads a parameter as only a
    structure can be read: `p["W"]`, `m.W`, `d.items()`, or joins it whole
    (`np.stack(ws)`)."""
    try:
        tree = parse(func).tree
    except SrcgradError:
        return False
    params = {a.id for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs}
    plain = set(DATA_ATTRIBUTES) | set(METHODS) | {"T"}
    for node in walk(tree):
        if depth and isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
            found, callee = free_value(func, node.func.id)
            if found and is_user_function(callee) and callee is not func \
                    and _reads_structures(callee, depth - 1):
                return True
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr in _JOINS and any(
                    isinstance(a, gast.Name) and a.id in params for a in node.args[:1]):
            return True
        base = getattr(node, "value", None)
        if not (isinstance(base, gast.Name) and base.id in params):
            continue
        if isinstance(node, gast.Attribute) and node.attr not in plain:
            return True
        if isinstance(node, gast.Subscript) and isinstance(node.slice, gast.Constant) \
                and isinstance(node.slice.value, str):
            return True
    return False


def _check_differentiable_structure(name: str, node):
    if node.kind == "object":
        raise TypeError(
            f"cannot differentiate with respect to {node.spelled() if node.path else name!r}: "
            f"it is a {node.cls.__name__} object; srcgrad differentiates floats, arrays, and "
            "dicts, lists, tuples, namedtuples and dataclasses of them (make the class a "
            "dataclass, or pass its arrays)")
    for child in node.children.values():
        _check_differentiable_structure(name, child)


def applies(arguments: dict, wrt) -> bool:
    """Whether a call with these arguments takes a layout: one of them is a structure."""
    return any(is_structured(v, n in wrt) for n, v in arguments.items())


class Calls:
    """The layouts of one function and mode (see the module docstring)."""

    def __init__(self, func, mode: str, jit: bool):
        self.func, self.mode, self.jit = func, mode, jit
        self._layouts: dict = {}
        self.last = None  # the layout of the last call

    def applies(self, arguments: dict, wrt) -> bool:
        return applies(arguments, wrt)

    def layout(self, arguments: dict, wrt) -> "Layout":
        nodes = {}
        for name, value in arguments.items():
            if is_structured(value, name in wrt):
                node = nodes[name] = describe(value, root=name)
                if name in wrt:
                    _check_differentiable_structure(name, node)
                    mark_differentiated(node)
        key = (tuple(wrt), tuple((n, node.signature()) for n, node in nodes.items()))
        for layout in self._layouts.get(key, ()):
            if layout.matches(arguments):
                self.last = layout
                return layout
        layout = Layout(self.func, nodes, wrt, self.mode, self.jit)
        self._layouts.setdefault(key, []).append(layout)
        self.last = layout
        return layout


class Layout:
    """One specialisation of a function to structured arguments, built (see the module
    docstring): `inputs(arguments)` for its generated code, `derivatives(arguments, flat)`
    back in the arguments' structures."""

    def __init__(self, func, nodes: dict, wrt, mode: str, jit: bool):
        spec = Specialized(func, nodes)
        self.nodes, self.wrt, self.spec = nodes, list(wrt), spec
        self.flat_wrt = []
        for name in wrt:
            if name not in nodes:
                self.flat_wrt.append(name)
                continue
            floats = [leaf for leaf in nodes[name].leaves() if leaf.is_float]
            if not floats:
                raise TypeError(f"cannot differentiate with respect to argument {name!r}: it "
                                "holds no floats or float arrays")
            self.flat_wrt += [spec.name_of(leaf) for leaf in floats]
        self.program = build(spec, self.flat_wrt, jit=jit, mode=mode)
        self.sources, self.labels = [], {}  # per flat parameter: (argument, path)
        for param in inspect.signature(func).parameters:
            if param not in nodes:
                self.sources.append((param, ()))
                continue
            for leaf in spec.groups[param]:
                self.sources.append((param, leaf.path))
                self.labels[spec.name_of(leaf)] = leaf.spelled()
        self.reads = [(n, path, sig) for n, node in nodes.items() for path, sig in reads_of(node)]
        for node in nodes.values():
            forget_values(node)

    def matches(self, arguments: dict) -> bool:
        try:
            return all(describe(at(arguments[n], path)).signature() == sig
                       for n, path, sig in self.reads)
        except (AttributeError, KeyError, IndexError, TypeError):
            return False

    def values(self, arguments: dict) -> dict:
        """flat parameter -> its value in `arguments`."""
        return {flat: at(arguments[param], path)
                for flat, (param, path) in zip(self.spec.params, self.sources)}

    def inputs(self, arguments: dict) -> list:
        return inputs_of(self.program, self.values(arguments), self.flat_wrt, self.labels)

    def flat_like(self, given: dict, arguments: dict, check) -> list:
        """The flat tangents (or directions) in `given`, one per flat wrt parameter, each
        `check(value, primal, what)`-ed against its primal."""
        values = self.values(arguments)
        found = []
        for flat, (param, path) in zip(self.spec.params, self.sources):
            if flat in self.flat_wrt:
                what = f"the tangent of {self.labels.get(flat, param)}"
                try:
                    value = at(given[param], path)
                except (AttributeError, KeyError, IndexError, TypeError):
                    raise ValueError(f"{what} is missing: a tangent has its primal's "
                                     "structure") from None
                found.append((self.flat_wrt.index(flat), check(value, values[flat], what)))
        return [v for _, v in sorted(found, key=lambda kv: kv[0])]

    def derivatives(self, arguments: dict, flat: dict, shape=_shaped_like) -> tuple:
        """One derivative per wrt argument, in its structure; `flat` maps flat wrt names
        to their parts, `shape(part, leaf value)` shapes each one."""
        out = []
        for name in self.wrt:
            value = arguments[name]
            if name not in self.nodes:
                out.append(shape(flat[name], value))
                continue
            names = self.spec.flat
            out.append(rebuild(value, self.nodes[name],
                               lambda leaf, v: shape(flat[names[id(leaf)]], v)))
        return tuple(out)


def differentiated(arguments: dict) -> list:
    """The arguments jvp and vjp differentiate: floats, float arrays, and structures of
    them holding at least one float."""
    found = []
    for name, value in arguments.items():
        if is_structured(value, True):
            node = describe(value, root=name)
            if any(leaf.is_float for leaf in node.leaves()) and not _has_object(node):
                found.append(name)
        else:
            try:
                _check_differentiable(name, value)
            except TypeError:
                continue
            found.append(name)
    return found


def _has_object(node) -> bool:
    return node.kind == "object" or any(_has_object(c) for c in node.children.values())
