"""`GradFunction.tape_report(*args)`: what a gradient will record, before it runs.

Guarantees: the report is counted from the generated code itself, the source numba
compiles (recording_census.py runs its forward sweep once as Python with every recording
replaced by a counter, so it allocates no tape and never runs the backward sweep); it
is the same for `jit=True` and `jit=False`. Per recording site it gives the user's
file:line, the value recorded (in the user's names: `u`, `np.roll(u, 1)`, `y[i - 1]`),
its dtype and shape, how many times it is recorded, the bytes per recording and in all;
then each outermost loop's iterations and bytes (what checkpointing that loop would
bound), the total, and the peak of live tape bytes. Bytes are the data the compiled code
holds (arrays' nbytes, 8 per number); the lists holding stacked values add their own
slots, and the backward sweep's adjoints are not tape.
"""
from __future__ import annotations

import ast
import copy
import os
import re
from dataclasses import dataclass, field

import numpy as np

from .arguments import bind_arguments, inputs_of
from .recording_census import census, forward_sweep, recorded
from .step_tapes import step_tapes
from ..pipeline import build

_TEMPORARY = re.compile(r"_t\d+$")
_LOCATION = re.compile(r"\s+\((?P<where>[^()]*:\d+)\)$")


@dataclass
class Site:
    """One place in the generated forward sweep that records a value."""

    where: str  # the user's file:line ("model.py:12")
    value: str  # what is recorded, in the user's names
    dtype: str
    shape: str
    count: int
    per_iteration: int  # bytes per recording (mean, if the shape varies)
    total: int  # bytes held at the end of the forward sweep


@dataclass
class Loop:
    """An outermost loop of the forward sweep: how much its iterations record."""

    where: str
    statement: str
    iterations: int
    total: int

    @property
    def per_iteration(self) -> int:
        return self.total // self.iterations if self.iterations else 0


@dataclass
class TapeReport:
    function: str
    arguments: str
    sites: list[Site] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    total: int = 0  # bytes recorded by all sites
    peak: int = 0  # the largest sum of live tape bytes during the forward sweep
    snapshots: int = 0  # bytes of checkpointed loops' snapshots (in `peak` too)
    steps: list = field(default_factory=list)  # step_tapes.StepTape per checkpointed loop

    def __str__(self) -> str:
        return render(self)


def human(nbytes: int) -> str:
    """Bytes in decimal units, as memory limits are written ("200MB")."""
    for unit, size in (("GB", 10 ** 9), ("MB", 10 ** 6), ("kB", 10 ** 3)):
        if nbytes >= size:
            return f"{nbytes / size:.1f} {unit}"
    return f"{nbytes} B"


def render(report: TapeReport) -> str:
    head = ("where", "value", "dtype", "shape", "count", "per iteration", "total")
    rows = [(s.where, s.value, s.dtype, s.shape, f"{s.count:,}", human(s.per_iteration),
             human(s.total)) for s in report.sites]
    widths = [max(len(r[k]) for r in [head] + rows) for k in range(len(head))]
    right = {4, 5, 6}

    def line(cells):
        return "  ".join(c.rjust(w) if k in right else c.ljust(w)
                         for k, (c, w) in enumerate(zip(cells, widths))).rstrip()
    out = [f"tape of the {report.function}, at {report.arguments}:"]
    out += [line(head)] + [line(r) for r in rows] if rows else ["  nothing is recorded"]
    for loop in report.loops:
        out.append(f"loop {loop.where} ({loop.statement}): {loop.iterations:,} iterations, "
                   f"{human(loop.per_iteration)} per iteration, {human(loop.total)}")
    out.append(f"total {human(report.total)}; peak {human(report.peak)} (at the end of the "
               "forward sweep)" if report.peak == report.total else
               f"total {human(report.total)}; peak {human(report.peak)}")
    if report.snapshots:
        out.append(f"checkpoint snapshots {human(report.snapshots)}")
    for step in report.steps:
        out.append(f"checkpointed loop {step.where}: one step records {human(step.total)} "
                   "while it is reversed (in the peak; gone when the step is done)")
    if report.loops and not report.snapshots:
        out.append("checkpointing a loop (srcgrad.checkpointed(range(n), snapshots=k)) would "
                   "hold k copies of its state and one iteration's tape instead")
    out.append("(counted by running the forward sweep once as Python, recording nothing; "
               "bytes are the arrays' data and 8 per number)")
    return "\n".join(out)


