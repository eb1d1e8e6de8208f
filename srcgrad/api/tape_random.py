"""Random draws in a tape's block: its gradient sees the numbers the block drew.

`tape.gradient` runs the block's code again (gradient_tape.py), so a dropout mask drawn
in the block would be drawn anew and the gradient would be another mask's. A NumPy
Generator (or RandomState) the block reads by name is set back, for that run, to the
state it had when the block started, and afterwards to the state the block left it in:
the run draws what the block drew, and the caller's later draws are unchanged. numba's
compiled code draws from a Generator's own state, so this holds compiled or not.
NumPy's global functions (`np.random.uniform(...)`) draw from numba's separate state in
compiled code, so a block calling them is refused, with the fix.
"""
from __future__ import annotations

import gast
import numpy as np

from ..errors import SrcgradError
from ..syntax import dotted_name, walk

_RANDOM = (np.random.Generator, np.random.RandomState)


class Draws:
    """The states of the random generators a block reads, when it started."""

    def __init__(self, reads, values):
        held = (values.get(name) for name in reads)
        self.states = [(v, _state(v)) for v in held if isinstance(v, _RANDOM)]

    def replay(self, run):
        """`run()` with each generator in its state at the block's start; afterwards each
        is back in the state it was in before the call."""
        if not self.states:
            return run()
        now = [(g, _state(g)) for g, _ in self.states]
        for g, state in self.states:
            _set(g, state)
        try:
            return run()
        finally:
            for g, state in now:
                _set(g, state)


def _state(g):
    return g.bit_generator.state if isinstance(g, np.random.Generator) else g.get_state()


def _set(g, state) -> None:
    if isinstance(g, np.random.Generator):
        g.bit_generator.state = state
    else:
        g.set_state(state)


def refuse_global_draws(block) -> None:
    """A SrcgradError at the first call of NumPy's global random functions in the block."""
    for node in (n for s in block.statements for n in walk(s)):
        if not isinstance(node, gast.Call):
            continue
        parts = dotted_name(node.func).split(".")
        if len(parts) >= 3 and parts[1] == "random" and block.namespace.get(parts[0]) is np:
            raise SrcgradError(
                f"srcgrad.GradientTape: the block at {block.filename}:{block.start} draws "
                f"random numbers with {'.'.join(parts)}(...) (line {node.lineno}); "
                "tape.gradient runs the block's code again, where NumPy's global generator "
                "would draw other numbers. Draw from a Generator the block reads by name "
                "(rng = np.random.default_rng(seed) before the block; rng.uniform(...) in it), "
                "or draw before the block and read the result in it.")
