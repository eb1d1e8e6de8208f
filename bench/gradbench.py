"""A GradBench tool adapter: srcgrad speaking GradBench's JSON-lines protocol.

    python -m bench.gradbench

GradBench's eval writes one JSON message per line on our stdin and reads one
answer per line from our stdout, each answer carrying the message's `id`:

- `{"kind": "start", ...}` -> `{"id", "tool": "srcgrad"}`
- `{"kind": "define", "module": M}` -> `{"id", "success"}`; defining a module
  transforms and compiles its functions once on a tiny input, so compilation
  is not counted in the timings
- `{"kind": "evaluate", "module", "function", "input"}` -> `{"id", "success",
  "output", "timings": [{"name": "evaluate", "nanoseconds": ...}, ...]}`, the
  function run `min_runs` times (or `runs`) and for at least `min_seconds`
- `{"kind": "analysis", ...}` -> `{"id"}`; `{"kind": "end"}` ends the session.

Modules: hello, lse, llsq, ode, det, gmm, lstm, ba, with GradBench's function
names (`primal`/`gradient`, or `objective`/`jacobian`); kmeans (`cost`, `dir`),
particle and saddle (`ff`, `fr`, `rf`, `rr`). With the GradBench
CLI: `./gradbench run --eval "./gradbench repo eval lse" --tool "python -m bench.gradbench"`
(run from this repository's root).
"""
from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback

from .settings import apply_thread_env

apply_thread_env(os.environ)

MODULES = ["hello", "lse", "llsq", "ode", "det", "gmm", "lstm", "ba", "kmeans", "particle",
           "saddle"]


def _module(name):
    if name not in MODULES:
        raise KeyError(f"srcgrad's adapter has no module {name!r}; it has {', '.join(MODULES)}")
    return importlib.import_module(f"bench.problems.{name}")


def evaluate(module: str, function: str, inp):
    functions = _module(module).gradbench
    if function not in functions:
        raise KeyError(f"module {module!r} has no function {function!r}; "
                       f"it has {', '.join(functions)}")
    run, post = functions[function](inp)
    runs, seconds = 1, 0.0
    if isinstance(inp, dict):
        runs = int(inp.get("min_runs", inp.get("runs", 1)))
        seconds = float(inp.get("min_seconds", 0.0))
    timings, spent, out = [], 0, None
    while len(timings) < max(runs, 1) or spent < seconds * 1e9:
        start = time.perf_counter_ns()
        out = run()
        elapsed = time.perf_counter_ns() - start
        timings.append({"name": "evaluate", "nanoseconds": elapsed})
        spent += elapsed
    return post(out), timings


def define(module: str):
    mod = _module(module)
    for function, tiny in getattr(mod, "GRADBENCH_WARMUP", []):
        evaluate(module, function, tiny)  # transform and compile now, not in the timings


def answer(message):
    kind = message.get("kind")
    reply = {"id": message.get("id")}
    if kind == "start":
        reply["tool"] = "srcgrad"
    elif kind == "define":
        try:
            define(message["module"])
            reply["success"] = True
        except Exception as exc:
            reply.update(success=False, error="".join(traceback.format_exception(exc)))
    elif kind == "evaluate":
        try:
            output, timings = evaluate(message["module"], message["function"], message["input"])
            reply.update(success=True, output=output, timings=timings)
        except Exception as exc:
            reply.update(success=False, error="".join(traceback.format_exception(exc)))
    return reply


def serve(stdin, stdout):
    for line in stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if message.get("kind") == "end":
            break
        reply = answer(message)
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()


def main():
    protocol = sys.stdout
    sys.stdout = sys.stderr  # anything else printed must not corrupt the protocol
    try:
        serve(sys.stdin, protocol)
    except (BrokenPipeError, KeyboardInterrupt):
        pass


if __name__ == "__main__":
    main()
