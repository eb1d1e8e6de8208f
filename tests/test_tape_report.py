"""The tape report (`g.tape_report(*args)`, `python -m srcgrad tape`): what it says per site,
and that its total is the memory the gradient really takes, with numba and without."""
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import srcgrad
from srcgrad.__main__ import main
from gradcheck import check_gradient


def stencil(u, n):
    for step in range(n):
        u = u + 0.1 * np.sin(np.roll(u, 1) - u)
    return np.sum(u ** 2)


def newton(x, tol):
    y = x
    while np.max(np.abs(y * y - x)) > tol:
        y = 0.5 * (y + x / y)
    return np.sum(y)


def damped(x, n):
    for i in range(n):
        x = np.sin(x)
        if np.sum(x) < 1e-3:
            break
    return np.sum(x)


def chain(x, n):
    y = np.zeros(n)
    for i in range(n):
        y[i] = np.sin(x[i]) * y[i - 1] + 1.0
    return np.sum(y * y)


def mlp_steps(params, x, n):
    for step in range(n):
        x = np.tanh(params["W"] @ x + params["b"])
    return np.sum(x)


LINE = {name: func.__code__.co_firstlineno for name, func in
        [("stencil", stencil), ("newton", newton), ("damped", damped), ("chain", chain),
         ("mlp_steps", mlp_steps)]}
GRADIENTS = {jit: {f.__name__: srcgrad.grad(f, jit=jit) for f in (stencil, damped)}
             for jit in (True, False)}


def _rows(report):
    return [(s.where, s.value, s.dtype, s.shape, s.count, s.per_iteration, s.total)
            for s in report.sites]


def test_sites_are_the_users_lines_values_and_bytes():
    u = np.linspace(0.0, 1.0, 50)
    report = GRADIENTS[True]["stencil"].tape_report(u, 30)
    line = f"test_tape_report.py:{LINE['stencil'] + 2}"
    assert _rows(report) == [(line, "np.roll(u, 1)", "float64", "(50,)", 30, 400, 12000),
                             (line, "u", "float64", "(50,)", 30, 400, 12000)]
    loop, = report.loops
    assert (loop.where, loop.statement, loop.iterations, loop.per_iteration) == (
        f"test_tape_report.py:{LINE['stencil'] + 1}", "for step in range(n)", 30, 800)
    assert report.total == report.peak == 24000 and report.snapshots == 0
    assert _rows(GRADIENTS[False]["stencil"].tape_report(u, 30)) == _rows(report)
    text = str(report)
    assert "np.roll(u, 1)" in text and "total 24.0 kB; peak 24.0 kB" in text
    assert "30 iterations, 800 B per iteration" in text


def test_a_while_loop_counts_the_iterations_it_takes():
    x = np.linspace(1.0, 4.0, 20)
    y, steps = x, 0
    while np.max(np.abs(y * y - x)) > 1e-12:
        y, steps = 0.5 * (y + x / y), steps + 1
    report = srcgrad.grad(newton, jit=False).tape_report(x, 1e-12)
    by_value = {s.value: s for s in report.sites}
    # x / y is computed again from the recorded y (recompute.py), not recorded
    assert set(by_value) == {"y"} and report.loops[0].iterations == steps
    assert by_value["y"].count == steps
    assert by_value["y"].total == (steps - 1) * x.nbytes  # the first y is x: held already


def test_writes_into_an_array_and_the_users_arrays_untouched():
    x = np.linspace(0.1, 0.9, 6)
    before = x.copy()
    report = srcgrad.grad(chain, jit=False).tape_report(x, 6)
    assert np.array_equal(x, before)
    assert [(s.value, s.count, s.total) for s in report.sites] == [
        ("np.sin(x[i])", 6, 48), ("y[i - 1]", 6, 48)]
    check_gradient(chain, (x, 6), jit=False)  # the report leaves the gradient as it was


