"""Structured values (pytrees and objects) as the front end sees them, and the user
functions specialised to them.

A `Node` describes one argument value, built from the value of the first call
(`describe`):
- containers, whose entries are described in turn: a `dict` (its keys, in
  order), a `list` or `tuple` (positions), a namedtuple or a dataclass instance
  (field names);
- `leaf`: data the generated code receives as a parameter of its own (a number,
  an array, a `Variable`); `const`: a string, None, a callable, baked into the
  generated code as what it is (its value is part of the node's `signature`);
- `object`: any other instance. Its attributes are described when the code
  reads them (`Node.attribute`), since an object may hold anything; the reads
  are listed in `Node.read`.

`signature()` is what the generated code depends on, so two calls with equal
signatures (and equal reads of objects, `reads_of`) can share a program.

Functions specialised to nodes are in flatten.py.
"""
from __future__ import annotations

import dataclasses
import keyword
import re
import types

import numpy as np

from .check import MODULE_NAMES, RESERVED
from ..runtime import __all__ as RUNTIME_NAMES

_DATA = (int, float, bool, complex, np.generic, np.ndarray)
CONTAINERS = ("dict", "list", "tuple", "namedtuple", "dataclass")
_LEAVES = frozenset({np.ndarray, float, int, np.float64, np.float32})


def is_namedtuple(value) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def is_data(value) -> bool:
    return isinstance(value, _DATA) or getattr(type(value), "srcgrad_data", False)


def is_float_data(value) -> bool:
    """A value srcgrad differentiates: a real float or an array of real floats."""
    value = getattr(value, "value", value) if getattr(type(value), "srcgrad_data", False) \
        else value
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (float, np.floating)):
        return True
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


def is_static(value) -> bool:
    """A value baked into generated code: text, None, functions, classes, modules."""
    return (value is None or isinstance(value, (str, bytes, type, types.ModuleType))
            or callable(value) and not is_data(value))


class Node:
    """One value of a structured argument (see the module docstring)."""

    __slots__ = ("kind", "cls", "children", "value", "path", "root", "read", "wrt", "is_float")

    def __init__(self, kind, value, path, root, cls=None):
        self.kind, self.value, self.path, self.root, self.cls = kind, value, path, root, cls
        self.wrt = False  # part of an argument being differentiated
        self.is_float = kind == "leaf" and is_float_data(value)  # a leaf srcgrad differentiates
        self.children: dict = {}  # key or field name -> Node
        self.read: list = []  # attribute names read from an object (or beyond a dataclass's fields)

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

    def item(self, key):
        """The entry `key` of a dict, list, tuple or namedtuple (negative positions count
        from the end), or None."""
        if self.kind == "dict":
            return self.children.get(key)
        if self.kind not in ("list", "tuple", "namedtuple") or not isinstance(key, int) \
                or isinstance(key, bool):
            return None
        entries = self.entries()
        return entries[key][1] if -len(entries) <= key < len(entries) else None

    def attribute(self, name: str):
        """The attribute `name` of a namedtuple, dataclass or object, described on first read;
        None if the value has no such attribute."""
        if self.kind in ("namedtuple", "dataclass") and name in self.children:
            return self.children[name]
        if self.kind not in ("namedtuple", "dataclass", "object"):
            return None
        if name in self.read:
            return self.children[("attr", name)]
        try:
            value = getattr(self.value, name)
        except AttributeError:
            return None
        child = describe(value, self.path + (("attr", name),), self.root)
        self.children[("attr", name)] = child
        self.read.append(name)
        return child

    def entries(self) -> list:
        """(key, child) for the entries a loop visits: a dict's keys, a sequence's items."""
        own = [(k, c) for k, c in self.children.items() if not isinstance(k, tuple)]
        if self.kind in ("dict", "namedtuple", "dataclass"):
            return own
        return sorted(own, key=lambda kc: kc[0])

    def leaves(self) -> list:
        """Every leaf below this node, in order (an object's: those read so far)."""
        if self.kind == "leaf":
            return [self]
        found = []
        for child in self.children.values():
            found += child.leaves()
        return found

    def signature(self):
        """What generated code for this value depends on (hashable)."""
        if self.kind == "leaf":
            return ("leaf", self.is_float)
        if self.kind == "const":
            value = self.value
            return ("const", value if value is None or isinstance(value, (str, bytes))
                    else ("id", id(value)))
        if self.kind == "object":
            return ("object", self.cls)
        keys = [k for k in self.children if not isinstance(k, tuple)]
        return (self.kind, self.cls, tuple(keys),
                tuple(self.children[k].signature() for k in keys))

    def spelled(self) -> str:
        """The Python expression reaching this node from its argument: params['W'], m.b."""
        text = self.root
        for how, key in self.path:
            text += f".{key}" if how == "attr" else f"[{key!r}]"
        return text


