"""Derivative objects that travel: pickling for another process (issue 19).

`pickle.dumps(srcgrad.grad(f))` works, and the unpickled gradient computes the same
numbers in a process that has srcgrad but not f's file (a cluster's worker, a
`python -c`). What made the object travels, and the object is made again there:

- Each derivative object's `__reduce__` is `reduce_call(maker, args, kwargs)`: the
  call that made it (`GradFunction(f, wrt, jit=...)`, `Jacobian(...)`); a derivative
  that is a closure is wrapped in `Remade`, which pickles as its call.
- The user's functions among the arguments and every function they reach by name
  (callees, custom rules' vjps: `index.reach`) travel by value with cloudpickle,
  their modules registered for it while pickling, with their globals and closure
  values as cloudpickle carries them (data globals at their values when pickled).
  Their source text travels too and is put in `linecache` on arrival, so srcgrad
  reads the source as it would from the file, and messages still name the user's
  file and line.
- Custom rules those functions use are registered on arrival where the receiving
  process has none for the primal.
- Each program the object uses travels as its generated module and cache index
  entry (`seeds`). On arrival, if the receiving srcgrad computes the same index key
  and has the same rule fingerprint, both are written into its cache, so making the
  object skips srcgrad's passes (numba compiles once per process, or loads its own
  cache); otherwise the functions are transformed from the carried source.
- Unpickling the same bytes again in one process returns the object made the first
  time, so a worker compiles a gradient once, however many tasks carry it.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import linecache
import pickle
import sys
import threading
import types
from collections import OrderedDict

from ..backend import cache, index
from ..config import __version__
from ..errors import SrcgradError
from ..rules import fingerprint
from ..rules.registry import REGISTRY, lookup
from . import programs

_FORMAT = 1
_MADE: OrderedDict = OrderedDict()  # digest of a payload -> the object made from it
_KEEP = 64
_LOCK = threading.RLock()


def reduce_call(maker, args: tuple, kwargs: dict | None = None, seeds=(), pick=None):
    """The `__reduce__` value of the object `maker(*args, **kwargs)` made (item `pick` of
    what it returned, if given); `seeds` are (function, wrt, mode) of programs it uses,
    besides those this process has built for the functions among `args`."""
    roots = _functions(args)
    functions, rules, outside = _reached(roots)
    seeds = list(seeds) + [(f, wrt, mode) for f, wrt, mode, _ in list(programs._PROGRAMS)
                           if any(f is root for root in roots)]
    planted = [s for s in (_seed(*seed) for seed in seeds) if s is not None]
    files = [(f, f.__code__.co_filename) for f in functions]  # cloudpickle drops them
    objects = _by_value((maker, args, kwargs or {}, pick, rules, planted, files, outside),
                        functions)
    payload = {"format": _FORMAT, "srcgrad": __version__, "rules": fingerprint(),
               "sources": _sources(functions), "objects": objects}
    return _arrive, (pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL),)


def reduce_state(obj):
    """The `__reduce__` value of an object made again from its attributes (a Jacobian,
    an HVP, a NestedGrad: functions, names and flags; their programs are built when
    first called)."""
    return reduce_call(restore, (type(obj), dict(vars(obj))))


def restore(cls, state: dict):
    """An object of `cls` with attributes `state` (what `reduce_state` pickles)."""
    obj = cls.__new__(cls)
    obj.__dict__.update(state)
    return obj


def travels(factory):
    """Decorator of a derivative factory (`hessian`, `vjp`): a closure it returns, or that
    the tuple it returns holds, is a `Remade` that pickles as the factory's call."""
    @functools.wraps(factory)
    def making(*args, **kwargs):
        made = factory(*args, **kwargs)
        if inspect.isfunction(made):
            return Remade(made, _Named(factory), args, kwargs)
        if isinstance(made, tuple):
            return tuple(Remade(m, _Named(factory), args, kwargs, pick=k)
                         if inspect.isfunction(m) else m for k, m in enumerate(made))
        return made
    return making


class _Named:
    """A module-level function by its name, called as the module has it when called (with
    the decorators around it, whichever order they are in)."""

    def __init__(self, func):
        self.module, self.qualname = func.__module__, func.__qualname__

    def __call__(self, *args, **kwargs):
        target = importlib.import_module(self.module)
        for part in self.qualname.split("."):
            target = getattr(target, part)
        return target(*args, **kwargs)


class Remade:
    """A derivative that is a closure (`hessian(f)`, `vjp`'s function), callable as it is,
    pickling as `reduce_call(maker, args, kwargs, seeds, pick)`."""

    def __init__(self, function, maker, args, kwargs=None, seeds=(), pick=None):
        self._function = function
        self._recipe = (maker, tuple(args), dict(kwargs or {}), tuple(seeds), pick)
        functools.update_wrapper(self, function)
        self.__wrapped__ = getattr(function, "__wrapped__", function)

    def __call__(self, *args, **kwargs):
        return self._function(*args, **kwargs)

    def __reduce__(self):
        return reduce_call(*self._recipe)

    def __repr__(self):
        return f"<srcgrad {self.__name__} of {self.__wrapped__.__qualname__}>"


# ---- pickling ----------------------------------------------------------------------------

def _reached(roots) -> tuple[list, list, list]:
    """(every function the roots reach by name, the custom rules they use as (primal,
    rule), (function, {name: value}) of globals their sources name outside their code)."""
    functions, rules, heads, outside = [], [], [], []

    def note(parent, chain, found, value, _target):
        rule = lookup(value) if found else None
        if rule is not None and rule.custom and all(value is not p for p, _ in rules):
            rules.append((value, rule))
        if found and len(chain) == 1:
            heads.append((parent, chain[0], value))

    for root in roots:
        try:
            reached, _ = index.reach(root, note)
        except OSError:  # no source: cloudpickle carries it, srcgrad will say why it cannot
            reached = [root]
        functions += [f for f in reached if all(f is not g for g in functions)]
        outside += _outside_code([(reached[k], name, value) for k, name, value in heads])
        heads.clear()
    return functions, rules, outside


