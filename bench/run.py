"""The suite: every problem x size x tool, each tool in a process of its own.

`python -m bench [--quick]` lands here. For each problem it computes the
reference gradients once, then runs `bench.worker` for each tool (JAX,
PyTorch, autograd and srcgrad) with one thread, pinned to one CPU, and, for
srcgrad, `bench.warm` in a second process once the cache is warm. Results go
to bench/results/ (JSON, Markdown, one PNG per problem); the table is printed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from .settings import MODES, apply_thread_env, apply_user_python

apply_thread_env(os.environ)

import numpy as np  # noqa: E402

from . import report  # noqa: E402
from .problems import NAMES, TOOLS, load  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results"


def versions():
    out = {"python": platform.python_version()}
    for name in ["srcgrad", "numpy", "numba", "jax", "jaxlib", "torch", "autograd"]:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def compute_references(problem, mode, folder):
    kinds = []
    for index, size in enumerate(problem.SIZES[mode]):
        start = time.perf_counter()
        vector, coords, kind = problem.reference(problem.generate(size))
        np.savez(folder / f"{problem.__name__.rsplit('.', 1)[-1]}_{index}.npz",
                 grad=np.asarray(vector, dtype=np.float64),
                 coords=np.asarray([] if coords is None else coords, dtype=np.int64))
        kinds.append({"label": problem.label(size), "kind": kind,
                      "entries_checked": int(len(vector) if coords is None else len(coords)),
                      "entries": int(len(vector)), "seconds": time.perf_counter() - start})
    return kinds


def run_worker(name, tool, mode, refs, env, pin, log):
    out = Path(tempfile.mkstemp(prefix=f"{name}-{tool}-", suffix=".jsonl")[1])
    cmd = [sys.executable, "-m", "bench.worker", "--problem", name, "--tool", tool,
           "--mode", mode, "--refs", str(refs), "--out", str(out)]
    if pin is not None:
        cmd += ["--pin", str(pin)]
    timeout = MODES[mode]["worker_timeout"]
    ended = "ok"
    with open(log, "a") as err:
        err.write(f"\n==== {name} / {tool}\n")
        err.flush()
        try:
            proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=err, stderr=err, timeout=timeout)
            if proc.returncode != 0:
                ended = f"worker exited with code {proc.returncode} (see {log.name})"
        except subprocess.TimeoutExpired:
            ended = f"timeout: the worker ran out of its {timeout:.0f} s"
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    out.unlink()
    problem = load(name)
    seen = {json.dumps(r["size"], sort_keys=True) for r in rows}
    for size in problem.SIZES[mode]:
        if json.dumps(size, sort_keys=True) not in seen:
            status = "timeout" if ended.startswith("timeout") else "error"
            rows.append({"problem": name, "tool": tool, "size": size, "label": problem.label(size),
                         "x": problem.x(size), "status": status, "notes": [ended]})
    return rows


def run_warm(name, mode, env, pin, runs):
    cmd = [sys.executable, "-m", "bench.warm", "--problem", name, "--mode", mode]
    if pin is not None:
        cmd = ["taskset", "-c", str(pin)] + cmd if shutil.which("taskset") else cmd
    results = []
    for _ in range(runs):
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1][:300]}
        results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    best = sorted(results, key=lambda r: r["warm_first_call_s"])[len(results) // 2]
    return best | {"runs": runs}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="small sizes only: every problem and tool in a few minutes")
    parser.add_argument("--problems", default=",".join(NAMES),
                        help=f"comma-separated subset of {','.join(NAMES)}")
    parser.add_argument("--tools", default=",".join(TOOLS),
                        help=f"comma-separated subset of {','.join(TOOLS)}")
    parser.add_argument("--out", default=str(RESULTS), help="results folder")
    parser.add_argument("--no-pin", action="store_true",
                        help="do not pin each worker to one CPU")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    names = [n for n in args.problems.split(",") if n]
    tools = [t for t in args.tools.split(",") if t]
    for n in names:
        load(n)
    unknown = set(tools) - set(TOOLS)
    if unknown:
        parser.error(f"unknown tool(s) {', '.join(sorted(unknown))}; the tools are {', '.join(TOOLS)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    pin = None
    if not args.no_pin and hasattr(os, "sched_getaffinity"):
        pin = max(os.sched_getaffinity(0))
    scratch = Path(tempfile.mkdtemp(prefix="srcgrad-bench-"))
    refs, cache = scratch / "refs", scratch / "srcgrad-cache"
    refs.mkdir()
    cache.mkdir()
    env = dict(os.environ)
    apply_thread_env(env)
    apply_user_python(env)
    env["SRCGRAD_CACHE_DIR"] = str(cache)  # cold for the first process, warm after
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    env.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")
    log = out / f"{mode}.log"
    log.write_text("")

    started = time.perf_counter()
    results = {"mode": mode, "date": time.strftime("%Y-%m-%d %H:%M"), "cpu": cpu_name(),
               "cores": os.cpu_count(), "pinned_cpu": pin, "versions": versions(),
               "threads": "1 per tool", "rows": [], "warm": {}, "references": {}}
    try:
        for name in names:
            problem = load(name)
            print(f"[{time.perf_counter() - started:6.0f} s] {name}: references", flush=True)
            results["references"][name] = compute_references(problem, mode, refs)
            for tool in tools:
                print(f"[{time.perf_counter() - started:6.0f} s] {name}: {tool}", flush=True)
                rows = run_worker(name, tool, mode, refs, env, pin, log)
                results["rows"] += rows
                if tool == "srcgrad" and any(r["status"] in ("ok", "invalid") for r in rows):
                    results["warm"][name] = run_warm(name, mode, env, pin, MODES[mode]["warm_runs"])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    results["seconds"] = time.perf_counter() - started

    (out / f"{mode}.json").write_text(json.dumps(results, indent=1))
    table = report.write_all(results, out)
    print()
    print(table)
    print(f"\n{mode} suite took {results['seconds']:.0f} s; results in {out}/")


if __name__ == "__main__":
    main()
