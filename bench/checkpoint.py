"""Checkpointed loops (issue 16): memory and time of a long stencil's gradient.

    python -m bench.checkpoint [--state 1000] [--steps 100000] [--long 1000000]
                               [--snapshots 50] [--repeat 3]

A 1-d stencil with a `--state`-point state. Each measurement runs in a fresh process
(bench/measure.py: peak growth of the resident set during one gradient call; medians of
`--repeat` calls): the unbounded gradient and the checkpointed one at `--steps` steps
(both fit), the checkpointed one alone at `--long` steps (unbounded, it would record
about 8 KB per step); then a while loop whose trip count depends on the data, unbounded
and checkpointed (the online schedule). Reported: peak memory, time, the
checkpointed/unbounded time ratio, and the recompute factor (steps run in all, forward
sweep, recomputation and the recorded steps, per step of the loop). Results go to
bench/results/checkpoint.md.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys

import numpy as np

import srcgrad

SNAPSHOTS = 50


def heat(u, n):
    for step in range(n):
        lap = np.zeros_like(u)
        lap[1:-1] = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u = u + 0.1 * np.sin(lap)
    return np.sum(u * u)


def heat_checkpointed(u, n):
    for step in srcgrad.checkpointed(range(n), snapshots=SNAPSHOTS):
        lap = np.zeros_like(u)
        lap[1:-1] = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u = u + 0.1 * np.sin(lap)
    return np.sum(u * u)


def settle(u, rate):
    """A data-dependent while loop: explicit steps whose size depends on the state, until
    t = 1 (the trip count is known only at the end); checkpointed through memory_limit."""
    t = 0.0
    while t < 1.0:
        lap = np.zeros_like(u)
        lap[1:-1] = u[2:] - 2.0 * u[1:-1] + u[:-2]
        h = 1e-5 * (1.0 + 0.1 * np.tanh(np.sum(lap * lap)))
        u = u + h * rate * np.sin(lap)
        t = t + h
    return np.sum(u * u)


def recompute_factor(n: int, s: int) -> float:
    """Steps a checkpointed gradient runs per step of the loop (runtime/checkpoints.py)."""
    from srcgrad.runtime import checkpoints as plans
    plan = plans.revolve_plan(n, s)
    for k in range(n):
        if plans.snapshot_due(plan, k):
            plans.take_slot(plan, k)
    plans.finish_plan(plan, n)
    steps = n
    while True:
        kind, arg = plans.next_action(plan)
        if kind == plans.DONE:
            return steps / n
        steps += arg if kind == plans.ADVANCE else 1 if kind == plans.STEP else 0


def _worker(kind: str, state: int, steps: int, repeat: int) -> dict:
    from bench.measure import peak_growth, steady_allocator, timed
    steady_allocator()
    func = {"unbounded": heat, "checkpointed": heat_checkpointed}.get(kind, settle)
    # The while loop's state is u, t and its test: memory_limit for SNAPSHOTS of them.
    limit = SNAPSHOTS * (8 * state + 16) if kind == "while-checkpointed" else None
    gradient = srcgrad.grad(func, memory_limit=limit)
    u = np.random.default_rng(0).normal(size=state) * 0.1
    gradient(u, 10 if "while" not in kind else 1e-6)  # compile (a while loop of 0 steps)
    arg = steps if "while" not in kind else 1.0
    peak = peak_growth(lambda: gradient(u, arg))
    times = sorted(timed(lambda: gradient(u, arg))[0] for _ in range(repeat))
    return {"kind": kind, "steps": steps, "peak": peak, "seconds": times[len(times) // 2]}


def _measure(kind: str, state: int, steps: int, repeat: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(pathlib.Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-m", "bench.checkpoint", "--worker", kind,
                          "--state", str(state), "--steps", str(steps), "--repeat", str(repeat)],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _mb(nbytes) -> str:
    return "?" if nbytes is None else f"{nbytes / 2 ** 20:.1f} MB"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--long", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--worker", choices=["unbounded", "checkpointed", "while",
                                             "while-checkpointed"])
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(_worker(args.worker, args.state, args.steps, args.repeat)))
        return
    plain = _measure("unbounded", args.state, args.steps, args.repeat)
    short = _measure("checkpointed", args.state, args.steps, args.repeat)
    long = _measure("checkpointed", args.state, args.long, 1)
    settled = _measure("while", args.state, 0, args.repeat)
    online = _measure("while-checkpointed", args.state, 0, args.repeat)
    lines = [
        f"# Checkpointed stencil gradient ({args.state}-point state, {SNAPSHOTS} snapshots)",
        "",
        "| gradient | steps | peak memory | time | time / unbounded | recompute factor |",
        "|---|---|---|---|---|---|",
        f"| unbounded | {args.steps:,} | {_mb(plain['peak'])} | {plain['seconds']:.2f} s "
        "| 1 | 1 |",
        f"| checkpointed | {args.steps:,} | {_mb(short['peak'])} | {short['seconds']:.2f} s | "
        f"{short['seconds'] / plain['seconds']:.2f} | "
        f"{recompute_factor(args.steps, SNAPSHOTS):.2f} |",
        f"| checkpointed | {args.long:,} | {_mb(long['peak'])} | {long['seconds']:.2f} s | | "
        f"{recompute_factor(args.long, SNAPSHOTS):.2f} |",
        f"| while, unbounded | ~92,000 | {_mb(settled['peak'])} | {settled['seconds']:.2f} s "
        "| 1 | 1 |",
        f"| while, checkpointed (online) | ~92,000 | {_mb(online['peak'])} | "
        f"{online['seconds']:.2f} s | {online['seconds'] / settled['seconds']:.2f} | |",
        "",
        "The while loop (`settle`) takes steps of h = 1e-5 (1 + tanh(|lap|^2) / 10) until "
        "t = 1: its trip count (about 92,000) is known only at the end, so its snapshots "
        "(as many as memory_limit holds: 50) follow the online schedule.",
        "",
        "Peak memory: growth of the resident set during one gradient call, each row in a "
        "fresh process; time: median of the calls (one at the longest size). The recompute "
        "factor counts the steps the gradient runs (forward sweep, recomputation, recorded "
        "steps) per step of the loop.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    results = pathlib.Path(__file__).parent / "results" / "checkpoint.md"
    results.write_text(text)


if __name__ == "__main__":
    main()
