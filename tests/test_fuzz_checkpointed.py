"""A smoke slice of the checkpointed-loop fuzz mode (tests/fuzz/checkpointed.py): a few
drawn programs with their top-level loops marked, whose gradients must match the
unmarked programs' and finite differences. The long run is
`python -m tests.fuzz.campaign --checkpoint` (about 1 s a program)."""
import pytest

from tests.fuzz import checkpointed


def test_marks_the_top_level_loops():
    program = checkpointed.draw("smoke", 0)
    assert "srcgrad.checkpointed(" in program.source
    assert "srcgrad.checkpointed(" not in program.plain
    assert program.source.count("\n") == program.plain.count("\n") + 1  # `import srcgrad`


@pytest.mark.parametrize("k", range(6))
def test_checkpointed_programs(k):
    program = checkpointed.draw("smoke", k)
    result = checkpointed.run(program.source, program.fname, program.args, program.wrt,
                              jit=False, plain=program.plain)
    assert not result.failed, f"{result.outcome}: {result.message}\n{program!r}\n{result.details}"
