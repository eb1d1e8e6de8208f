"""A fixed-seed slice of tests/fuzz/aliases.py (second names, swaps, views, `out=` and
`np.copyto` with writes through either name), as plain Python: each program gives
NumPy's value and central differences, or raises that a write would be seen through
shared memory (33 and 7 of these 40). The long campaign (`python -m tests.fuzz.aliases`)
also compiles a quarter of its programs."""
import random
import tempfile

import numpy as np
import pytest

from fuzz.aliases import check, program
from fuzz.targeted import load

SEED, COUNT = 11, 40


@pytest.fixture(scope="module")
def folder():
    return tempfile.mkdtemp(prefix="srcgrad-alias-slice-")


@pytest.mark.parametrize("k", range(COUNT))
def test_alias_program(k, folder):
    rng = random.Random(SEED * 1000 + k)
    source = program(rng)
    module, path = load(folder, f"alias_slice_{k}", source)
    x = np.random.default_rng(k).uniform(-0.9, 0.9, 4)
    outcome = check(module.f, x, False, path)
    assert outcome in ("ok", "refused", "invalid"), f"{outcome}\n{source}"
