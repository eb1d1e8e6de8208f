"""numba's compiled code of the runtime helpers, kept on disk between processes.

The runtime helpers (`zeros_like`, `unbroadcast`, `record_at`, ...) and the
NumPy functions srcgrad re-implements for numba are `numba.extending.overload`s.
numba compiles an overload's implementation once per argument types in every
process, and only the generated module itself has `cache=True`: a first call
of a new function used to type, lower and optimise every helper it calls
again, about half of that call's compilation (bench/README.md, cold start).

While srcgrad compiles generated code (`compiling()`, around numba's
`_compile_for_args`), the dispatchers numba makes for the implementations of
srcgrad's own overloads (and of a few of numba's, `_numba_functions`) cache
their compiled code, like `cache=True` (those `exec` made have no file to key a
cache by and are compiled as before; any failure of numba's cache, such as a closure it
cannot pickle for the key, is a miss), and numba's cache directory is
`<srcgrad's cache directory>/numba-<fingerprint>`. The fingerprint hashes
srcgrad's sources and the Python and numba versions, so an edited srcgrad never
loads code compiled from its old sources (numba itself checks only the file
an implementation is defined in, not the helpers it calls). The directory
lives inside the checked cache directory (backend/cache.py: owned by the user,
not writable by others) and is made with mode 700.

Guarantees: the code loaded is what numba compiled from the same sources for
the same types, so every result is bit-for-bit what compiling in the process
gives; outside `compiling()` numba's settings and the overloads' options are
as the user left them; a cache directory that cannot be made just means no
helper caching. Implementations numba cannot cache (it says why in a
NumbaWarning) are compiled as before, silently.
"""
from __future__ import annotations

import functools
import hashlib
import sys
import threading
import types
import uuid
import warnings
from contextlib import contextmanager
from pathlib import Path

import numba
import numpy as np
from numba.core import serialize
from numba.core.caching import NullCache
from numba.core.errors import NumbaWarning

from .shared_cache import shared

_PACKAGE = Path(__file__).resolve().parent.parent
_LOCK = threading.RLock()
_DEPTH = [0]


@functools.lru_cache(maxsize=1)
def package_fingerprint() -> str:
    """A hash of srcgrad's own sources: a changed pass never serves an old module."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(_PACKAGE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


def folder(cache_dir) -> Path:
    """Where numba keeps the helpers' compiled code, inside srcgrad's cache directory."""
    versions = f"{package_fingerprint()}-{numba.__version__}-{sys.version_info[:2]}"
    return Path(cache_dir) / f"numba-{hashlib.sha256(versions.encode()).hexdigest()[:16]}"


def _numba_functions() -> tuple:
    """numba's own overloads that generated code reaches and that cost most to compile
    again: the message of a shape mismatch in `a[i] = b` (str and join of tuples, about 1.4 s
    in a new process) and array allocation."""
    from numba.np import arrayobj
    return (arrayobj.raise_with_shape_context, np.empty, np.zeros, np.ones, np.full,
            np.empty_like, np.zeros_like, np.ones_like)


def _ours(template, extra: tuple) -> bool:
    """Whether an overload template is cached: srcgrad's (its typing function or the
    function it implements is defined under srcgrad.runtime) or one of `extra`'s."""
    if any(getattr(template, "key", None) is f for f in extra):
        return True
    for func in (getattr(template, "_overload_func", None), getattr(template, "key", None)):
        if (getattr(func, "__module__", None) or "").startswith("srcgrad.runtime"):
            return True
    return False


def _templates() -> list:
    """srcgrad's overload templates registered with numba now."""
    from numba.core.typing.templates import builtin_registry
    extra = _numba_functions()
    return [t for t in builtin_registry.functions
            if isinstance(getattr(t, "_jit_options", None), dict) and _ours(t, extra)]


