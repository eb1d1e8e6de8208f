"""Which lines of a `with GradientTape()` block ran (gradient_tape.py).

NOTE [executed lines]: TensorFlow's tape only connects what ran. While a tape records,
line events of its frame collect the lines that ran (`tape._executed`, a set), so a
Variable read only in a branch that did not run is unconnected (None), as in TensorFlow.
Under another tracer installed with `sys.settrace` (a debugger, coverage) the tape does
not interfere: `tape._executed` is None and every line counts as run.

A block without branches, loops, early exits or nested definitions (`tape_facts.straight`)
runs every line, so it is not traced at all: `_executed` is None, which counts every line,
unless an exception left the block, when it is the lines from the block's first up to the
one that raised (the lines that ran). Tracing would give the same dependencies.

How the line events are had, at the least cost to the code that runs in the block:
- Python >= 3.12: `sys.monitoring` under a tool id of srcgrad's own, with LINE events
  turned on for the block's code object only (`set_local_events`), and off again when
  the last tape recording in that code stops. Nothing else is instrumented: calls made
  in the block run at full speed, and tools using `sys.settrace` or other tool ids see
  nothing of it. Events of other frames running the same code are ignored. If every
  free tool id is taken, lines are not collected (`_executed` is None).
- Python 3.10, 3.11: `sys.settrace` with a global function that traces no frame (it
  returns None) and the block's frame's `f_trace` collecting its lines; the global
  function is removed when the last tape stops.
"""
from __future__ import annotations

import sys

_RECORDING: list = []  # tapes collecting executed lines


def _another_tracer() -> bool:
    return sys.gettrace() not in (None, _no_calls)


# ---- Python 3.10, 3.11: settrace -----------------------------------------------------

def _no_calls(frame, event, arg):
    return None  # other frames: no line events


def _lines(frame, event, arg):
    if event == "line":
        for tape in _RECORDING:
            if tape._frame is frame:
                tape._executed.add(frame.f_lineno)
    return _lines


def _start_settrace(tape) -> None:
    if not _RECORDING:
        sys.settrace(_no_calls)
    tape._frame.f_trace = _lines
    _RECORDING.append(tape)


def _stop_settrace(tape) -> None:
    _RECORDING.remove(tape)
    if not any(t._frame is tape._frame for t in _RECORDING) and tape._frame.f_trace is _lines:
        tape._frame.f_trace = None
    if not _RECORDING and sys.gettrace() is _no_calls:  # a debugger started meanwhile stays
        sys.settrace(None)


# ---- Python >= 3.12: sys.monitoring ------------------------------------------------------

_TOOL: list = []  # [tool id] once registered, [None] if no id was free
_CODES: dict = {}  # code object -> how many recording tapes run in it


def _on_line(code, line):
    frame = sys._getframe(1)  # the frame running `code`
    for tape in _RECORDING:
        if tape._frame is frame:
            tape._executed.add(line)


def _tool():
    if not _TOOL:
        monitoring = sys.monitoring
        free = [t for t in (4, 3, 5) if monitoring.get_tool(t) is None]
        _TOOL.append(free[0] if free else None)
        if free:
            monitoring.use_tool_id(free[0], "srcgrad.GradientTape")
            monitoring.register_callback(free[0], monitoring.events.LINE, _on_line)
    return _TOOL[0]


def _start_monitoring(tape) -> bool:
    tool = _tool()
    if tool is None:
        return False
    code = tape._frame.f_code
    if not _CODES.get(code):
        sys.monitoring.set_local_events(tool, code, sys.monitoring.events.LINE)
    _CODES[code] = _CODES.get(code, 0) + 1
    _RECORDING.append(tape)
    return True


def _stop_monitoring(tape) -> None:
    _RECORDING.remove(tape)
    code = tape._frame.f_code
    _CODES[code] -= 1
    if not _CODES[code]:
        del _CODES[code]
        sys.monitoring.set_local_events(_TOOL[0], code, 0)


_MONITORING = sys.version_info >= (3, 12)


def start_line_events(tape, needed: bool = True) -> None:
    """Collect the lines of `tape._frame` that run from now on into `tape._executed` (only
    if `needed`: a straight block's lines all run)."""
    tape._executed = None
    if not needed or _another_tracer():
        return
    tape._executed = set()
    if _MONITORING:
        if not _start_monitoring(tape):
            tape._executed = None
    else:
        _start_settrace(tape)


def stop_line_events(tape, trace=None) -> None:
    """Stop collecting; `trace` is the traceback of an exception leaving the block, if any."""
    if tape not in _RECORDING:
        if trace is not None and tape._executed is None and not _another_tracer():
            while trace is not None and trace.tb_frame is not tape._frame:
                trace = trace.tb_next
            if trace is not None:  # a straight block: the lines up to the one that raised ran
                tape._executed = set(range(tape._block.start, trace.tb_lineno + 1))
        return
    if _MONITORING:
        _stop_monitoring(tape)
    else:
        _stop_settrace(tape)
