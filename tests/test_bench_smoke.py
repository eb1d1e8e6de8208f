"""Smoke test of the benchmark problems (bench/): srcgrad's gradient of each problem's
natural form at a tiny size matches a reference, and the GradBench adapter answers one
exchange. Runs the generated code as Python (jit=False) to stay fast; needs neither
JAX nor PyTorch."""
import io
import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import srcgrad  # noqa: E402
from bench.common import TOLERANCE, fd_gradient, flat, mismatch  # noqa: E402
from bench.problems import ba, det, gmm, llsq, lse, lstm, ode  # noqa: E402


def check(got, expected):
    assert np.max(mismatch(got, expected)) <= TOLERANCE


@pytest.mark.parametrize("problem, size, func, args", [
    (lse, {"n": 20}, lse.lse, lambda d: (d["x"],)),
    (llsq, {"n": 9, "m": 4}, llsq.llsq, lambda d: (d["x"], d["n"])),
    (ode, {"n": 6, "s": 3}, ode.ode_last, lambda d: (d["x"], d["s"])),
    (det, {"ell": 3}, det.det, lambda d: (d["A"],)),
])
def test_gradient_matches_reference(problem, size, func, args):
    data = problem.generate(size)
    expected, coords, _ = problem.reference(data)
    assert coords is None
    check(flat(srcgrad.grad(func, jit=False)(*args(data))), expected)


def test_gmm_matches_finite_differences():
    data = gmm.generate({"d": 3, "k": 2, "n": 4})
    args = [data[a] for a in gmm.ARGS]
    got = flat(*srcgrad.grad(gmm.gmm_objective, wrt=(0, 1, 2, 3), jit=False)(*args))
    check(got, fd_gradient(gmm.gmm_objective, args, (0, 1, 2, 3)))


def test_lstm_matches_finite_differences():
    data = lstm.generate({"l": 1, "c": 4})
    args = [data[a] for a in lstm.ARGS]
    got = flat(*srcgrad.grad(lstm.lstm_objective, wrt=(0, 1), jit=False)(*args))
    check(got, fd_gradient(lstm.lstm_objective, args, (0, 1)))


def test_ba_matches_finite_differences():
    data = ba.generate({"n": 2, "m": 3, "p": 4})
    obs = data["obs"]
    args = [data["cams"][obs[:, 0]], data["X"][obs[:, 1]], data["w"], data["feats"], 0.0, 1.0]
    got = flat(*srcgrad.grad(ba.ba_weighted, wrt=(0, 1, 2), jit=False)(*args))
    check(got, fd_gradient(ba.ba_weighted, args, (0, 1, 2)))


def test_gradbench_adapter_exchange():
    from bench.gradbench import serve
    lines = [{"id": 0, "kind": "start", "eval": "hello"},
             {"id": 1, "kind": "define", "module": "hello"},
             {"id": 2, "kind": "evaluate", "module": "hello", "function": "double",
              "input": 3.0},
             {"id": 3, "kind": "analysis", "of": 2, "valid": True},
             {"id": 4, "kind": "evaluate", "module": "nope", "function": "x", "input": 1},
             {"id": 5, "kind": "end"}]
    out = io.StringIO()
    serve(io.StringIO("".join(json.dumps(m) + "\n" for m in lines)), out)
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["id"] for r in replies] == [0, 1, 2, 3, 4]
    assert replies[0]["tool"] == "srcgrad" and replies[1]["success"]
    assert replies[2]["success"] and replies[2]["output"] == 6.0
    assert [t["name"] for t in replies[2]["timings"]] == ["evaluate"]
    assert replies[4]["success"] is False and "nope" in replies[4]["error"]