def describe(value, path=(), root="") -> Node:
    """The `Node` of `value`, reached from argument `root` by `path` (("item", key) and
    ("attr", name) steps)."""
    if type(value) in _LEAVES:  # the common case, first
        return Node("leaf", value, path, root)
    if isinstance(value, dict):
        node = Node("dict", value, path, root, type(value))
        for key, item in value.items():
            node.children[key] = describe(item, path + (("item", key),), root)
        return node
    if is_namedtuple(value) or dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = "namedtuple" if is_namedtuple(value) else "dataclass"
        node = Node(kind, value, path, root, type(value))
        fields = value._fields if kind == "namedtuple" else [f.name for f in
                                                             dataclasses.fields(value)]
        for name in fields:
            node.children[name] = describe(getattr(value, name), path + (("attr", name),), root)
        return node
    if isinstance(value, (list, tuple)):
        node = Node("tuple" if isinstance(value, tuple) else "list", value, path, root,
                    type(value))
        for k, item in enumerate(value):
            node.children[k] = describe(item, path + (("item", k),), root)
        return node
    if is_data(value):
        return Node("leaf", value, path, root)
    if is_static(value):
        return Node("const", value, path, root)
    return Node("object", value, path, root, type(value))


def reads_of(node: Node) -> list:
    """(path, signature) of every attribute read from objects below `node`: what a later
    argument must match, beyond the signature, to share the program."""
    found = []
    for key, child in node.children.items():
        if isinstance(key, tuple) or node.kind == "object":
            found.append((child.path, child.signature()))
        found += reads_of(child)
    return found


def mark_differentiated(node: Node) -> None:
    node.wrt = True
    for child in node.children.values():
        mark_differentiated(child)


def forget_values(node: Node) -> None:
    """Drop the first call's values (the program keeps its nodes, not the user's arrays)."""
    if node.kind != "const":
        node.value = None
    for child in node.children.values():
        forget_values(child)


_IDENTIFIER = re.compile(r"[^0-9A-Za-z_]")


def usable(name: str, taken: set) -> bool:
    return (name.isidentifier() and not keyword.iskeyword(name) and name not in taken
            and not RESERVED.search(name) and name not in MODULE_NAMES
            and name not in RUNTIME_NAMES)


def below(leaf: Node, node: Node) -> bool:
    """Whether `leaf` is `node` or one of its descendants."""
    return leaf.root == node.root and leaf.path[:len(node.path)] == node.path


def flat_name(leaf: Node, param: str, node: Node, taken: set) -> str:
    """A parameter name for `leaf`, below `node` bound to parameter `param`: params_W,
    layer_b (made unique among `taken`, which it joins)."""
    parts = [param] + [_IDENTIFIER.sub("_", str(key)) for _, key in leaf.path[len(node.path):]]
    stem = "_".join(p for p in parts if p) or "leaf"
    name, k = stem, 1
    while not usable(name, taken):
        name, k = f"{stem}_{k}", k + 1
    taken.add(name)
    return name
