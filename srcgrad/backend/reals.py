"""Complex values in generated code: refused with the user's line, never differentiated.

srcgrad differentiates real-valued code. Complex constants, `complex(...)` and
complex dtypes in the user's code are refused by check.py and complex arguments by
api/arguments.py, but a complex value can still appear while the code runs: a
negative Python float to a fractional power, a library call returning complex
values (np.roots, np.fft.fft). Derivative rules are written for real values, so
such a value on a differentiated path would give a wrong number (`np.abs(x * c)`
with a complex c: the real part of a complex cotangent). `Compiled` uses this
module to stop instead:
- `complex_type(cres)`: whether a numba compilation returns or computes a complex
  adjoint or tangent (checked once per compiled signature, also when numba loads it
  from its cache, where only the return type is known);
- `has_complex(result)`: whether a Python run returned one; NumPy's ComplexWarning
  (a complex value cast to real, which discards its imaginary part) is an error
  while generated code runs as Python;
- `first_complex_line(func, args, path)`: the generated line where a complex value is
  first bound or cast to real, found by running the Python version again under a
  tracer that looks only at the name each line assigns (the error path only).
"""
from __future__ import annotations

import re
import sys
import warnings

import numpy as np
from numba.core import types

ComplexWarning = np.exceptions.ComplexWarning
_TARGET = re.compile(r"^\s*(\w+)(?:\[[^\]]*\])?\s*[-+*/]?=")


def has_complex(value) -> bool:
    if isinstance(value, (tuple, list)):
        return any(has_complex(v) for v in value)
    return isinstance(value, (complex, np.complexfloating)) or (
        isinstance(value, np.ndarray) and value.dtype.kind == "c")


def _complex_numba(t) -> bool:
    if isinstance(t, types.Complex):
        return True
    if isinstance(t, (types.Array, types.List)):
        return _complex_numba(t.dtype)
    if isinstance(t, types.BaseTuple):
        return any(_complex_numba(e) for e in t.types)
    return False


def complex_type(cres) -> bool:
    """Whether a numba compile result returns a complex value or has a complex adjoint
    (`_adj_...`) or tangent (`_tan...`)."""
    if _complex_numba(cres.signature.return_type):
        return True
    typemap = getattr(cres.type_annotation, "typemap", None)  # absent when loaded from cache
    return bool(typemap) and any(
        _complex_numba(t) for name, t in typemap.items() if name.startswith(("_adj_", "_tan")))


def first_complex_line(func, args, path: str) -> int | None:
    """The line of generated file `path` that first binds a complex value or casts one to
    real, running `func(*args)` (the Python version) again; None if none does."""
    with open(path) as handle:
        lines = handle.read().splitlines()
    found, last = [], {}

    def local(frame, event, arg):
        if event in ("line", "return"):
            previous = last.get(id(frame))
            if previous is not None and not found:
                m = _TARGET.match(lines[previous - 1]) if previous <= len(lines) else None
                if m and has_complex(frame.f_locals.get(m.group(1))):
                    found.append(previous)
            last[id(frame)] = frame.f_lineno
        elif event == "exception" and issubclass(arg[0], ComplexWarning) and not found:
            found.append(frame.f_lineno)
        return local

    def tracer(frame, event, arg):
        return local if frame.f_code.co_filename == path else None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ComplexWarning)
            func(*args)
    except Exception:
        pass
    finally:
        sys.settrace(old)
    return found[0] if found else None
