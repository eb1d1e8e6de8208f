"""Exceptions raised by srcgrad, and how they point at the user's code.

Every error about the user's function names the user's file and line (never
only a line of generated code), so `Location` travels with each pass.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A place in the user's source: absolute file line and 0-based column."""

    filename: str
    lineno: int
    col: int = 0
    text: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}"


class SrcgradError(Exception):
    """Base class of every error srcgrad raises about a user's function."""

    def __init__(self, message: str, loc: Location | None = None):
        self.loc = loc
        if loc is not None:
            message = f"{message}\n  at {loc}" + (f": {loc.text.strip()}" if loc.text else "")
        super().__init__(message)


class SrcgradSyntaxError(SrcgradError, SyntaxError):
    """A construct srcgrad cannot differentiate (yet), with the user's file:line:col."""

    def __init__(self, message: str, loc: Location):
        SrcgradError.__init__(self, message, loc)
        # SyntaxError's own fields, so tracebacks and IDEs point at the user's code.
        self.msg = str(self.args[0])
        self.filename = loc.filename
        self.lineno = loc.lineno
        self.offset = loc.col + 1
        self.text = loc.text


class MissingRuleError(SrcgradError, NotImplementedError):
    """A differentiable value flows through a call that has no derivative rule."""


class SourceUnavailableError(SrcgradError, OSError):
    """The function's source text cannot be read (REPL, exec, builtins)."""


class NonScalarOutputError(SrcgradError, ValueError):
    """`grad` was asked for the gradient of a function whose output is not a scalar."""


class SrcgradWarning(UserWarning):
    """Non-fatal trouble, such as numba failing and srcgrad running plain Python."""


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def outside() -> int:
    """The `stacklevel` of the first caller outside srcgrad, for `warnings.warn`."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE + os.sep):
        frame, level = frame.f_back, level + 1
    return level
