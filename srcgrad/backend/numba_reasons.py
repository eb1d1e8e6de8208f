"""What numba could not compile, in the user's words, for compile.py's fallback warning.

`construct(reason)` reads numba's typing error and names the construct it stopped
at: a call with the argument types numba saw (`np.linalg.eig(array(float64, 2d, C))`), an
operation numba's own pieces lack (`@` of 3-d arrays, a Generator method it cannot lower),
a global of a type numba does not know, an attribute, a variable holding values of
two types; or None, when the message says none of these (the warning then quotes
numba's own key line).
"""
from __future__ import annotations

import re

_FUNCTION = re.compile(r"No implementation of function Function\((?:<function (\S+)|<built-in "
                       r"function (\S+)>|<ufunc '(\w+)'>|<class '([\w.]+)'>|<intrinsic (\w+)>)")
_LOWERING = re.compile(r"OverloadSelector object at 0x[0-9a-f]+>, \(([^)]*)\)")
_SIGNATURE = re.compile(r">>> (\S+?)\((.*)\)\s*$", re.MULTILINE)
_GLOBAL = re.compile(r"Untyped global name '(\w+)': Cannot determine Numba type of <class '([\w.]+)'>")
_ATTRIBUTE = re.compile(r"Unknown attribute '(\w+)' of type ([^\n]+?)\s*$", re.MULTILINE)
_UNIFY = re.compile(r"Cannot unify (.+?) and (.+?) for '([^']+)'")
_UNSUPPORTED = re.compile(r"Use of unsupported NumPy function '([\w.]+)'")
_INVALID = re.compile(r"Invalid use of (?:Function\()?<?(?:built-in function |function )?(\w+)"
                      r"[^\n]*? with (?:argument\(s\) of type\(s\)|parameters): \(([^\n]*)\)")


def _spelled(name: str) -> str:
    """numpy.linalg.eig -> np.linalg.eig; a runtime helper keeps its name."""
    return re.sub(r"^numpy\.", "np.", name)


def construct(reason: str) -> str | None:
    m = _FUNCTION.search(reason)
    if m:
        name = _spelled(next(g for g in m.groups() if g))
        sig = _SIGNATURE.search(reason)
        args = f"({sig.group(2)})" if sig else "(...)"
        if name.startswith("_"):  # one of numba's own pieces (`<intrinsic _impl>`)
            return f"an operation on {args}, which numba has no implementation for"
        return f"the call {name}{args}, which numba has no implementation for"
    m = _LOWERING.search(reason)
    if m:
        return f"an operation on ({m.group(1).rstrip(',')}), which numba cannot compile"
    m = _UNSUPPORTED.search(reason)
    if m:
        return f"{_spelled(m.group(1))}, which numba does not support (or not with these arguments)"
    m = _INVALID.search(reason)
    if m:
        return f"{m.group(1)} applied to ({m.group(2)}), which numba does not support"
    m = _GLOBAL.search(reason)
    if m:
        return (f"the global {m.group(1)!r}, a {m.group(2).rsplit('.', 1)[-1]} object numba "
                "cannot type (pass what it holds as an argument)")
    m = _ATTRIBUTE.search(reason)
    if m:
        return f"the attribute .{m.group(1)} of a {m.group(2)}"
    m = _UNIFY.search(reason)
    if m:
        name = m.group(3).split(".")[0]
        return (f"the variable {name!r}, which holds a {m.group(1)} in one place and a "
                f"{m.group(2)} in another")
    return None

