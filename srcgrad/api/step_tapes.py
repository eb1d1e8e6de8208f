"""What one step of each checkpointed loop records while it is reversed (the tape report).

A checkpointed loop's gradient records one step at a time: `f__loopK_step_vjp` runs the
step's forward sweep, recording, then its backward sweep, and its tape is gone when it
returns (transforms/checkpoint.py). `step_tapes` counts that tape with the census of
recording_census.py, running the step vjp's forward sweep once as Python on values the
gradient's own forward sweep left: the state after the loop (the same names and shapes
a step takes), the invariants, the loop's first step, and cotangents shaped like the
state (an appended item's like the list's last item). Guarantees: one entry per
checkpointed loop whose step records, at the user's line of the loop; a step whose
inputs cannot be found this way is skipped, never guessed.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from .recording_census import census

_STEP = re.compile(r"__loop(\d+)_step_vjp$")


@dataclass
class StepTape:
    where: str  # the user's file:line of the loop
    total: int  # bytes one step records
    peak: int  # the most live at once


def step_tapes(program, held: dict, where) -> list[StepTape]:
    """The step tapes of `program`'s checkpointed loops; `held` the main forward sweep's
    locals at its end, `where(line)` the user's file:line of a generated line."""
    source = program.emitted.source
    tree = ast.parse(source)
    lines = source.splitlines()
    out = []
    for func in tree.body:
        found = isinstance(func, ast.FunctionDef) and _STEP.search(func.name)
        if not found:
            continue
        inputs = _inputs([a.arg for a in func.args.args], held)
        loop = next((k + 1 for k, text in enumerate(lines)
                     if text.strip().startswith(f"_cp{found.group(1)} = ")), None)
        if inputs is None or loop is None:
            continue
        counted = census(program, inputs, func.name)
        if counted.peak:
            out.append(StepTape(where(loop), sum(s.bytes for s in counted.sites.values()),
                                counted.peak))
    return out


def _inputs(params: list[str], held: dict) -> list | None:
    values, unknown = [], 0
    for p in params:
        item = re.fullmatch(r"_ct_(.+)_\d+", p)
        if p in held:
            values.append(held[p])
        elif p.startswith("_ct_") and p[4:] in held:
            values.append(held[p[4:]])
        elif item and isinstance(held.get(item.group(1)), list) and held[item.group(1)]:
            values.append(held[item.group(1)][-1])
        elif not p.startswith("_ct_") and unknown == 0:
            unknown += 1  # the loop's variable (a while loop has none): its first step
            values.append(0)
        else:
            return None
    return values
