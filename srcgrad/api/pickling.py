"""Derivative objects that travel: pickling for another process (issue 19).

`pickle.dumps(srcgrad.grad(f))` works, and the unpickled gradient computes the same
numbers in a process that has srcgrad but not f's file (a cluster's worker, a
`python -c`). What made the object travels, and the object is made again there:

- Each derivative object's `__reduce__` is `reduce_call(maker, args, kwargs)`: the
  call that made it (`GradFunction(f, wrt, jit=...)`, `Jacobian(...)`), or
  `reduce_state` (its attributes) for one holding no programs; a derivative that is a
  closure is wrapped in `Remade` (`travels`), which pickles as the factory's call.
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
import os
import pickle
import sys
import threading
import types
from collections import OrderedDict
from dataclasses import dataclass, field

from ..backend import cache, index
from ..config import __version__
from ..errors import SrcgradError
from ..rules import custom, fingerprint
from ..rules.forward import forward_rule
from ..rules.registry import lookup
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
    reach = _reached(roots)
    seeds = list(seeds) + [(f, wrt, mode) for f, wrt, mode, _ in list(programs._PROGRAMS)
                           if any(f is root for root in roots)]
    planted = [s for s in (_seed(*seed) for seed in seeds) if s is not None]
    files = [(f, f.__code__.co_filename) for f in reach.functions]  # cloudpickle drops them
    objects = _by_value((maker, args, kwargs or {}, pick, reach.rules, planted, files,
                         reach.outside), reach.modules)
    payload = {"format": _FORMAT, "srcgrad": __version__, "rules": fingerprint(),
               "sources": _sources(reach.functions), "objects": objects}
    return _arrive, (pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL),)


def reduce_state(obj):
    """The `__reduce__` value of an object made again from its attributes, for objects
    that hold only functions, names and flags (a NestedGrad: its programs are built
    when first called); objects holding programs pickle as their constructor's call."""
    return reduce_call(restore, (type(obj), dict(vars(obj))))


def restore(cls, state: dict):
    """An object of `cls` with attributes `state` (what `reduce_state` pickles)."""
    obj = cls.__new__(cls)
    obj.__dict__.update(state)
    return obj


def travels(factory):
    """Decorator of a derivative factory (`hessian`, `vjp`): a callable it returns, or that
    the tuple it returns holds, that cannot pickle itself (a closure, a small wrapper
    object) is returned as a `Remade`, which pickles as the factory's call."""
    @functools.wraps(factory)
    def making(*args, **kwargs):
        made = factory(*args, **kwargs)
        if isinstance(made, tuple):
            return tuple(Remade(m, _Named(factory), args, kwargs, pick=k) if _needs(m) else m
                         for k, m in enumerate(made))
        return Remade(made, _Named(factory), args, kwargs) if _needs(made) else made
    return making


def _needs(made) -> bool:
    """Whether `made` is callable and has no `__reduce__` of its own."""
    return callable(made) and getattr(type(made), "__reduce__") is object.__reduce__


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
    """What a `travels` factory made (`hessian(f)`, `vjp`'s function), callable and read
    as it is (its attributes are the made object's), pickling as `reduce_call(maker,
    args, kwargs, seeds, pick)`."""

    def __init__(self, made, maker, args, kwargs=None, seeds=(), pick=None):
        self._made = made
        self._recipe = (maker, tuple(args), dict(kwargs or {}), tuple(seeds), pick)
        self.__doc__ = getattr(made, "__doc__", None)

    def __call__(self, *args, **kwargs):
        return self._made(*args, **kwargs)

    def __getattr__(self, name):  # `.source`, `.backend`, `__wrapped__`, `__name__`, ...
        if name in ("_made", "_recipe"):
            raise AttributeError(name)
        return getattr(self._made, name)

    def __reduce__(self):
        return reduce_call(*self._recipe)

    def __repr__(self):
        return repr(self._made)


# ---- pickling ----------------------------------------------------------------------------

