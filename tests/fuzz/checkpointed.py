"""Checkpointed-loop fuzzing (issue 16): drawn programs with their loops marked.

`draw(seed, k)` draws program k as the campaign does (`random.Random(f"{seed}:{k}")`,
then `f"{seed}:{k}:cpJ"` for J = 1, 2, ... until `f` has a loop to mark) and marks each
`for ... in range(...)` and `while` among the top-level statements of `f`:
`srcgrad.checkpointed(range(...), snapshots=s)` / `while srcgrad.checkpointed(test,
snapshots=s):`, with s drawn from 1..4 per loop. The result is a `Program` whose
`source` is the marked module and `plain` the unmarked one (the same statements).

`run(source, fname, args, wrt, jit, plain=...)` runs the marked program through the usual
oracle (NumPy's value, finite differences, autograd) and then compares its gradient with
the unmarked program's srcgrad gradient (`RTOL`). Outcomes beyond the oracle's:

- `refused`: srcgrad refused the marked program with a clear error that the unmarked
  one does not give (the checkpointing refused it); the message says why.
- `unmarked_fails`: the marked program failed (or its gradient differs from the
  unmarked one's), and the unmarked program fails the oracle: not a finding about
  checkpointing (the message is the unmarked program's).
- `wrong_gradient` with "differs from the unbounded gradient": checkpointing changed
  the gradient.

    python -m tests.fuzz.campaign --checkpoint --programs 2000 --jit-fraction 0.1 --seed 0
"""
from __future__ import annotations

import copy
import random
import warnings

import numpy as np

import srcgrad

from . import oracle
from .programs import Program, random_program
from .tree import Call, For, Module, Num, While

RTOL = 1e-10  # the checkpointed gradient against the unbounded one (the same operations)
SNAPSHOTS = (1, 4)


class _Marked(Module):
    HEADER = "import numpy as np\nimport srcgrad\n"


def markable(stmt) -> bool:
    return isinstance(stmt, While) or (
        isinstance(stmt, For) and isinstance(stmt.iter, Call) and stmt.iter.func == "range")


def mark(program: Program, rng: random.Random) -> Program | None:
    """`program` with each top-level loop of its function marked; None if it has none."""
    module = copy.deepcopy(program.module)
    f = module.functions[-1]
    loops = [s for s in f.body if markable(s)]
    if not loops:
        return None
    for loop in loops:
        snapshots = [("snapshots", Num(rng.randint(*SNAPSHOTS)))]
        if isinstance(loop, For):
            loop.iter = Call("srcgrad.checkpointed", [loop.iter], snapshots)
        else:
            loop.test = Call("srcgrad.checkpointed", [loop.test], snapshots)
    marked = _Marked(module.functions)
    out = Program(marked, marked.source(), program.fname, program.params, program.args,
                  program.wrt)
    out.plain = program.source
    return out


def draw(seed, k) -> Program:
    """Program k of the campaign's seed with its loops marked (redrawn until it has one)."""
    rng = random.Random(f"{seed}:{k}:snapshots")
    attempt = 0
    while True:
        suffix = f":cp{attempt}" if attempt else ""
        marked = mark(random_program(random.Random(f"{seed}:{k}{suffix}")), rng)
        if marked is not None:
            return marked
        attempt += 1


def run(source, fname, args, wrt, jit=False, *, plain) -> oracle.Result:
    """The marked program under the oracle, then against the unmarked program's gradient."""
    result = oracle.run(source, fname, args, wrt, jit)
    if result.outcome == "invalid":
        return result
    if result.outcome not in ("ok", "kink"):
        unmarked = oracle.run(plain, fname, args, wrt, jit)
        if result.outcome == "clear_error":
            if unmarked.outcome != "clear_error":
                result.outcome = "refused"
        elif unmarked.failed:
            result.outcome, result.message = "unmarked_fails", (
                f"{unmarked.outcome}: {unmarked.message}")
        return result
    want = _unbounded(plain, fname, args, wrt, jit)
    if isinstance(want, str):
        return oracle.Result("crash", f"the unmarked program: {want}", result.details,
                             result.notes)
    for k, (g, w) in enumerate(zip(result.grads, want)):
        w = np.ravel(np.asarray(w, dtype=float))
        scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
        if not np.allclose(g, w, rtol=RTOL, atol=RTOL * scale):
            details = (f"{result.details}\ngradient {k}: checkpointed {oracle._fmt(g)}\n"
                       f"             unbounded    {oracle._fmt(w)}")
            unmarked = oracle.run(plain, fname, args, wrt, jit)  # the checkpointed one passed
            if unmarked.failed:
                return oracle.Result("unmarked_fails", f"{unmarked.outcome}: "
                                     f"{unmarked.message}", details, result.notes)
            return oracle.Result("wrong_gradient", "checkpointed gradient differs from the "
                                 "unbounded gradient", details, result.notes)
    return result


def _unbounded(plain, fname, args, wrt, jit):
    """The unmarked program's srcgrad gradients, or why there are none."""
    module, path = oracle.load(plain)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, grads = srcgrad.value_and_grad(getattr(module, fname), wrt=wrt, jit=jit)(
                *oracle._copy(args))
        return list(grads)
    except Exception as exc:
        return oracle._first_line(exc)
    finally:
        oracle.unload(module, path)
