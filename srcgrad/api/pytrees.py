"""Structured arguments at the API boundary: which arguments are structures, reading a
leaf out of one, and building a derivative in its argument's structure.

- `is_structured(value, differentiated)`: dicts, namedtuples, dataclass
  instances and instances of your own classes always; lists and tuples when they
  are differentiated or hold something other than numbers and arrays (a plain
  tuple of numbers stays one value, as before). Arrays, numbers, strings, None,
  functions, Variables and library objects (a NumPy random Generator) are not.
- `at(value, path)`: the value a node's path reaches (keys, positions,
  attributes).
- `rebuild(value, node, leaf_value)`: `value`'s structure with each float leaf
  replaced by `leaf_value(leaf, original)`: a dict, list, tuple or namedtuple of
  the same keys, with None where a leaf is not a float (an integer, a string);
  a dataclass as a shallow copy with its float fields replaced (other fields kept,
  so its type's checks still hold; `__init__` is not run). This is JAX's
  convention for gradients of pytrees.
"""
from __future__ import annotations

import copy
import dataclasses

from ..frontend.structures import is_data, is_namedtuple, is_static

_LIBRARIES = ("numpy", "scipy", "numba", "srcgrad", "builtins", "jax", "torch", "math")


def is_structured(value, differentiated: bool) -> bool:
    if isinstance(value, dict) or is_namedtuple(value):
        return True
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return True
    if isinstance(value, (list, tuple)):
        return differentiated or any(not is_data(v) for v in value)
    if is_data(value) or is_static(value):
        return False
    module = (type(value).__module__ or "").split(".")[0]
    return module not in _LIBRARIES


def at(value, path):
    for how, key in path:
        value = getattr(value, key) if how == "attr" else value[key]
    return value


def rebuild(value, node, leaf_value):
    """See the module docstring; `leaf_value(leaf_node, value)` gives a float leaf's part."""
    kind = node.kind
    if kind == "leaf":
        return leaf_value(node, value) if node.is_float else None
    if kind == "dict":
        return {k: rebuild(value[k], child, leaf_value) for k, child in node.children.items()}
    if kind in ("list", "tuple", "namedtuple"):
        items = [rebuild(item, child, leaf_value) for item, (_, child) in zip(value,
                                                                              node.entries())]
        if kind == "namedtuple":
            return type(value)(*items)
        return items if kind == "list" else type(value)(items)
    if kind == "dataclass":
        out = copy.copy(value)
        for name, child in node.children.items():
            if isinstance(name, str) and child.kind != "const" and (
                    child.kind != "leaf" or child.is_float):
                object.__setattr__(out, name, rebuild(getattr(value, name), child, leaf_value))
        return out
    return None