@dataclass
class _Reach:
    """What pickling the roots carries: every function they reach by name and the rules of
    the custom rules they use; those rules as (primal, vjp or None, jvp or None); the
    globals each function's source names outside its code; the modules pickled by value."""
    functions: list = field(default_factory=list)
    rules: list = field(default_factory=list)
    outside: list = field(default_factory=list)
    modules: set = field(default_factory=set)


def _reached(roots) -> _Reach:
    """What pickling `roots` carries (see `_Reach`)."""
    reach, heads = _Reach(), []

    def note(parent, chain, found, value, _target):
        rule = lookup(value) if found else None
        if rule is not None and rule.custom and all(value is not r[0] for r in reach.rules):
            vjp = None if rule.vjp.__module__ == custom.__name__ else rule.vjp  # a placeholder
            jvp = forward_rule(rule)
            reach.rules.append((value, vjp, jvp if inspect.isfunction(jvp) else None))
        if found and len(chain) == 1:
            heads.append((parent, chain[0], value))

    for root in roots:
        try:
            reached, _ = index.reach(root, note)
        except (OSError, SyntaxError):  # no source, or a lambda the index cannot read
            reached = [root]
        reach.outside += _outside_code([(reached[k], name, value) for k, name, value in heads])
        heads.clear()
        reached += [f for _, vjp, jvp in reach.rules for f in (vjp, jvp) if f is not None]
        reach.functions += [f for f in reached if all(f is not g for g in reach.functions)]
    homes = {f.__module__ for f in reach.functions} | reach.modules
    for home in sorted(m for m in homes if m in sys.modules):  # methods called via `self`
        methods = _methods(sys.modules[home])
        reach.functions += [f for f in methods if all(f is not g for g in reach.functions)]
    reach.modules |= homes | _user_modules()
    reach.modules -= {"__main__", None}
    return reach


def _methods(module) -> list:
    """The methods and properties of the classes `module` defines (a structured argument's
    `self.predict(X)` reaches them through the instance, not by a name)."""
    found = []
    for value in list(vars(module).values()):
        if inspect.isclass(value) and value.__module__ == module.__name__:
            for member in vars(value).values():
                member = getattr(member, "__func__", getattr(member, "fget", member))
                if inspect.isfunction(member):
                    found.append(member)
    return found


_USERS: dict = {}  # module name -> whether it is the user's own code


def _user_modules() -> set:
    """The user's own modules among those imported: their functions and classes travel by
    value (installed libraries are imported by name on arrival)."""
    for name, module in list(sys.modules.items()):
        if name not in _USERS:
            _USERS[name] = isinstance(module, types.ModuleType) and _users(module)
    return {name for name, mine in _USERS.items() if mine and name in sys.modules}


@functools.lru_cache(maxsize=1)
def _installed() -> tuple:
    import sysconfig
    return tuple(os.path.realpath(sysconfig.get_paths()[k]) + os.sep
                 for k in ("stdlib", "platstdlib", "purelib", "platlib"))


def _users(module) -> bool:
    """Whether `module` is the user's own code: a file outside the installed libraries
    (the interpreter's paths, any site-packages or dist-packages), not the standard
    library, not srcgrad."""
    where, top = getattr(module, "__file__", None), module.__name__.split(".")[0]
    if where is None or top == "srcgrad" or top in sys.stdlib_module_names:
        return False
    real = os.path.realpath(where)
    return not real.startswith(_installed()) and not {"site-packages", "dist-packages"} & set(
        real.split(os.sep))


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
    dispatcher and a bound method stand for the function they call)."""
    found = []
    for arg in args:
        for value in (arg.values() if isinstance(arg, dict) else [arg]):
            value = getattr(value, "py_func", getattr(value, "__func__", value))
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


def _by_value(obj, modules) -> bytes:
    """cloudpickle's bytes of `obj`, with the functions of `modules` pickled by value."""
    import cloudpickle
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
    for primal, vjp, jvp in rules:
        if lookup(primal) is None:  # this process has none: register the sender's
            if vjp is not None:
                custom.defvjp(primal, vjp)
            if jvp is not None:
                custom.defjvp(primal, jvp)
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
    except (OSError, ValueError, index.Unindexable):
        pass  # the object is made from the carried source instead
