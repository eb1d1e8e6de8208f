"""A campaign of scratch arrays filled element by element at every step, and of arrays
recorded as they are made: the shapes transforms/dead_stores.py, tape_rows.py,
first_writes.py, next_rows.py and coalesce.py rewrite.

    python -m tests.fuzz.scratch [--programs 100] [--seed 1]

Each program `f(x, s)` (x 1-d, 5 to 8 elements; s steps) carries a state y through a
loop over steps. Each step fills one or two scratch arrays z (made by `np.empty`,
`np.zeros` or as a copy of y) by an element loop over `range(1, n)`, `range(n)`,
`range(n - 1)`, a descending range or `range(-1, n - 1)` (whose counters -1 and n - 1
name one element; the slots a range leaves are written before it), reading `x[i]`,
neighbours of y and sometimes the previous element of z; some write a constant slot
before the loop (inside or outside the loop's range) or after it, or write every element
again in a second loop reading the first. The step then makes stage arrays from y and z
(some written at a slot after they are made, some read at shifted slots by an element
loop, in the step or in a helper, as ode's right-hand side reads its stages: `rhs` reads
y[i - 1], `rhs_up` y[i + 1], `rhs_skip` skips some slots) and
updates y through `sin`, `tanh` or products, so that the backward sweep reads them. It
returns a sum of squares.

Each gradient (wrt x) must run compiled (SRCGRAD_LOOPS=strict, backend numba), equal the
gradient of the generated function itself with compiled forms off to the last bit, and
central differences to 1e-5 (targeted.exact_failure). The summary says how many stores
dead_stores.py removed, how many arrays tape_rows.py filled in their tape's row, how
many fills first_writes.py replaced, how many states next_rows.py made in their tape's
next row and how many copies coalesce.py took out.
"""
from __future__ import annotations

import random
import sys
import tempfile

import numpy as np

from .targeted import arguments, counting, exact_failure, load

_MAKE = ["np.empty(n)", "np.zeros(n)", "y.copy()"]
_RANGES = [("range(1, n)", 1, "n - 1", True), ("range(n)", 0, "n - 1", True),
           ("range(n - 1)", 0, "n - 2", True), ("range(n - 1, 0, -1)", 1, "n - 1", False),
           ("range(n - 1, -1, -1)", 0, "n - 1", False), ("range(-1, n - 1)", -1, "n - 2", True)]


_RHS = '''def rhs(x, y):
    z = np.empty(x.shape[0])
    z[0] = x[0]
    for i in range(1, x.shape[0]):
        z[i] = x[i] * y[i - 1]
    return z


def rhs_up(x, y):
    n = x.shape[0]
    z = np.empty(n)
    z[n - 1] = x[n - 1]
    for i in range(n - 1):
        z[i] = x[i] * y[i + 1]
    return z


def rhs_skip(x, y):
    z = np.zeros(x.shape[0])
    for i in range(1, x.shape[0]):
        if x[i] > 0.5:
            continue
        z[i] = x[i] * y[i - 1]
    return z

'''


def _element(rng, low, high_off, ascending, name):
    """An expression of element i: x[i], y's neighbours where they exist, z[i - 1]."""
    terms = ["x[i]", "y[i]", "0.5 * x[i] * y[i]"]
    if low >= 1:
        terms.append("y[i - 1]")
    if high_off == "n - 2":
        terms.append("y[i + 1]")
    if ascending and low >= 1:
        terms.append(f"0.3 * {name}[i - 1]")
    a, b = rng.choice(terms), rng.choice(terms)
    return rng.choice([f"{a} * {b}", f"np.sin({a}) + {b}", f"{a} - 0.25 * {b}",
                       f"np.tanh({a}) * {b}"])


