"""Pass 11, compile: numba-compile a generated function, or run it as Python.

`Compiled` calls the `numba.njit(cache=True)` version; generated helpers it
calls (`g__grad_all`) are compiled too, through the module's globals; a main function
whose code is a helper's (a recursive function's gradient is its `f__grad_all`) is
served by that helper's compiled code, compiled once. If numba cannot
compile it, srcgrad warns once with numba's reason and the user's line the
failure maps to, then keeps working by running the same generated function
as plain Python. `backend` says which one ran last ("numba" or "python").

numba's cache files of the module (`.nbi`/`.nbc`, written by other processes) may
be truncated or corrupt: a failure raised while numba loads them is not taken
for a compilation failure. srcgrad deletes the module's cache files, warns once,
and compiles again.

A call that finds compiled code for its argument types costs numba's dispatch
and little more: NumbaPerformanceWarnings are silenced only while numba
compiles (around the dispatcher's `_compile_for_args`), not at every call.
srcgrad's warnings are attributed to the first caller outside srcgrad.

Every function is compiled with numba's bounds checks: an index out of range
raises IndexError as NumPy does, where unchecked compiled code read past the
array and returned a gradient of other numbers (`x[i + 1]` at the last i).
Measured (thread CPU of the generated gradients): gmm and lstm 1.02-1.03x the unchecked
time, ode 1.08-1.11x (its scalar loops index at every step), det 1.05-1.08x, ba, lse,
llsq within noise; no measurable change in compile time. Correct numbers first: a different number than NumPy's is the
one thing srcgrad must never give.
"""
from __future__ import annotations

import linecache
import os
import re
import warnings

import numba
from numba.core.caching import NullCache
from numba.core.errors import NumbaError, NumbaPerformanceWarning

from ..errors import Location, SrcgradError, SrcgradWarning, outside
from . import allocator, fused, helper_cache, raised
from .shared_cache import shared
from .numba_reasons import construct
from .reals import ComplexWarning, complex_type, first_complex_line, has_complex


