"""Argument samples for the registry sweep (tests/test_rules.py) shared by the rule modules:
arrays drawn from [-2, 2) in a given shape, followed by fixed options (an axis, an offset)."""
from __future__ import annotations


def draw(rng, *shape):
    return rng.uniform(-2.0, 2.0, size=shape)


def case(*shape, options=()):
    """A sample function: one array of `shape`, then `options`; named like `3x4-1`."""
    def sample(rng):
        return (draw(rng, *shape), *options)
    sample.__name__ = "x".join(map(str, shape)) + "".join(f"-{o}" for o in options)
    return sample
