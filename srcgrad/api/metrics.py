"""Streaming metrics for training loops, as `tf.keras.metrics` has them."""
from __future__ import annotations

import numpy as np


class Mean:
    """The running mean of every value given so far (arrays count each element)."""

    def __init__(self, name: str = "mean"):
        self.name = name
        self.reset_state()

    def update_state(self, values, sample_weight=None):
        values = np.asarray(values, dtype=np.float64)
        weights = np.ones_like(values) if sample_weight is None else np.broadcast_to(
            np.asarray(sample_weight, dtype=np.float64), values.shape)
        self._total += float(np.sum(values * weights))
        self._count += float(np.sum(weights))
        return self.result()

    def __call__(self, values, sample_weight=None):
        return self.update_state(values, sample_weight)

    def result(self) -> float:
        return self._total / self._count if self._count else 0.0

    def reset_state(self) -> None:
        self._total = 0.0
        self._count = 0.0

    def __repr__(self):
        return f"<srcgrad.metrics.Mean {self.name!r} result={self.result():.6g}>"