@contextmanager
def compiling(cache_dir):
    """Compile with srcgrad's overloads cached under `folder(cache_dir)` (see the module
    docstring); reentrant, and a no-op where the folder cannot be made."""
    with _LOCK:
        if _DEPTH[0] or not _made(folder(cache_dir)):
            _DEPTH[0] += 1
            try:
                yield
            finally:
                _DEPTH[0] -= 1
            return
        try:
            saved = [(t, t.__dict__.get("_get_jit_decorator")) for t in _templates()]
        except Exception:  # another numba's registry: compile without caching helpers
            saved = []
        saved_dir = numba.config.CACHE_DIR
        _DEPTH[0] = 1
        try:
            for t, _ in saved:
                t._get_jit_decorator = _caching(t._get_jit_decorator)
            numba.config.CACHE_DIR = str(folder(cache_dir))
            with warnings.catch_warnings():  # "cannot cache ...": compiled as before
                warnings.filterwarnings("ignore", category=NumbaWarning,
                                        message=".*[Cc]annot cache.*")
                yield
        finally:
            _DEPTH[0] = 0
            numba.config.CACHE_DIR = saved_dir
            for t, own in saved:
                if own is None:
                    del t._get_jit_decorator
                else:
                    t._get_jit_decorator = own


def _caching(get_jit_decorator):
    """A template's `_get_jit_decorator` whose dispatchers cache their compiled code where
    numba can (an implementation made by `exec` has no file to key a cache by: not cached)."""
    def caching_decorator(self):
        jitter = get_jit_decorator(self)

        def with_options(**options):
            decorate = jitter(**options)

            def make(pyfunc):
                dispatcher = decorate(named_by_content(pyfunc))
                if isinstance(getattr(dispatcher, "_cache", None), NullCache):
                    try:
                        dispatcher.enable_caching()
                    except Exception:  # no source file, or numba cannot cache it
                        return dispatcher
                    dispatcher._cache = _Guarded(dispatcher._cache)
                    shared(dispatcher)
                return dispatcher
            return make
        return with_options
    return caching_decorator


def named_by_content(func):
    """A copy of `func` whose qualified name no function with other code or closure shares
    (`func` itself is left as it is: it may be in another function's closure, whose cache
    key pickles it).

    numba names a compiled function after its module, qualified name, argument types and
    a counter private to the process, and links a callee's code into its caller's cached
    library under that name; two libraries defining one name are assumed to hold the
    same code (linkonce_odr). An overload's implementation is often a closure: one
    qualified name (`_reduction.<locals>.<lambda>`) for `np.sum` and `np.min` alike. Code
    compiled and cached by another process can then carry, under a name this process
    gives a different closure, the other closure's code, and a gradient silently calls
    `np.sum`'s code for `np.min`. A hash of the code, its first line and the closure's
    contents in the name makes equal names mean equal code (a closure numba cannot
    pickle gets a name no other process makes)."""
    if not isinstance(func, types.FunctionType):
        return func
    digest = hashlib.sha256(repr(_code_parts(func.__code__)).encode())
    if func.__closure__:
        try:
            digest.update(serialize.dumps(tuple(c.cell_contents for c in func.__closure__)))
        except Exception:  # not picklable: never cached, and named for this process only
            digest.update(uuid.uuid4().bytes)
    copy = types.FunctionType(func.__code__, func.__globals__, func.__name__,
                              func.__defaults__, func.__closure__)
    copy.__kwdefaults__, copy.__module__ = func.__kwdefaults__, func.__module__
    copy.__dict__.update(func.__dict__)
    copy.__qualname__ = f"{func.__qualname__}__{digest.hexdigest()[:12]}"
    return copy


def _code_parts(code) -> tuple:
    """What a code object runs, without addresses (nested functions' code included)."""
    consts = tuple(_code_parts(c) if hasattr(c, "co_code") else (type(c).__name__, repr(c))
                   for c in code.co_consts)
    return (code.co_filename, code.co_firstlineno, code.co_code, consts, code.co_names)


class _Guarded:
    """A dispatcher's numba cache whose failures are misses: an implementation whose closure
    numba cannot pickle for its cache key (one holding a generator), or a file it cannot
    read or write, is compiled as it would be without the cache."""

    def __init__(self, cache):
        self._cache = cache

    def load_overload(self, sig, target_context):
        try:
            return self._cache.load_overload(sig, target_context)
        except Exception:
            return None

    def save_overload(self, sig, data):
        try:
            self._cache.save_overload(sig, data)
        except Exception:
            pass

    def __getattr__(self, name):
        return getattr(self._cache, name)


def _made(path: Path) -> bool:
    try:
        path.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return False
    return path.is_dir()
