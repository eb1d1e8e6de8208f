"""A slice of the varying-shapes fuzz campaign (tests/fuzz/varying.py) in the default run:
loops with slices that follow the loop, scratch arrays sized by it, shrinking carried values,
numba off, against central finite differences. The full campaign is
`python -m tests.fuzz.varying --programs 400`."""
import random

import pytest

from fuzz.varying import check, program

_RNG = random.Random(20261201)
PROGRAMS = [program(_RNG) for _ in range(15)]


@pytest.mark.parametrize("number", range(len(PROGRAMS)))
def test_varying_program(number, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    outcome = check(PROGRAMS[number], False, str(tmp_path), number)
    assert outcome in ("ok", "refused"), (PROGRAMS[number], outcome)
