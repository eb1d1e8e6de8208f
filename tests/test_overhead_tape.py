"""The GradientTape's per-step path (issue 14): what it caches per code location and how
it learns which lines ran (api/executed_lines.py, api/tape_facts.py) keep TensorFlow's
semantics. No timings here: bench/overhead.py measures them.
"""
import sys

import numpy as np
import pytest

import srcgrad
from srcgrad.api import executed_lines

W = srcgrad.Variable(np.array([0.5, -1.0]), name="W")
OFFSET = np.array([1.0, 2.0])


def model(x):
    return np.sum((x * W + OFFSET) ** 2)


def loss_of(w, x):
    return np.sum((x * w + OFFSET) ** 2)


def straight_step(x):
    with srcgrad.GradientTape() as tape:
        loss = model(x)
    return tape, loss


def test_a_straight_block_is_not_traced_and_matches_grad():
    by_grad = srcgrad.grad(loss_of)
    before = sys.gettrace()
    for k in range(3):  # the same code location: one program, reused
        x = np.array([1.0, 2.0]) * (k + 1)
        tape, loss = straight_step(x)
        assert tape._executed is None  # no line events: every line of a straight block ran
        assert sys.gettrace() is before
        np.testing.assert_allclose(tape.gradient(loss, W), by_grad(W.numpy(), x))


def rebinding_step(x):
    with srcgrad.GradientTape() as tape:
        loss = model(x)
    return tape.gradient(loss, W)


def test_a_rebound_global_variable_is_read_afresh(monkeypatch):
    x = np.array([1.0, 2.0])
    first = rebinding_step(x)
    monkeypatch.setitem(globals(), "W", srcgrad.Variable(np.array([2.0, 3.0])))
    second = rebinding_step(x)
    np.testing.assert_allclose(second, srcgrad.grad(loss_of)(np.array([2.0, 3.0]), x))
    assert not np.allclose(first, second)


def branchy(x, v0, v1):
    with srcgrad.GradientTape() as tape:
        if x > 0.0:
            result = v0 * 2.0
        else:
            result = v1 ** 2
    return tape.gradient(result, [v0, v1])


def test_branches_use_the_lines_that_ran_at_every_step():
    v0, v1 = srcgrad.Variable(2.0), srcgrad.Variable(3.0)
    for _ in range(2):
        assert branchy(1.0, v0, v1) == [2.0, None]
        assert branchy(-1.0, v0, v1) == [None, 6.0]


def test_an_existing_tracer_is_left_alone_and_sees_the_block():
    events = []

    def tracer(frame, event, arg):
        if frame.f_code is branchy.__code__ and event == "line":
            events.append(frame.f_lineno)
        return tracer
    v0, v1 = srcgrad.Variable(2.0), srcgrad.Variable(3.0)
    sys.settrace(tracer)
    try:
        result = branchy(1.0, v0, v1)
        still = sys.gettrace()
    finally:
        sys.settrace(None)
    assert still is tracer
    assert result == [2.0, 0.0]  # under another tracer every line counts (NOTE [executed lines])
    first = branchy.__code__.co_firstlineno
    assert first + 3 in events  # the tracer saw the branch that ran


def raising(x, v0, v1):
    with srcgrad.GradientTape() as tape:
        y = v0 * x
        inverse = 1.0 / x
        y = y + v1 * inverse
    return tape, y


def test_a_block_left_by_an_exception_then_run_again():
    v0, v1 = srcgrad.Variable(2.0), srcgrad.Variable(3.0)
    with pytest.raises(ZeroDivisionError):
        raising(0.0, v0, v1)
    assert executed_lines._RECORDING == []  # nothing left recording
    tape, y = raising(2.0, v0, v1)
    assert tape.gradient(y, [v0, v1]) == [2.0, 0.5]


def exception_lines():
    v0, v1 = srcgrad.Variable(2.0), srcgrad.Variable(3.0)
    tape = srcgrad.GradientTape(persistent=True)
    y = None
    try:
        with tape:
            y = v0 * 2.0
            boom = v1 * {}["missing"]  # noqa: F841  raises: the next line does not run
            y = y + v1
    except KeyError:
        pass
    return tape, y, v0, v1


def test_lines_after_an_exception_did_not_run():
    tape, y, v0, v1 = exception_lines()
    assert tape._executed is not None
    start = tape._block.start
    assert start + 1 in tape._executed and start + 3 not in tape._executed


def nested_in_one_frame(v):
    with srcgrad.GradientTape() as outer:
        with srcgrad.GradientTape() as inner:
            if v > 0.0:
                y = v * v
            else:
                y = v
        dy = inner.gradient(y, v)
    return dy, outer


def test_two_tapes_in_one_frame():
    v = srcgrad.Variable(3.0)
    dy, outer = nested_in_one_frame(v)
    assert dy == 6.0
    assert executed_lines._RECORDING == []
    if sys.version_info >= (3, 12):
        assert executed_lines._CODES == {}  # line events switched off again


@pytest.mark.skipif(sys.version_info < (3, 12), reason="sys.monitoring is Python 3.12+")
def test_another_monitoring_tool_keeps_its_events():
    monitoring = sys.monitoring
    tool = next(t for t in range(6) if monitoring.get_tool(t) is None)
    seen = []
    monitoring.use_tool_id(tool, "test")
    try:
        monitoring.register_callback(tool, monitoring.events.LINE,
                                     lambda code, line: seen.append(line))
        monitoring.set_local_events(tool, branchy.__code__, monitoring.events.LINE)
        v0, v1 = srcgrad.Variable(2.0), srcgrad.Variable(3.0)
        assert branchy(-1.0, v0, v1) == [None, 6.0]
        assert branchy.__code__.co_firstlineno + 5 in seen
    finally:
        monitoring.set_local_events(tool, branchy.__code__, 0)
        monitoring.register_callback(tool, monitoring.events.LINE, None)
        monitoring.free_tool_id(tool)


def starts_a_tracer(x, v, tracer):
    with srcgrad.GradientTape():
        if x > 0.0:
            v = v * 2.0
        sys.settrace(tracer)  # a debugger started inside the block
    return sys.gettrace()


def test_a_tracer_started_inside_a_block_stays():
    def tracer(frame, event, arg):
        return None
    try:
        assert starts_a_tracer(1.0, 2.0, tracer) is tracer
    finally:
        sys.settrace(None)