class Compiled:
    def __init__(self, module, function: str, helpers: list[str], path, line_map, describe,
                 jit=True, form=True):
        python_func = getattr(module, function)
        jit = jit and not numba.config.DISABLE_JIT  # NUMBA_DISABLE_JIT=1: run as Python
        if jit:
            allocator.steady()  # tapes from reused memory (allocator.py)
        self.python = python_func
        self.module = module
        self.path = str(path)
        self._cache_dir = os.path.dirname(self.path)  # the checked cache directory in use
        self.helpers = {name: getattr(module, name) for name in helpers}  # Python versions
        if jit:  # bounds checked: IndexError as in NumPy (a try's helper relies on it too)
            for name, helper in self.helpers.items():
                setattr(module, name, _quiet(numba.njit(cache=True, boundscheck=True)(helper),
                                             self._cache_dir, self._uncache_recursive))
        self.line_map = line_map
        self.describe = describe  # "gradient of f (model.py:3)"
        twin = next((name for name, helper in self.helpers.items()
                     if same_code(helper, python_func)), None)
        if jit and twin is not None:  # f__grad is f__grad_all's body: compile it once
            self.dispatcher = getattr(module, twin)
        else:
            self.dispatcher = (_quiet(numba.njit(cache=True, boundscheck=True)(python_func),
                                      self._cache_dir, self._uncache_recursive)
                               if jit else None)
        if jit:
            self._refusing_complex(self.dispatcher)
        self.fallback_reason: str | None = None
        self.backend: str | None = None
        self.jit = jit
        self._dropped_cache = False
        # the compiled form (backend/fused.py): made at the first compiled call, or None
        self.form = fused.Form(self) if jit and form and fused.enabled() else None

    def __call__(self, *args):
        if self.dispatcher is not None and self.fallback_reason is None:
            if self.form is not None:
                done, result = self.form.call(args)
                if done:
                    self.backend = "numba"
                    return result
            failed = None
            try:
                result = self.dispatcher(*args)
            except NumbaError as exc:
                if self._drop_unreadable_cache(exc):
                    return self(*args)
                self._fall_back(exc)
            except Exception as exc:
                if self._compiled_for(args):  # the compiled code ran and raised
                    if isinstance(exc, SrcgradError):  # srcgrad's own check: named already
                        self.backend = "numba"
                        raise
                    failed = exc
                elif self._drop_unreadable_cache(exc):
                    return self(*args)
                else:
                    self._fall_back(exc)  # numba failed while compiling (not a NumbaError)
            else:
                self.backend = "numba"
                if self.form is not None:
                    self.form.plain_ran()
                return result
            if failed is not None:  # outside the handler: NumPy's exception, not a chain
                return self._raised(args, failed)
        self.backend = "python"
        return self._plain(args)

    def _plain(self, args):
        """The function run as Python; what it raises is named at the user's line (raised.py)."""
        with warnings.catch_warnings():  # a complex value cast to real: refused (reals.py)
            warnings.simplefilter("error", ComplexWarning)
            try:
                result = self.python(*args)
            except ComplexWarning:
                result = 1j
            except Exception as exc:
                raised.locate(exc, self.path, self.line_map, self.describe)
                raise
        if has_complex(result):
            self.refuse_complex(args)
        return result

    def _raised(self, args, exc):
        """The compiled code raised `exc`: run the function as Python, which raises NumPy's
        exception at the user's line; where it returns instead, its result, with a warning."""
        self.backend = "python"
        result = self._plain(args)
        warnings.warn(
            f"srcgrad: the compiled {self.describe} raised {type(exc).__name__}: {_message(exc)}"
            f", where it runs as plain Python; the result is the plain Python run's.",
            SrcgradWarning, stacklevel=outside())
        return result

    @staticmethod
    def same_code(f, g) -> bool:
        """`same_code` (below), for the compiled form's twins (backend/fused.py)."""
        return same_code(f, g)

    def jitted(self, func, boundscheck=True):
        """`func` (of the generated module's namespace) compiled as the function is (without
        numba's boundscheck where it checks its indices itself: transforms/bounds.py)."""
        dispatcher = _quiet(numba.njit(cache=True, boundscheck=boundscheck)(func), self._cache_dir,
                            self._uncache_recursive)
        self._refusing_complex(dispatcher)
        return dispatcher

    def _uncache_recursive(self):
        """numba issue 6061: a recursive function cached with the code of one signature
        that calls another (`f(x[:, 1:])` of a contiguous x) crashes the next process
        that loads it. Generated functions compiled for more than one signature lose their
        cache files and compile in each process."""
        generated = [getattr(self.module, n) for n in self.helpers]
        if getattr(self, "form", None) is not None:
            generated += self.form.dispatchers
        for dispatcher in generated:
            cache = getattr(dispatcher, "_cache", None)
            if len(getattr(dispatcher, "overloads", ())) > 1 and cache is not None \
                    and not isinstance(cache, NullCache):
                cache.flush()
                dispatcher._cache = NullCache()

    def _refusing_complex(self, dispatcher):
        """Check each signature numba compiles (or loads) for complex values (reals.py)."""
        compile_for_args = dispatcher._compile_for_args

        def checked(*args, **kws):
            known = set(dispatcher.overloads)
            out = compile_for_args(*args, **kws)
            if any(complex_type(cres) for sig, cres in dispatcher.overloads.items()
                   if sig not in known):
                self.refuse_complex(args)
            return out
        dispatcher._compile_for_args = checked

    def refuse_complex(self, args):
        """Raise SrcgradError at the user's line where a complex value appears."""
        line = first_complex_line(self.python, args, self.path)
        where = self.line_map.get(line) if line is not None else None
        loc = None
        if where is not None:
            filename, _, number = where.rpartition(":")
            loc = Location(filename, int(number), 0, linecache.getline(filename, int(number)))
        raise SrcgradError(
            f"srcgrad cannot compute the {self.describe}: a complex value appears on a "
            "differentiated path (a negative number to a fractional power, a library call "
            "returning complex values, a complex value cast to real); srcgrad differentiates "
            "real-valued code only and refuses complex values rather than give a wrong "
            "number. Keep the real and imaginary parts as separate real arrays.", loc)

    def call_helper(self, name: str, *args):
        """Call another function of the generated module (`f__value`), compiled if numba can."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NumbaPerformanceWarning)
                return getattr(self.module, name)(*args)
        except NumbaError:
            self.module.__dict__.update(self.helpers)
            return self.helpers[name](*args)

    def _compiled_for(self, args) -> bool:
        """Whether numba holds compiled code for these argument types."""
        try:
            key = tuple(self.dispatcher.typeof_pyval(a) for a in args)
        except Exception:
            return False
        return key in self.dispatcher.overloads

    def _drop_unreadable_cache(self, exc: Exception, path=None, dispatchers=None) -> bool:
        """If `exc` came from numba reading its cache files, delete this module's (once;
        or those of the module at `path`, the compiled form's) and say so: whether to
        compile again."""
        if self._dropped_cache or not _from_numba_cache(exc):
            return False
        self._dropped_cache = True
        if path is None:
            path = self.path
            dispatchers = [self.dispatcher] + [getattr(self.module, n) for n in self.helpers]
        deleted = _delete_cache_files(str(path), dispatchers)
        reason = _key_line(_message(exc))
        folders = sorted({os.path.dirname(path) for path in deleted}) or ["none left"]
        warnings.warn(
            f"srcgrad: numba's cache files for the {self.describe} could not be read "
            f"({type(exc).__name__}: {reason}); srcgrad deleted the module's {len(deleted)} "
            f"cache files (in {', '.join(folders)}) and compiles the code again.",
            SrcgradWarning, stacklevel=outside())
        return True

    def _fall_back(self, exc: Exception) -> None:
        self.module.__dict__.update(self.helpers)  # the Python main calls Python helpers
        reason = _message(exc) or (f"{type(exc).__name__} raised inside numba, without a "
                                   "message (numba cannot compile this code)")
        self.fallback_reason = reason
        user_line = self.user_line(reason)
        what = construct(reason) or f"numba said: {_key_line(reason)}"
        where = ""
        if user_line:
            filename, _, number = user_line.rpartition(":")
            text = linecache.getline(filename, int(number)).strip()
            where = f" at {user_line}" + (f" ({text})" if text else "")
        warnings.warn(
            f"srcgrad: numba could not compile the {self.describe}: {what}{where}; running it "
            f"as plain Python instead, which is slower but gives the same result.\n"
            f"The generated code is in {self.path}; numba's whole message is in the "
            "gradient's .fallback_reason.", SrcgradWarning, stacklevel=outside())

    def user_line(self, reason: str):
        """The user's file:line that numba's message points at, if it names a generated line."""
        hits = [int(m) for m in re.findall(rf'File "[^"]*{re.escape(self.path.split("/")[-1])}", line (\d+)', reason)]
        for line in reversed(hits):
            if line in self.line_map:
                return self.line_map[line]
        return None


_CODE_PARTS = ("co_code", "co_names", "co_varnames", "co_argcount", "co_posonlyargcount",
               "co_kwonlyargcount", "co_flags", "co_freevars", "co_cellvars")


def same_code(f, g) -> bool:
    """Whether two functions of one module run the same code: same bytecode, names and
    constants (compared with their types: 1, 1.0 and True are equal but not the same).
    A recursive function's gradient is its joint gradient `f__grad_all` again, so numba
    compiles one of them and serves both (half of det's first call)."""
    a, b = f.__code__, g.__code__
    consts = [tuple((type(c), repr(c)) for c in code.co_consts) for code in (a, b)]
    return (consts[0] == consts[1] and f.__defaults__ == g.__defaults__
            and f.__globals__ is g.__globals__
            and all(getattr(a, part) == getattr(b, part) for part in _CODE_PARTS))


def _quiet(dispatcher, cache_dir, after=None):
    """`dispatcher`, compiling with NumbaPerformanceWarnings silenced (calls pay nothing) and
    the runtime helpers' compiled code cached in `cache_dir` (helper_cache.py); `after()`
    once it compiled."""
    shared(dispatcher)  # concurrent processes' saves never mix (shared_cache.py)
    compile_for_args = dispatcher._compile_for_args

    def quiet_compile(*args, **kws):
        with helper_cache.compiling(cache_dir), warnings.catch_warnings():
            warnings.simplefilter("ignore", NumbaPerformanceWarning)
            out = compile_for_args(*args, **kws)
        if after is not None:
            after()
        return out
    dispatcher._compile_for_args = quiet_compile  # numba's C dispatcher looks it up per miss
    return dispatcher


_NUMBA_CACHING = os.path.join("numba", "core", "caching.py")


def _from_numba_cache(exc: BaseException) -> bool:
    """Whether `exc` (or an exception it was raised from) came out of numba's cache loading."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename.endswith(_NUMBA_CACHING):
                return True
            tb = tb.tb_next
        exc = exc.__cause__ or exc.__context__
    return False


def _delete_cache_files(path: str, dispatchers) -> list[str]:
    """Delete numba's index and data files of the generated module at `path`; their paths."""
    prefix = os.path.splitext(os.path.basename(path))[0] + "."
    folders = {os.path.join(os.path.dirname(path), "__pycache__")}
    folders |= {d._cache._cache_path for d in dispatchers
                if hasattr(getattr(d, "_cache", None), "_cache_path")}
    deleted = []
    for folder in sorted(f for f in folders if os.path.isdir(f)):
        for name in sorted(os.listdir(folder)):
            if name.startswith(prefix) and name.endswith((".nbi", ".nbc")):
                try:
                    os.unlink(os.path.join(folder, name))
                except OSError:
                    continue
                deleted.append(os.path.join(folder, name))
    return deleted


def _message(exc: Exception) -> str:
    """What `exc` says, without numba's terminal colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()


def _key_line(reason: str) -> str:
    """The line of numba's error that says what went wrong, not which pipeline stage failed."""
    lines = [ln.strip() for ln in reason.splitlines() if ln.strip()]
    for line in lines:
        if not line.startswith(("Failed in", "During:", "File ", "^", "<source")):
            return line
    return lines[0] if lines else reason
