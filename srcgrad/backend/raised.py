"""Exceptions the user's own code raises inside a gradient, named at the user's line.

An index out of range, NumPy's ValueError for shapes that do not broadcast, a division of
Python floats by zero: the user's function would raise them, so the gradient raises them
too. Where:

- run as Python, the exception's traceback ends at a line of the generated module;
- compiled by numba, it ends in srcgrad's dispatch with numba's short message
  (`IndexError: index is out of bounds`, no index, no size, no line).

Guarantees:
- `locate(exc, ...)` adds a note naming the user's file:line (and its text) that the
  deepest generated line of the traceback comes from (`line_map`), and the gradient it
  was raised in. The exception keeps its type, message and traceback: code catching
  `IndexError` still does. Exceptions srcgrad raises itself (`SrcgradError`, which
  name their line already) get no note, and neither does one with no generated line in
  its traceback. Python 3.10 has no notes: the exception is raised unchanged.
- `Compiled` (compile.py) runs the generated function as plain Python again when its
  compiled code raised, so the user sees NumPy's exception and message, at their line,
  as `jit=False` shows it. Where the Python run returns instead (numba raised where
  NumPy does not), its result is returned with a warning: NumPy's number, never a
  different one. The rerun costs a Python run of the function, on the error path only.
"""
from __future__ import annotations

import os

from ..errors import SrcgradError
from ..frontend.parse import user_location


def user_line(exc: BaseException, path: str, line_map: dict) -> str | None:
    """The user's file:line of the deepest frame of `exc`'s traceback in the generated
    module at `path`, if `line_map` names one."""
    target, where = os.path.realpath(path), None
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if os.path.realpath(code.co_filename) == target:
            where = line_map.get(tb.tb_lineno, where)
        tb = tb.tb_next
    return where


def locate(exc: BaseException, path: str, line_map: dict, describe: str) -> BaseException:
    """`exc` with a note naming the user's line it was raised at (see the module docstring)."""
    if isinstance(exc, SrcgradError) or not hasattr(exc, "add_note"):
        return exc
    where = user_line(exc, path, line_map)
    if where is None:
        return exc
    text = user_location(where).text.strip()
    note = f"  raised in the {describe} at {where}" + (f": {text}" if text else "")
    if note not in getattr(exc, "__notes__", ()):
        exc.add_note(note)
    return exc
