"""The cache index: a new process finds a function's generated module without running
srcgrad's passes again (issue 14).

After a transformation, `save` writes an index entry under a key computed from the
function alone (`lookup_key`: srcgrad's own sources, the versions of Python, NumPy,
gast and astor, the mode, `wrt` and the function's fingerprint). An entry records what the generated text
depends on beyond that, and what the call path needs from the transformation:

- `functions`: the root and every user function it reaches by name (callees,
  their callees, ...; a superset of what was inlined), each with how it is
  reached (a parent and a dotted name) and its fingerprint (file name, first
  line, source text, qualname, module, parameter names, default values);
- `names`: every dotted name those functions' sources read, with what it denotes
  (`describe`: data, a module, a user function, a rule, another object by type
  and name), looked up as resolve looks free names up (closure cell, globals,
  builtins);
- the generated module (file and hash), its function, helpers and line map, the
  description compiled code warns with, the data globals with where each is read
  from, the namespace the module receives (each as a name read by one of the
  functions), and the inputs the generated code writes into.

`find` accepts an entry only if every function is found again by the same names
with the same fingerprint, every name still denotes the same kind of thing, and
the module file is unchanged: an edited callee, a rebound global or a rule
registered since all fail validation, and the function is transformed as usual.
Functions whose names reach something an entry cannot describe (a gradient
object, compiled generated code) get no entry. A key keeps up to four entries
(variants whose callees differ). Entries are written atomically; unreadable or
stale entries are ignored. Nothing here ever changes what a hit returns compared
with a transformation: it only skips the transformation.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import inspect
import json
import os
import sys
import tempfile
import textwrap
import types
from pathlib import Path

import numpy as np

from ..config import __version__
from ..frontend.resolve import current_values, free_value, is_user_function, user_function
from ..rules import lookup
from .helper_cache import package_fingerprint
from .cache import directory as cache_dir  # checked: owned by the user, not writable by others
from ..rules.forward import forward_rule

_FORMAT = 1  # of an entry
_VARIANTS = 4  # entries kept per key
_DATA = (int, float, complex, bool, np.generic, np.ndarray)


class Unindexable(Exception):
    """The function reaches something an index entry cannot describe."""


@functools.lru_cache(maxsize=1)
def _versions() -> list:
    """Python's and the libraries' versions the generated text may depend on."""
    import astor
    import gast
    return [list(sys.version_info[:2]), np.__version__, getattr(gast, "__version__", "?"),
            getattr(astor, "__version__", "?")]


def fingerprint(func) -> str:
    """What the generated text takes from `func` itself: where it is, its source, its
    parameters (which of two lambdas on one line it is), its defaults (inlined for
    callees). Raises Unindexable without a source."""
    try:
        lines, first = inspect.getsourcelines(func)
    except (OSError, TypeError):
        raise Unindexable(func) from None
    code = func.__code__
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    blob = json.dumps([code.co_filename, first, code.co_firstlineno, "".join(lines),
                       func.__qualname__, func.__module__, params, repr(func.__defaults__),
                       repr(func.__kwdefaults__)])
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def lookup_key(func, wrt, mode: str) -> str:
    blob = json.dumps([_FORMAT, __version__, package_fingerprint(), _versions(), mode,
                       list(wrt), fingerprint(func)])
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


# ---- what a name denotes ---------------------------------------------------------------

def _value(func, chain):
    found, value = free_value(func, chain[0])
    if not found:
        return False, None
    for attr in chain[1:]:
        try:
            value = getattr(value, attr)
        except Exception:
            return False, None
    return True, value


def _is_data(value) -> bool:
    if isinstance(value, tuple):
        return all(_is_data(v) for v in value)
    return isinstance(value, _DATA) or getattr(type(value), "srcgrad_data", False)


def _source_hash(func) -> str:
    try:
        return hashlib.sha256(inspect.getsource(func).encode()).hexdigest()[:16]
    except (OSError, TypeError):
        raise Unindexable(func) from None


def describe(found: bool, value) -> str:
    """What a name denotes, as far as the generated text can depend on it."""
    if not found:
        return "missing"
    if _is_data(value):
        return "data"
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    compiled = getattr(value, "py_func", None)
    if hasattr(value, "srcgrad_by_forward_mode") or (
            inspect.isfunction(compiled)
            and (compiled.__module__ or "").startswith("srcgrad_generated.")):
        raise Unindexable(value)  # a gradient, compiled generated code: differentiated through
    rule = lookup(value)
    if rule is not None and rule.custom:
        vjp = "none" if rule.vjp is None else _source_hash(rule.vjp)
        jvp = forward_rule(rule)  # srcgrad.defjvp's rule, inlined by forward mode
        return f"custom rule {rule.name} {vjp}" + (
            f" {_source_hash(jvp)}" if inspect.isfunction(jvp) else "")
    kind = type(value)
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    where = getattr(value, "__module__", None)
    head = "user" if is_user_function(value) else "object"
    return f"{head} {kind.__module__}.{kind.__qualname__} {where}.{name}"


def _chains(func) -> list[tuple]:
    """Every dotted name (`np.linalg.norm`, `helper`, `x`) the source of `func` reads,
    except its own parameters and local variables."""
    lines, _ = inspect.getsourcelines(func)
    text = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(text)
    except SyntaxError:  # a lambda inside a larger expression
        tree = ast.parse("(" + text.strip().rstrip(",") + ")")
    local = set(func.__code__.co_varnames) | set(func.__code__.co_cellvars)
    found = {}
    for node in ast.walk(tree):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id not in local:
            chain = tuple([node.id] + parts[::-1])
            for k in range(1, len(chain) + 1):
                found[chain[:k]] = True
    return list(found)


# ---- writing an entry ------------------------------------------------------------------

def reach(root, note=None) -> tuple[list, list]:
    """(functions, via): `root` and every function its names bring in (callees, their
    callees, custom rules' vjps), in the order found, and how each was reached
    (`[parent, chain, how]`, None for the root). `note(parent, chain, found, value,
    target)` sees every name read; `target` is the function it brings in, or None."""
    functions, via = [root], [None]
    index = 0
    while index < len(functions):
        func = functions[index]
        for chain in _chains(func):
            found, value = _value(func, chain)
            reached, target = _reached(found, value), None
            if reached is not None:
                known = [k for k, f in enumerate(functions) if f is reached[0]]
                if not known:
                    functions.append(reached[0])
                    via.append([index, list(chain), reached[1]])
                target = known[0] if known else len(functions) - 1
            if note is not None:
                note(index, chain, found, value, target)
        index += 1
    return functions, via


def entry(root, resolved, emitted, path, mutated, describe_text) -> dict:
    """The index entry of a transformation of `root` (see the module docstring)."""
    names = []

    def note(index, chain, found, value, target):
        record = [index, list(chain), describe(found, value)]
        names.append(record if target is None else record + [target])
    functions, via = reach(root, note)
    return {
        "format": _FORMAT,
        "functions": [{"via": v, "fingerprint": fingerprint(f)} for f, v in zip(functions, via)],
        "names": names,
        "module": Path(path).name,
        "module_hash": hashlib.sha256(emitted.source.encode()).hexdigest(),
        "function": emitted.function,
        "helpers": list(emitted.helpers),
        "line_map": {str(k): v for k, v in emitted.line_map.items()},
        "describe": describe_text,
        "data_globals": list(resolved.data_globals),
        "tree_name": resolved.tree.name,
        "global_sources": {n: [_index_of(functions, f), name]
                           for n, (f, name) in resolved.global_sources.items()},
        "namespace": {n: _recipe(functions, n, obj) for n, obj in resolved.namespace.items()},
        "mutated_inputs": list(mutated),
    }


def _reached(found, value):
    """(the function whose source a name brings in, how: "function" or "rule"), or None."""
    if not found:
        return None
    inlined = user_function(value)  # a numba dispatcher brings in the function it compiles
    if inlined is not None:
        return inlined, "function"
    rule = lookup(value)
    if rule is not None and rule.custom and inspect.isfunction(rule.vjp):
        return rule.vjp, "rule"  # its body is inlined: its names count too
    return None


def _index_of(functions, func) -> int:
    for k, known in enumerate(functions):
        if known is func:
            return k
    raise Unindexable(func)


def _recipe(functions, name, obj) -> int:
    """Which function reads `obj` as `name` (the namespace is rebuilt from those reads)."""
    for k, func in enumerate(functions):
        found, value = free_value(func, name)
        if found and value is obj:
            return k
    raise Unindexable(obj)


def save(key: str, record: dict) -> None:
    """Add `record` to the entries of `key`, newest first, atomically."""
    directory = cache_dir() / "index"
    directory.mkdir(exist_ok=True)
    path = directory / f"{key}.json"
    kept = [e for e in _read(path) if e.get("functions") != record["functions"]
            or e.get("names") != record["names"]]
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{key}_", suffix=".tmp")
    with os.fdopen(fd, "w") as handle:
        json.dump([record] + kept[:_VARIANTS - 1], handle)
    os.replace(tmp, path)


def _read(path: Path) -> list:
    try:
        entries = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    return entries if isinstance(entries, list) else []


# ---- finding an entry again ----------------------------------------------------------------

class Hit:
    """A validated entry: the functions it names, found again, and the module's text."""

    def __init__(self, record: dict, functions: list, path: Path, source: str):
        self.record, self.functions, self.path, self.source = record, functions, path, source

    def namespace(self) -> dict:
        return {n: free_value(self.functions[k], n)[1] for n, k in self.record["namespace"].items()}

    def global_sources(self) -> dict:
        return {n: (self.functions[k], name)
                for n, (k, name) in self.record["global_sources"].items()}

    def line_map(self) -> dict:
        return {int(k): v for k, v in self.record["line_map"].items()}


def find(key: str, root) -> Hit | None:
    """The first entry of `key` that is still valid for `root`, or None."""
    directory = cache_dir()
    for record in _read(directory / "index" / f"{key}.json"):
        try:
            hit = _validate(record, root, directory)
        except Exception:  # a malformed entry, a name that no longer evaluates: not a hit
            hit = None
        if hit is not None:
            return hit
    return None


def _validate(record: dict, root, directory: Path) -> Hit | None:
    if record.get("format") != _FORMAT:
        return None
    functions = []
    for item in record["functions"]:
        if item["via"] is None:
            func = root
        else:
            parent, chain, how = item["via"]
            found, func = _value(functions[parent], chain)
            if not found or _reached(found, func) is None:
                return None
            func, kind = _reached(found, func)
            if kind != how:
                return None
        if fingerprint(func) != item["fingerprint"]:
            return None
        functions.append(func)
    for index, chain, denoted, *same in record["names"]:
        found, value = _value(functions[index], chain)
        if describe(found, value) != denoted:
            return None
        if same and _reached(found, value)[0] is not functions[same[0]]:
            return None  # another function object of the same name and source
    path = directory / record["module"]
    try:
        source = path.read_text()
    except OSError:
        return None
    if hashlib.sha256(source.encode()).hexdigest() != record["module_hash"]:
        return None
    return Hit(record, functions, path, source)


class WarmResolved:
    """What the call path reads of a `Resolved` (data globals and where each is read from),
    from an index entry. Anything else (the trees, for an error's location) comes from
    transforming the function after all, once, when first asked for."""

    def __init__(self, root, data_globals: list, global_sources: dict, transform,
                 tree_name: str | None = None):
        self.data_globals = data_globals
        self.global_sources = global_sources
        self._root, self._transform, self._full = root, transform, None
        if tree_name is not None:  # `resolved.tree.name` without transforming
            self.tree = _Tree(tree_name, self)

    def read_globals(self) -> list:
        """Current values of `data_globals`, as the user's functions would see them now."""
        return current_values(self._root, self.data_globals, self.global_sources)

    def full(self):
        """The `Resolved` of transforming the function after all (once)."""
        if self._full is None:
            self._full = self._transform()
        return self._full

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.full(), name)


class _Tree:
    """The generated function's name; any other attribute of the tree by transforming."""

    def __init__(self, name: str, owner: WarmResolved):
        self.name, self._owner = name, owner

    def __getattr__(self, attr):
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self._owner.full().tree, attr)
