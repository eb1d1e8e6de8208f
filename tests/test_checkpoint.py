"""Checkpointed loops (issue 16): gradients equal to the unbounded ones and to finite
differences, the schedules against the binomial optimum, and bad input."""
import importlib.util
import pathlib
import re

import numpy as np
import pytest

import srcgrad
from srcgrad.runtime import checkpoints as C
from tests import checkpoint_models as M
from tests.gradcheck import numerical_grad

RNG = np.random.default_rng(16)
CASES = {  # model: (arguments, positions differentiated)
    "stencil": ((RNG.normal(size=6), 11), (0,)),
    "oscillator": ((RNG.normal(size=3), RNG.normal(size=3), 0.7, 30), (0, 1, 2)),
    "adaptive": ((RNG.normal(size=3), 0.8), (0, 1)),
    "early_exit": ((RNG.normal(size=3), 1.3), (0, 1)),
    "counted_break": ((RNG.normal(size=3), 40), (0,)),
    "trajectory": ((RNG.normal(size=4), 9), (0,)),
    "nested": ((RNG.normal(size=4), 0.6, 7), (0, 1)),
    "one_snapshot": ((0.3, 9), (0,)),
    "empty": ((RNG.normal(size=3), 0), (0,)),
    "appended": ((RNG.normal(size=3), 8), (0,)),  # to an empty list: numba cannot type it
    "appended_to_held": ((RNG.normal(size=3), 8), (0,)),
    "dead_loop": ((RNG.normal(size=3), 4), (0,)),
    "counter_state": ((RNG.normal(size=3), 4), (0,)),
    "reads_a_list": ((RNG.normal(size=3), 5), (0,)),
    "names_reused": ((RNG.normal(size=3), 5), (0,)),
}
# numba compiles dominate the run: the rest under Python only
JITTED = ("stencil", "adaptive", "early_exit", "trajectory", "appended_to_held", "reads_a_list")


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """The models with the marker removed: the unbounded gradients to compare with."""
    source = pathlib.Path(M.__file__).read_text()
    source = re.sub(r"srcgrad\.checkpointed\((.*), snapshots=\w+\)", r"\1", source)
    path = tmp_path_factory.mktemp("plain") / "checkpoint_plain.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("checkpoint_plain", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases():
    for model in CASES:
        yield pytest.param(model, False, id=f"{model}-python")
        if model in JITTED:
            yield pytest.param(model, True, id=f"{model}-numba")


@pytest.mark.parametrize("model, jit", list(_cases()))
def test_equals_unbounded_and_finite_differences(model, jit, plain):
    args, wrt = CASES[model]
    got = srcgrad.grad(getattr(M, model), wrt=wrt, jit=jit)(*args)
    want = srcgrad.grad(getattr(plain, model), wrt=wrt, jit=jit)(*args)
    fd = numerical_grad(getattr(plain, model), args, wrt)
    for g, w, f in zip(got, want, fd):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g, f, rtol=1e-5, atol=1e-6)


def test_generated_code_calls_the_drivers():
    source = srcgrad.grad(M.stencil).source
    for name in ("stencil__loop1_forward", "stencil__loop1_backward", "stencil__loop1_step",
                 "stencil__loop1_step_vjp", "revolve_plan(_steps, 3)"):
        assert name in source
    assert "# checkpointed backward sweep of: for step in srcgrad.checkpointed" in source
    assert "online_plan(4)" in srcgrad.grad(M.adaptive).source


