"""A fixed-seed slice of the program fuzzer (tests/fuzz): random NumPy programs whose
srcgrad value and gradient must match NumPy, finite differences and autograd.

Derandomized, so every run draws the same programs. A wrong value, a wrong
gradient or a crash fails, and hypothesis shrinks the program to a small one
whose source, arguments and numbers are in the failure message; kinks, clear
srcgrad errors and invalid programs pass. About 25 s when nothing fails (600
programs in plain Python, 8 compiled by numba); a failure adds the shrinking,
up to a few minutes. The long campaign is `python -m tests.fuzz.campaign`
(see tests/fuzz/campaign.py).
"""
from hypothesis import HealthCheck, given, settings

from fuzz.oracle import run_program
from fuzz.programs import programs

FIXED = dict(derandomize=True, deadline=None, database=None, print_blob=False,
             suppress_health_check=list(HealthCheck))


def check(program, jit):
    result = run_program(program, jit=jit)
    assert not result.failed, (
        f"{result.outcome}: {result.message}\n{program!r}\n{result.details}\n"
        f"reproduce: srcgrad.value_and_grad({program.fname}, wrt={program.wrt}, jit={jit})"
        f"({program.args_source()})")


@settings(max_examples=600, **FIXED)
@given(programs())
def test_random_programs_python(program):
    check(program, jit=False)


@settings(max_examples=8, **FIXED)
@given(programs())
def test_random_programs_numba(program):
    check(program, jit=True)
