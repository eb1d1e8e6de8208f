"""One adjoint per callee against one per call site: a measurement for issue 14.

    python -m bench.callee_vjp [--runs 2] [--sites 4,8,16,40] [--out bench/results/cold-callee-vjp.md]

srcgrad inlines a user function at every call site, except one called from
OUTLINE_SITES places or more (frontend/calls.py), whose `f__value` and `f__vjp`
are compiled once and called from each site (each backward step recomputing the
callee's forward sweep). This script measures both designs on bench/cold.py's
`calls-K` model at each K, forcing the choice (OUTLINE_SITES = 1 or never).

Each measurement is a fresh process (CPU time: building, numba compiling and the first
call, the helpers' numba cache filled beforehand), then the gradient's call time at
n=1000, 20 steps (best of 5 x 10 calls). Both designs give bit-for-bit the same gradient
(checked in every run). Rounds interleave the designs; the table holds medians.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from .cold import ROOT, calls_model

CHILD = r'''
import importlib, sys, time, timeit, json
import numpy as np
sys.path.insert(0, {folder!r})
import srcgrad, srcgrad.frontend.calls
srcgrad.frontend.calls.OUTLINE_SITES = 1 if {how!r} == "vjp" else 10 ** 6
m = importlib.import_module({module!r})
x0, xs = np.linspace(0.1, 1.0, 8), np.linspace(0.1, 1.0, 1000)
c0 = time.process_time()
g = srcgrad.grad(m.run)
g(x0, 5)
c1 = time.process_time()
assert ("stage__vjp" in g.source) == ({how!r} == "vjp")
call = lambda: g(xs, 20)
seconds = min(timeit.repeat(call, number=10, repeat=5)) / 10
print(json.dumps({{"first": c1 - c0, "call": seconds, "gradient": list(map(float, call()))}}))
'''


def measure(sites: int, how: str, cache: Path, folder: Path, round_: int) -> dict:
    module = f"callee_{sites}_{how}_{round_}"
    (folder / f"{module}.py").write_text(calls_model(sites))
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT),
           "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    code = CHILD.format(folder=str(folder), module=module, how=how)
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT,
                         capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"calls-{sites} {how} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--sites", default="4,8,16,40")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" /
                                             "cold-callee-vjp.md"))
    args = parser.parse_args(argv)
    sites = [int(k) for k in args.sites.split(",")]
    samples: dict = {}
    with tempfile.TemporaryDirectory(prefix="srcgrad-callee-") as tmp:
        cache, folder = Path(tmp) / "cache", Path(tmp) / "models"
        cache.mkdir(mode=0o700)
        folder.mkdir()
        measure(sites[0], "inline", cache, folder, -1)  # fills the helpers' numba cache
        measure(sites[0], "vjp", cache, folder, -1)
        for round_ in range(args.runs):
            for k in sites:
                got = {how: measure(k, how, cache, folder, round_) for how in ("inline", "vjp")}
                if got["inline"]["gradient"] != got["vjp"]["gradient"]:
                    raise AssertionError(f"calls-{k}: the two designs' gradients differ")
                for how, sample in got.items():
                    samples.setdefault((k, how), []).append(sample)
    lines = ["| call sites | inlined: first call | one vjp: first call | ratio "
             "| inlined: call | one vjp: call | ratio |", "|---|---|---|---|---|---|---|"]
    for k in sites:
        med = {(how, key): statistics.median(s[key] for s in samples[(k, how)])
               for how in ("inline", "vjp") for key in ("first", "call")}
        lines.append(f"| {k} | {med['inline', 'first']:.2f} s | {med['vjp', 'first']:.2f} s | "
                     f"{med['vjp', 'first'] / med['inline', 'first']:.2f} | "
                     f"{med['inline', 'call'] * 1e3:.2f} ms | {med['vjp', 'call'] * 1e3:.2f} ms | "
                     f"{med['vjp', 'call'] / med['inline', 'call']:.2f} |")
    text = ("\n".join(lines) + f"\n\nCPU seconds of a fresh process (build, numba, first call; "
            f"helpers cached), medians of {args.runs} interleaved rounds; call: n=1000, 20 "
            "steps, best of 5 x 10 calls. Same gradients bit for bit.\n")
    print(text)
    Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
