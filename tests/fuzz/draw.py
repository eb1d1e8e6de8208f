"""The one source of randomness of the generator, with two backends.

The generator asks only for integers (`Draw.integer`), and derives choices,
weighted choices and coin flips from them. Every derived draw is arranged so
that the integer shrinking towards its lower bound (what hypothesis does)
picks the first, simplest option and turns features off.

- `HypothesisDraw(draw)` for pytest, inside `@st.composite`: failures shrink.
- `RandomDraw(random.Random(seed))` for the long campaign: fast and free of
  hypothesis' example database and health checks.
"""
from __future__ import annotations

import random


class Draw:
    def integer(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def choice(self, seq):
        seq = list(seq)
        return seq[self.integer(0, len(seq) - 1)]

    def weighted(self, pairs):
        """One value of `[(weight, value), ...]` (integer weights; zero weights are skipped)."""
        pairs = [(w, v) for w, v in pairs if w > 0]
        k = self.integer(0, sum(w for w, _ in pairs) - 1)
        for w, v in pairs:
            if k < w:
                return v
            k -= w
        raise AssertionError("unreachable")

    def chance(self, percent: int) -> bool:
        """True with probability percent/100; the shrunk draw (0) is False."""
        return self.integer(0, 99) >= 100 - percent


class RandomDraw(Draw):
    def __init__(self, rng: random.Random):
        self.rng = rng

    def integer(self, lo, hi):
        return self.rng.randint(lo, hi)


class HypothesisDraw(Draw):
    def __init__(self, draw):
        from hypothesis import strategies as st
        self._draw, self._st = draw, st

    def integer(self, lo, hi):
        return self._draw(self._st.integers(lo, hi))
