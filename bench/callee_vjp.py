"""One adjoint per callee against one per call site: a measurement for issue 14.

    python -m bench.callee_vjp [--runs 2] [--sites 4,16,40] [--out bench/results/cold-callee-vjp.md]

srcgrad inlines a user function at every call site, so the module numba compiles grows
with the number of sites (bench/cold.py's `calls-K`). The other design compiles the
callee's vector-Jacobian product once and calls it from each site's backward step,
recomputing the callee's forward sweep there. srcgrad does not do that by itself yet;
this script builds it from public pieces to measure it: the callee's `srcgrad.vjp`
module (its `stage__vjp` dispatcher), a `srcgrad.defvjp` rule that calls it, and the
caller's gradient as srcgrad generates it for that rule, without the per-site shape
check of the rule's cotangents (`check_cotangent` takes its message as a literal
string, so numba compiles it again at every site and for every argument: an automatic
version knows the shapes and needs no check).

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
import importlib, importlib.util, os, re, sys, time, timeit, json
import numpy as np
sys.path.insert(0, {folder!r})
import numba, srcgrad
from srcgrad.api.derivatives import cached_program
from srcgrad.backend import helper_cache
m = importlib.import_module({module!r})
x0, xs = np.linspace(0.1, 1.0, 8), np.linspace(0.1, 1.0, 1000)
c0 = time.process_time()
if {how!r} == "inline":
    g = srcgrad.grad(m.run)
    g(x0, 5)
    call = lambda: g(xs, 20)
else:
    srcgrad.vjp(m.stage, x0, x0, 0.1)[1](x0)  # the callee's vjp, compiled once
    inner = cached_program(m.stage, ["x", "y", "h"], "vjp", True).compiled.dispatcher
    m.stage = primal = numba.njit(m.stage)
    rule = importlib.import_module({module!r} + "_rule")
    rule.inner = inner
    srcgrad.defvjp(primal)(rule.stage_vjp)
    source = re.sub(r'check_cotangent\((_r\d+\[\d\]), \w+,\s*"[^"]*"\s*\)', r"\1",
                    srcgrad.grad(m.run, jit=False).source)
    path = os.path.join({folder!r}, "srcgrad_generated_" + {module!r} + ".py")
    with open(path, "w") as out:
        out.write(source)
    spec = importlib.util.spec_from_file_location("srcgrad_generated_" + {module!r}, path)
    generated = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generated)
    generated.stage = primal
    for name in set(re.findall(r"(_sg_\w+)\(", source)):
        setattr(generated, name, inner)  # the rule's inner call, as srcgrad names it
    compiled = numba.njit(generated.run__grad)
    with helper_cache.compiling(os.environ["SRCGRAD_CACHE_DIR"]):
        compiled(x0, 5)
    call = lambda: compiled(xs, 20)[1][0]
c1 = time.process_time()
seconds = min(timeit.repeat(call, number=10, repeat=5)) / 10
print(json.dumps({{"first": c1 - c0, "call": seconds, "gradient": list(map(float, call()))}}))
'''
RULE = '''def stage_vjp(g, ans, x, y, h):
    r = inner(x, y, h, g)[1]
    return r[0], r[1], r[2]
'''


def measure(sites: int, how: str, cache: Path, folder: Path, round_: int) -> dict:
    module = f"callee_{sites}_{how}_{round_}"
    (folder / f"{module}.py").write_text(calls_model(sites))
    (folder / f"{module}_rule.py").write_text(RULE)
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
    parser.add_argument("--sites", default="4,16,40")
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