def _outside_code(reads) -> list:
    """(function, {name: value}) for the globals a function's source names that its code
    does not (a decorator, a default value): cloudpickle leaves them out, and the cache
    index checks them. Only modules and values plain pickle stores (library functions)
    are kept; the others are missing on arrival (the index then misses)."""
    kept: dict = {}
    for func, name, value in reads:
        if name in _code_names(func.__code__) or func.__globals__.get(name, kept) is not value:
            continue
        if not isinstance(value, types.ModuleType):
            try:
                pickle.dumps(value)
            except Exception:
                continue
        kept.setdefault(id(func), (func, {}))[1][name] = value
    return list(kept.values())


def _code_names(code) -> set:
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _code_names(const)
    return names


def _functions(args) -> list:
    """The Python functions among `args` and the values of dicts among them (a numba
    dispatcher stands for the function it compiles)."""
    found = []
    for arg in args:
        for value in (arg.values() if isinstance(arg, dict) else [arg]):
            value = getattr(value, "py_func", value)
            if inspect.isfunction(value) and all(value is not f for f in found):
                found.append(value)
    return found


def _seed(func, wrt, mode):
    """(func, wrt, mode, index key, entry, module text) of a cached program, or None."""
    try:
        key = index.lookup_key(func, list(wrt), mode)
        hit = index.find(key, func)
    except Exception:  # no entry for this function: the receiver transforms it
        return None
    return None if hit is None else (func, list(wrt), mode, key, hit.record, hit.source)


def _by_value(obj, functions) -> bytes:
    """cloudpickle's bytes of `obj`, with the modules of `functions` pickled by value."""
    import cloudpickle
    modules = {f.__module__ for f in functions} - {"__main__", None}
    with _LOCK:
        added = [sys.modules[m] for m in sorted(modules)
                 if m in sys.modules and m not in cloudpickle.list_registry_pickle_by_value()
                 and not m.startswith("srcgrad")]
        for module in added:
            cloudpickle.register_pickle_by_value(module)
        try:
            return cloudpickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        finally:
            for module in added:
                cloudpickle.unregister_pickle_by_value(module)


def _sources(functions) -> dict:
    """{file name: [[first line, lines], ...]}: each function's source, and the file's next
    line that is not blank (it ends the block for inspect where other lines are missing)."""
    found: dict = {}
    for func in functions:
        try:
            lines, first = inspect.getsourcelines(func)
        except (OSError, TypeError):
            continue
        filename = func.__code__.co_filename
        first = max(first, 1)
        after = linecache.getlines(filename)[first - 1 + len(lines):]
        ending = next((k for k, line in enumerate(after) if line.strip()), len(after) - 1)
        found.setdefault(filename, []).append([first, lines + after[:ending + 1]])
    return found


# ---- arriving -----------------------------------------------------------------------------

def _arrive(payload: bytes):
    """The object a payload of `reduce_call` describes, made in this process (once)."""
    digest = hashlib.sha256(payload).hexdigest()
    with _LOCK:
        if digest in _MADE:
            _MADE.move_to_end(digest)
            return _MADE[digest]
    carried = pickle.loads(payload)
    if carried.get("format") != _FORMAT:
        raise SrcgradError(f"this srcgrad object was pickled by srcgrad {carried.get('srcgrad')} "
                           f"in another format; srcgrad {__version__} cannot read it")
    _add_sources(carried["sources"])
    maker, args, kwargs, pick, rules, planted, files, outside = pickle.loads(
        carried["objects"])
    for func, filename in files:
        func.__code__ = _in_file(func.__code__, filename)
    for func, names in outside:
        for name, value in names.items():
            func.__globals__.setdefault(name, value)
    for primal, rule in rules:
        if lookup(primal) is None:
            REGISTRY[primal] = rule
    if carried["rules"] == fingerprint():
        for seed in planted:
            _plant(*seed)
    made = maker(*args, **kwargs)
    if pick is not None:
        made = made[pick]
    with _LOCK:
        _MADE[digest] = made
        while len(_MADE) > _KEEP:
            _MADE.popitem(last=False)
    return made


def _add_sources(sources: dict) -> None:
    """Make `linecache` (which inspect reads) hold each carried function's lines at their
    place in its file: over the file's own lines where it exists, else over blank lines."""
    for filename, spans in sources.items():
        lines = list(linecache.getlines(filename))
        new = list(lines)
        for first, text in spans:
            end = first - 1 + len(text)
            new += ["\n"] * (end - len(new))
            new[first - 1:end] = text
        if new != lines:
            linecache.cache[filename] = (sum(map(len, new)), None, new, filename)


def _in_file(code, filename: str):
    """`code` and the code objects it holds (lambdas, nested defs) as compiled from `filename`."""
    consts = tuple(_in_file(c, filename) if inspect.iscode(c) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _plant(func, wrt, mode, key, record, source) -> None:
    """Write a carried module and index entry into this process's cache, if they serve it."""
    try:
        if index.lookup_key(func, wrt, mode) != key or index.find(key, func) is not None:
            return  # another srcgrad (transform from source), or cached here already
        cache.store_file(record["module"], source)
        index.save(key, record)
    except (OSError, index.Unindexable):
        pass  # the object is made from the carried source instead
