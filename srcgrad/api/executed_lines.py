"""Which lines of a `with GradientTape()` block ran (gradient_tape.py)."""
from __future__ import annotations

import sys

# NOTE [executed lines]: TensorFlow's tape only connects what ran. While a tape records,
# line events of its frame collect the lines that ran, so a Variable read only in a branch
# that did not run is unconnected (None), as in TensorFlow. Under another tracer (a
# debugger, coverage) the tape does not interfere: every line counts as run.
_RECORDING: list = []  # tapes collecting executed lines


def _no_calls(frame, event, arg):
    return None  # other frames: no line events


def _lines(frame, event, arg):
    if event == "line":
        for tape in _RECORDING:
            if tape._frame is frame:
                tape._executed.add(frame.f_lineno)
    return _lines


def start_line_events(tape) -> None:
    tape._executed = None
    if sys.gettrace() not in (None, _no_calls):
        return
    tape._executed = set()
    if not _RECORDING:
        sys.settrace(_no_calls)
    tape._frame.f_trace = _lines
    _RECORDING.append(tape)


def stop_line_events(tape) -> None:
    if tape not in _RECORDING:
        return
    _RECORDING.remove(tape)
    if not any(t._frame is tape._frame for t in _RECORDING):
        tape._frame.f_trace = None
    if not _RECORDING:
        sys.settrace(None)