def test_composes_with_the_rest_of_the_api(plain):
    u = RNG.normal(size=5)
    value, g = srcgrad.value_and_grad(M.stencil, jit=False)(u, 6)
    assert value == pytest.approx(M.stencil(u, 6))
    _, pullback = srcgrad.vjp(M.stencil, u, 6, jit=False)
    np.testing.assert_allclose(pullback(2.0)[0], 2.0 * g, rtol=1e-12)
    x = srcgrad.Variable(u.copy())
    with srcgrad.GradientTape() as tape:
        y = M.stencil(x, 6)
    np.testing.assert_allclose(tape.gradient(y, x), g, rtol=1e-12)
    jac = srcgrad.jacrev(M.rolled, jit=False)(u[:3], 5)
    np.testing.assert_allclose(jac, srcgrad.jacfwd(plain.rolled, jit=False)(u[:3], 5),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(srcgrad.grad(M.calls_checkpointed, jit=False)(u, 6), 2.0 * g)
    t = RNG.normal(size=5)  # forward mode has no tape: the mark changes nothing
    _, tangent = srcgrad.jvp(M.stencil, (u, 6), (t, 0), jit=False)
    assert tangent == pytest.approx(float(np.dot(g, t)), rel=1e-12)


def test_custom_rule_inside_a_step(plain):
    x = RNG.normal(size=4)
    got = srcgrad.grad(M.with_custom_rule, jit=False)(x, 5)
    np.testing.assert_allclose(got, srcgrad.grad(plain.with_custom_rule, jit=False)(x, 5),
                               rtol=1e-12)


@pytest.mark.parametrize("s", [1, 2, 3, 5, 10])
def test_revolve_is_binomially_optimal(s):
    cs = pytest.importorskip("checkpoint_schedules", reason="checkpoint-schedules not installed")
    for n in (1, 2, 3, 5, 10, 37, 100, 400):
        advanced, slots = _reverse(n, s, online=False)
        assert slots <= s
        # Beyond the one pass the forward sweep makes (the code after the loop needs the
        # final state), no more steps than the optimal binomial schedule takes.
        assert advanced - n <= cs.optimal_steps_binomial(n, s)


@pytest.mark.parametrize("s", [1, 2, 3, 8])
def test_online_schedule_reverses_any_length(s):
    for n in (0, 1, 2, 7, 64, 333):
        _, slots = _reverse(n, s, online=True)
        assert slots <= s


def _reverse(n, s, online):
    """Run a plan on a counter as state: (steps taken, snapshot slots used); checks that
    every step is reversed once, last first, from the right state."""
    plan = C.online_plan(s) if online else C.revolve_plan(n, s)
    slots, state, taken = {}, 0, 0
    for k in range(n):
        if C.snapshot_due(plan, k):
            slots[C.take_slot(plan, k)] = state
        state, taken = state + 1, taken + 1
    C.finish_plan(plan, n)
    reversed_ = []
    while True:
        kind, arg = C.next_action(plan)
        if kind == C.DONE:
            break
        if kind == C.ADVANCE:
            state, taken = state + arg, taken + arg
        elif kind == C.KEEP:
            slots[arg] = state
        elif kind == C.RESTORE:
            state = slots[arg]
            assert state == C.plan_position(plan)
        else:
            assert kind == C.STEP and state == arg
            reversed_.append(arg)
            state, taken = None, taken + 1
    assert reversed_ == list(range(n - 1, -1, -1))
    return taken, len(slots)


def test_plain_python_runs_unchanged(plain):
    u = RNG.normal(size=4)
    assert M.stencil(u, 3) == plain.stencil(u, 3)
    assert M.adaptive(u, 0.5) == plain.adaptive(u, 0.5)
    assert list(srcgrad.checkpointed(range(3), snapshots=2)) == [0, 1, 2]
    assert srcgrad.checkpointed(np.float64(1.0) > 0, snapshots=2) is True
    with pytest.raises(ValueError, match="at least 1"):
        srcgrad.checkpointed(range(3), snapshots=0)
    with pytest.raises(TypeError, match="whole number"):
        srcgrad.checkpointed(range(3), snapshots=2.5)
    with pytest.raises(TypeError, match="range"):
        srcgrad.checkpointed([1, 2], snapshots=2)


@pytest.mark.parametrize("model, message", [
    ("bad_zero", "snapshots=0 is not supported"),
    ("bad_fraction", "not a whole number"),
    ("bad_sequence", "around something other than range"),
    ("bad_outside", "outside a loop header"),
    ("bad_list", "reads the list 'hs' or appends to it in a branch"),
    ("bad_unset", "state 'prev' has no value before the loop"),
    ("bad_nested", "inside another loop or a branch"),
    ("bad_after_return", "after a `return` inside a loop or branch"),
    ("bad_return", "a `return` inside a checkpointed loop"),
    ("bad_variable_after", "reading the variable 'i' of a checkpointed loop after it"),
])
def test_bad_input_names_the_line(model, message):
    with pytest.raises(srcgrad.SrcgradSyntaxError, match=message) as info:
        srcgrad.grad(getattr(M, model))
    assert "checkpoint_models.py" in str(info.value)


@pytest.mark.parametrize("jit", [False, True])
def test_memory_limit_checkpoints_the_outermost_loops(jit):
    u = RNG.normal(size=10)
    bounded = srcgrad.grad(M.two_loops, memory_limit="2kB", jit=jit)
    assert "two_loops__loop1_forward" in bounded.source
    assert "two_loops__loop2_forward" in bounded.source  # the while loop too
    assert "budget_snapshots(2000, 2" in bounded.source
    np.testing.assert_allclose(bounded(u, 30), srcgrad.grad(M.two_loops, jit=jit)(u, 30),
                               rtol=1e-12, atol=1e-14)
    with pytest.raises(srcgrad.SrcgradError, match="memory_limit must be at least 160 bytes"):
        srcgrad.grad(M.two_loops, memory_limit=100, jit=False)(u, 30)


def test_memory_limit_sizes():
    from srcgrad.api.memory import parse_memory_limit
    assert parse_memory_limit("200MB") == 200 * 10 ** 6
    assert parse_memory_limit("1.5 GiB") == int(1.5 * 2 ** 30)
    assert parse_memory_limit(4096) == 4096
    for bad in ("lots", "12 parsecs", 0, True):
        with pytest.raises((ValueError, TypeError), match="memory_limit"):
            parse_memory_limit(bad)


def test_tape_report_counts_snapshots_and_a_step():
    report = srcgrad.grad(M.stencil, jit=False).tape_report(np.ones(6), 11)
    assert report.total == 0 and report.snapshots == 3 * 6 * 8  # 3 snapshots of u
    report = srcgrad.grad(M.nested, wrt=(0, 1), jit=False).tape_report(np.ones(4), 0.6, 7)
    assert report.snapshots == 2 * 4 * 8
    (step,) = report.steps  # the inner loop's tape, 3 iterations recording u and a temporary
    assert step.where.endswith("checkpoint_models.py:75") and step.total == 192
    assert "one step records 192 B while it is reversed" in str(report)


def test_memory_limit_records_a_loop_after_an_early_return_in_full():
    x = RNG.normal(size=3)
    with pytest.warns(srcgrad.SrcgradWarning, match="recorded in full.*after a `return`"):
        bounded = srcgrad.grad(M.returns_then_loops, memory_limit="1kB", jit=False)
    assert "returns_then_loops__loop1_forward" in bounded.source  # the first loop
    np.testing.assert_allclose(bounded(x, 4), srcgrad.grad(M.returns_then_loops, jit=False)(x, 4),
                               rtol=1e-12)