def tape_report(gradient, args, kwargs) -> TapeReport:
    """The report for `gradient` (a GradFunction) called with `args`, `kwargs`."""
    if gradient._self is not None:
        args = (gradient._self, *args)
    what = f"the tape report of {gradient.__wrapped__.__qualname__}"
    arguments = bind_arguments(gradient._signature, args, kwargs, what).arguments
    if gradient._structured.applies(arguments, gradient.wrt):
        layout = gradient._structured.layout(arguments, gradient.wrt)
        program, inputs = layout.program, layout.inputs(arguments)
    else:
        program = gradient._program or build(gradient.__wrapped__, gradient.wrt,
                                             jit=gradient._structured.jit)
        inputs = inputs_of(program, dict(arguments), gradient.wrt)
    described = ", ".join(f"{k}={_argument(v)}" for k, v in arguments.items())
    return report_of(program, inputs, f"gradient of {gradient.__wrapped__.__qualname__} "
                     f"wrt {', '.join(gradient.wrt)}", described)


def report_of(program, inputs, function: str, arguments: str) -> TapeReport:
    counted = census(program, inputs)
    emitted = program.emitted
    lines = emitted.source.splitlines()
    func = forward_sweep(emitted.source, emitted.function)
    spell = _Spelling(func)
    steps = step_tapes(program, counted.held, lambda line: _where(emitted.line_map, line))
    report = TapeReport(function, arguments, snapshots=counted.snapshots, steps=steps,
                        peak=counted.peak + counted.snapshots + max(
                            (s.peak for s in steps), default=0))
    for stmt in sorted((s for s in ast.walk(func) if isinstance(s, ast.stmt)),
                       key=lambda s: s.lineno):
        found = recorded(stmt)
        count = counted.sites.get(stmt.lineno)
        if found is None or count is None:
            continue
        shape = "varies" if count.shapes_vary else (
            "-" if count.shape is None else str(tuple(count.shape)))
        report.sites.append(Site(_where(emitted.line_map, stmt.lineno), spell(found[1]),
                                 count.dtype, shape, count.count, count.bytes // count.count,
                                 count.bytes))
        report.total += count.bytes
    for loop in _outermost_loops(func.body):
        inside = sum(s.bytes for k, s in counted.sites.items()
                     if loop.lineno <= k <= loop.end_lineno)
        report.loops.append(Loop(_where(emitted.line_map, loop.lineno),
                                 _statement(lines, loop.lineno),
                                 counted.turns.get(loop.lineno, 0), inside))
    return report


def _argument(value) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype}{list(value.shape)}"
    text = repr(value)
    return text if len(text) <= 30 else f"{type(value).__name__}(...)"


def _where(line_map: dict, line: int) -> str:
    where = line_map.get(line)
    if where is None:
        return "on entry"
    filename, _, number = where.rpartition(":")
    return f"{os.path.basename(filename)}:{number}"


def _statement(lines: list[str], line: int) -> str:
    """The user's statement a generated line comes from: the comment above it."""
    for k in range(line - 2, -1, -1):
        text = lines[k].strip()
        if text.startswith("#"):
            return _LOCATION.sub("", text[1:].strip()).rstrip(":")
    return ""


def _outermost_loops(body: list) -> list:
    loops = []
    for stmt in body:
        if isinstance(stmt, (ast.For, ast.While)):
            loops.append(stmt)
        elif isinstance(stmt, ast.If):
            loops += _outermost_loops(stmt.body) + _outermost_loops(stmt.orelse)
    return loops


class _Spelling(ast.NodeTransformer):
    """A recorded expression in the user's names: temporaries replaced by what they
    hold, `snapshot(...)` dropped, version and inlining suffixes (`e__2`) dropped."""

    def __init__(self, func: ast.FunctionDef):
        self.defs, self.depth = {}, 0
        for node in ast.walk(func):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and _TEMPORARY.match(node.targets[0].id)):
                self.defs.setdefault(node.targets[0].id, node.value)

    def __call__(self, expr: ast.expr) -> str:
        self.depth = 4  # temporaries replaced inside one another at most this deep
        text = ast.unparse(self.visit(copy.deepcopy(expr)))
        return text if len(text) <= 40 else text[:37] + "..."

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id in ("snapshot", "linked") \
                and node.args:
            return self.visit(node.args[0])  # a copy; a recursive call's value
        return self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in self.defs and self.depth > 0:
            self.depth -= 1
            spelled = self.visit(copy.deepcopy(self.defs[node.id]))
            self.depth += 1
            return spelled
        node.recursive = node.id.endswith("__grad_all")  # its value and partials
        if not node.id.startswith("_"):
            node.id = node.id.split("__")[0]
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if _recursive_call(node.value):
            return node.value  # f__grad_all(...)[0]: the value of the user's call f(...)
        return node


def _recursive_call(expr) -> bool:
    return (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)
            and getattr(expr.func, "recursive", False))