def test_structured_arguments_and_value_and_grad():
    rng = np.random.default_rng(0)
    params = {"W": rng.normal(size=(4, 4)) * 0.5, "b": np.zeros(4)}
    report = srcgrad.value_and_grad(mlp_steps, jit=False).tape_report(params, np.ones(4), 7)
    assert [(s.value, s.count, s.total) for s in report.sites] == [("x", 7, 7 * 32)]
    assert report.loops[0].iterations == 7


MEASURED = {  # a tape's total is measured against the peak of a call at these arguments
    "preallocated": ("stencil", lambda: (np.linspace(0.0, 1.0, 1000), 4500)),  # 2 x 36 MB
    "stack": ("damped", lambda: (np.linspace(0.5, 1.5, 1000), 4000)),  # 4,000 arrays, 32 MB
}
_IN_A_FRESH_PROCESS = """
import ctypes, sys
sys.path.insert(0, {tests!r})
import test_tape_report as t
name, make_args = t.MEASURED[{case!r}]
gradient, args = t.GRADIENTS[True][name], make_args()
gradient(args[0], 2)  # compiled before measuring
ctypes.CDLL("libc.so.6").mallopt(-3, 4096)  # M_MMAP_THRESHOLD: arrays on fresh pages
print(t.peak_resident(gradient, args))
"""


def peak_resident(gradient, args):
    """Bytes by which a call raises the process's peak resident memory (Linux): numba's
    allocations are not traced by tracemalloc."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # the peak resident set starts again from the current one
    before = _status("VmRSS")
    gradient(*args)
    return _status("VmHWM") - before


def _status(field):
    with open("/proc/self/status") as status:
        line = next(row for row in status if row.startswith(field))
    return int(line.split()[1]) * 1024


def _measured_peak(case, jit):
    """Without numba, tracemalloc's peak during the call; with numba, the peak resident
    memory of the call in a fresh process, where no memory another test freed is reused."""
    name, make_args = MEASURED[case]
    if jit:
        if not (sys.platform.startswith("linux") and os.access("/proc/self/clear_refs", os.W_OK)):
            pytest.skip("measuring numba's memory needs Linux's /proc/self/clear_refs")
        code = _IN_A_FRESH_PROCESS.format(tests=str(Path(__file__).parent), case=case)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        return int(done.stdout.split()[-1])
    gradient, args = GRADIENTS[False][name], make_args()
    tracemalloc.start()
    try:
        gradient(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("case", list(MEASURED))
def test_the_total_is_the_memory_the_gradient_takes(jit, case):
    name, make_args = MEASURED[case]
    report = GRADIENTS[jit][name].tape_report(*make_args())
    assert report.total == report.peak > 30e6
    measured = _measured_peak(case, jit)
    assert 0.8 * report.total < measured < 1.25 * report.total, (measured, str(report))


def test_the_command_line_prints_the_report(tmp_path, capsys):
    source = tmp_path / "tape_cli_model.py"
    source.write_text("import numpy as np\n\n\ndef walk(x, n):\n    for i in range(n):\n"
                      "        x = np.cos(x)\n    return np.sum(x)\n")
    assert main(["tape", f"{source}:walk", "--args", "np.ones(10), 5"]) == 0
    out = capsys.readouterr().out
    assert "tape of the gradient of walk wrt x, at x=float64[10], n=5:" in out
    assert "tape_cli_model.py:6  x      float64  (10,)      5" in out
    assert "total 400 B; peak 400 B" in out
    with pytest.raises(SystemExit, match="give the arguments with --args"):
        main(["tape", f"{source}:walk"])
    with pytest.raises(SystemExit, match="did not evaluate"):
        main(["tape", f"{source}:walk", "--args", "np.ones(10),, 5"])


def test_checkpoint_snapshots_are_counted_where_the_forward_sweep_holds_them():
    from srcgrad.api.recording_census import snapshot_bytes
    held = {"_snap_u": [np.zeros(3), np.zeros(3)], "_snaps": np.zeros((4, 2)), "u": np.ones(9)}
    assert snapshot_bytes(held) == 48 + 64