def _scratch(rng, name, lines):
    """Lines filling the scratch array `name`; what the step may read of it."""
    loop, low, high, ascending = rng.choice(_RANGES)
    lines.append(f"        {name} = {rng.choice(_MAKE)}")
    for slot, missing in (("0", low == 1), ("n - 1", high == "n - 2")):
        if missing:  # every element gets a value (np.empty leaves garbage)
            lines.append(f"        {name}[{slot}] = x[{slot}] * 0.5")
    if rng.random() < 0.5:
        slot = rng.choice([0, 1, 2])
        lines.append(f"        {name}[{slot}] = np.cos(x[{slot}]) * y[{slot}]")
    lines.append(f"        for i in {loop}:")
    lines.append(f"            {name}[i] = {_element(rng, low, high, ascending, name)}")
    extra = rng.random()
    if extra < 0.25:
        slot = rng.choice(["0", "n - 1", "2"])
        lines.append(f"        {name}[{slot}] = np.sin({name}[{slot}]) + x[{slot}]")
    elif extra < 0.45:
        lines.append("        for i in range(n):")
        lines.append(f"            {name}[i] = np.sin({name}[i]) * x[i] + {name}[i]")
    return name


def program(rng: random.Random) -> str:
    lines = ["import numpy as np", "", "", _RHS, "def f(x, s):", "    n = x.shape[0]",
             f"    y = {rng.choice(['np.zeros(n) + 0.1', 'x * 0.5', 'np.sin(x)'])}",
             "    h = 1.0 / s", "    for step in range(s):"]
    names = [_scratch(rng, "z", lines)]
    if rng.random() < 0.4:
        names.append(_scratch(rng, "u", lines))
    z = names[-1]
    stages = []
    for k in range(rng.randint(1, 3)):
        stage = f"a{k}"
        source = rng.choice([f"y + h * {z}", f"y + h * {names[0]} / 2.0",
                             f"{z} * 0.5 + x", f"y * {names[0]}"])
        lines.append(f"        {stage} = {source}")
        if rng.random() < 0.25:
            lines.append(f"        {stage}[{rng.choice([0, 1, 3])}] = 0.75 * x[1]")
        shifted = rng.random()
        if shifted < 0.3:  # read at shifted slots, as ode's right-hand side does
            lines += [f"        k{k} = np.empty(n)", f"        k{k}[0] = x[0]",
                      "        for i in range(1, n):",
                      f"            k{k}[i] = x[i] * {stage}[i - 1]"]
            stage = f"k{k}"
        elif shifted < 0.6:  # the same through a helper (inlined: its argument recorded)
            helper = rng.choice(["rhs", "rhs_up", "rhs_skip"])
            lines.append(f"        k{k} = {helper}(x, {stage} * 0.5 + y)")
            stage = f"k{k}"
        stages.append(stage)
    update = " + ".join(f"{rng.choice(['np.tanh', 'np.sin', ''])}({a}) * {z}" for a in stages)
    lines.append(f"        y = y + 0.3 * h * ({update})")
    lines.append("    return np.sum(y * y)")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    args = arguments(__doc__, argv, "scratch")
    from srcgrad.transforms import loops

    removed, rows = counting(loops, "dead_stores"), counting(loops, "tape_rows")
    firsts, nexts = counting(loops, "first_writes"), counting(loops, "next_rows")
    coalesced = counting(loops, "coalesce")
    folder, rng = tempfile.mkdtemp(prefix="srcgrad-scratch-src-"), random.Random(args.seed)
    bad = 0
    for k in range(args.programs):
        module, path = load(folder, f"scratch_{args.seed}_{k}", program(rng))
        draw = np.random.default_rng(k)
        n = int(draw.integers(5, 9))
        values = (draw.uniform(0.2, 0.9, n) * draw.choice([-1.0, 1.0], n),
                  int(draw.integers(1, 4)))
        failure = exact_failure(module.f, 0, values, path)
        if failure:
            bad += 1
            print(failure)
    print(f"{args.programs} programs, {bad} failing; {removed[0]} dead stores removed, "
          f"{rows[0]} arrays filled in their tape's row, {firsts[0]} fills replaced by "
          f"first stores, {nexts[0]} states made in their tape's next row, {coalesced[0]} "
          "copies coalesced")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
