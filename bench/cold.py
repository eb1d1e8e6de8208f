"""The first call with a cold cache, in fresh processes (issue 14).

    python -m bench.cold [--runs 3] [--problems lse,ode,...] [--against DIR]
                         [--scenarios empty,used] [--against-scenarios empty]
                         [--out bench/results/cold.md]

Each measurement is a new Python process that imports srcgrad, builds the
gradient of a problem's natural form at the quick suite's first size and calls
it once, and reports CPU time (`time.process_time`: on the shared machine the
time a process waits for a CPU does not count) split into

- import: `import srcgrad`;
- transform: building the gradient (srcgrad's passes, writing the module);
- numba: numba compiling during the first call (the outermost `numba:compile`
  events, typing + lowering + LLVM, helpers included);
- rest: the first call minus numba's compilation (running it, binding).

Scenarios: `empty`, a new empty SRCGRAD_CACHE_DIR per process (the very first
call of srcgrad on a machine); `used`, a cache directory in which the other
cases ran before (copied per process, with the measured case's own modules,
numba files and index entries deleted): a new function of a user who has used
srcgrad before.

Cases: the suite's problems and `calls-K`, a loop whose body calls one small
helper K times (compile time against the number of call sites; each call is
inlined below frontend/calls.py's OUTLINE_SITES, else the helper's own `f__vjp` serves
every call). `--against DIR` measures another srcgrad checkout (for example
`git archive <commit> | tar -x -C DIR`) in the same rounds, interleaved, so
before/after ratios come from one session (a side without a `used` measurement is
compared by its `empty` one: before the helper cache nothing of another function's
compilation was kept). Prints a Markdown table and writes
it to --out.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.settings import apply_user_python

ROOT = Path(__file__).resolve().parent.parent

CHILD = '''
import json, os, sys, time
c0 = time.process_time()
import srcgrad
c1 = time.process_time()
from numba.core import event
{setup}
stack, split = [], {{"generated": 0.0, "helpers": 0.0, "numba's": 0.0}}
def kind(dispatcher):
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
    if module.startswith("srcgrad_generated"):
        return "generated"
    return "helpers" if module.startswith("srcgrad") else "numba's"
class Split(event.Listener):  # generated code's own time; a helper's with what it calls
    def on_start(self, ev):
        stack.append([kind(ev.data["dispatcher"]), time.process_time(), 0.0])
    def on_end(self, ev):
        what, start, inner = stack.pop()
        spent = time.process_time() - start
        if what == "generated":
            split["generated"] += spent - inner
        elif all(k == "generated" for k, _, _ in stack):
            split[what] += spent
        if stack and stack[-1][0] == "generated":
            stack[-1][2] += spent
event.register("numba:compile", Split())
c2, w2 = time.process_time(), time.perf_counter()
call = {build}
c3 = time.process_time()
call()
c4, w4 = time.process_time(), time.perf_counter()
numba = sum(split.values())
print(json.dumps({{"import": c1 - c0, "transform": c3 - c2, "numba": numba, **split,
                  "rest": c4 - c3 - numba, "total": c4 - c2, "wall": w4 - w2}}))
'''
PROBLEM_SETUP = '''from bench.problems import load
problem = load({name!r})
impl = problem.srcgrad_impl(problem.generate(problem.SIZES["quick"][0]))'''
PROBLEM_BUILD = "impl.make_gradient()"
CALLS_SETUP = '''import numpy as np
sys.path.insert(0, {folder!r})
import {module} as model
x0 = np.linspace(0.1, 1.0, 8)'''
CALLS_BUILD = "(lambda g: lambda: g(x0, 5))(srcgrad.grad(model.run))"


def calls_model(k: int) -> str:
    """A loop whose body calls the helper `stage` k times (each call inlined)."""
    body = "\n".join(f"        y = stage(x, y, {0.1 + 0.01 * j!r})" for j in range(k))
    return ("import numpy as np\n\n\n"
            "def stage(x, y, h):\n"
            "    n = x.shape[0]\n"
            "    z = np.empty(n)\n"
            "    for i in range(n):\n"
            "        z[i] = y[i] + h * np.sin(x[i] * y[i - 1])\n"
            "    return z\n\n\n"
            "def run(x, steps):\n"
            "    y = x.copy()\n"
            "    for s in range(steps):\n"
            f"{body}\n"
            "    return np.sum(y * y)\n")


def case_code(case: str, folder: str) -> str:
    if case.startswith("calls-"):
        return CHILD.format(setup=CALLS_SETUP.format(folder=folder, module=_module(case)),
                            build=CALLS_BUILD)
    return CHILD.format(setup=PROBLEM_SETUP.format(name=case), build=PROBLEM_BUILD)


def _module(case: str) -> str:
    return "cold_" + case.replace("-", "_")


def fill(root: Path, cases: list[str], template: Path, models: Path) -> dict:
    """Run every case once, cold, in `template`; what each case added of its own: {case:
    (stems of its generated modules, its index files)}."""
    own = {}
    for case in cases:
        before = {p.name for p in template.glob("*.py")}, set((template / "index").glob("*"))
        run_child(root, case, template, models)
        stems = tuple(p.stem for p in template.glob("*.py") if p.name not in before[0])
        own[case] = stems, set((template / "index").glob("*")) - before[1]
    return own


def forget(folder: Path, template: Path, own) -> None:
    """Delete a case's own generated modules, numba files and index entries from `folder`,
    a copy of `template`."""
    stems, index_files = own
    for sub in (folder, folder / "__pycache__"):
        for path in sub.glob("*"):
            if path.is_file() and stems and path.name.startswith(stems):
                path.unlink()
    for path in index_files:
        (folder / path.relative_to(template)).unlink(missing_ok=True)


def run_child(root: Path, case: str, cache: Path, models: Path) -> dict:
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(cache), "PYTHONPATH": str(root),
           "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    env.pop("SRCGRAD_DUMP", None)
    apply_user_python(env)
    out = subprocess.run([sys.executable, "-c", case_code(case, str(models))], env=env,
                         cwd=root, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"measuring {case} in {root} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def fresh(root: Path, case: str, models: Path, template: Path | None, own) -> dict:
    """One measurement in a new cache directory: empty, or a copy of `template` without the
    case's own entries."""
    with tempfile.TemporaryDirectory(prefix="srcgrad-cold-") as tmp:
        cache = Path(tmp) / "cache"
        if template is None:
            cache.mkdir(mode=0o700)
        else:
            shutil.copytree(template, cache, symlinks=True)
            forget(cache, template, own)
        return run_child(root, case, cache, models)


def measure(sides: dict, cases: list[str], scenarios: dict, runs: int) -> dict:
    """{(side, scenario, case): [sample, ...]}, every round running each combination once;
    `scenarios` names each side's."""
    samples: dict = {}
    with tempfile.TemporaryDirectory(prefix="srcgrad-cold-models-") as tmp:
        models = Path(tmp)
        for case in cases:
            if case.startswith("calls-"):
                (models / f"{_module(case)}.py").write_text(calls_model(int(case[6:])))
        templates, own = {}, {}
        for k, (side, root) in enumerate(sides.items()):  # every case once, cold
            if "used" in scenarios[side]:
                templates[side] = models / f"template-{k}"
                templates[side].mkdir(mode=0o700)
                own[side] = fill(root, cases, templates[side], models)
        for _ in range(runs):
            for case in cases:
                for scenario in ("empty", "used"):
                    for side, root in sides.items():
                        if scenario not in scenarios[side]:
                            continue
                        template = templates.get(side) if scenario == "used" else None
                        mine = own[side][case] if template is not None else None
                        got = fresh(root, case, models, template, mine)
                        samples.setdefault((side, scenario, case), []).append(got)
    return samples


def median(samples: list[dict], key: str) -> float:
    return statistics.median(s[key] for s in samples)


def report(samples: dict, sides: dict, cases: list[str], scenarios: list[str]) -> str:
    parts = ("import", "transform", "numba", "rest", "total")
    lines = []
    for scenario in scenarios:
        lines += [f"## Scenario `{scenario}`", "",
                  "| case | side | import | transform | numba (generated / helpers / numba's) "
                  "| rest | total | wall | total / first side's |",
                  "|---|---|" + "---|" * (len(parts) + 2)]
        for case in cases:
            for side in sides:
                got = samples.get((side, scenario, case))
                if got is None:
                    continue
                first = next(iter(sides))  # the ratio: against the first side, same scenario
                ref = samples.get((first, scenario, case)) or samples[(first, "empty", case)]
                cells = [f"{median(got, p):.2f} s" for p in parts]
                cells[2] += " ({:.2f} / {:.2f} / {:.2f})".format(
                    *(median(got, k) for k in ("generated", "helpers", "numba's")))
                lines.append(f"| {case} | {side} | " + " | ".join(cells) +
                             f" | {median(got, 'wall'):.2f} s | "
                             f"{median(got, 'total') / median(ref, 'total'):.2f} |")
        lines.append("")
    runs = len(next(iter(samples.values())))
    lines.append(f"CPU seconds, medians of {runs} processes per cell; total = transform + "
                 "numba + rest (import apart). numba: the generated functions' own typing, "
                 "lowering and LLVM; srcgrad's runtime overloads with what they call; numba's "
                 "own overloads the generated code calls directly. Sides: " +
                 ", ".join(f"`{s}` = {root}" for s, root in sides.items()) + ".")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--problems", default="lse,llsq,ode,gmm,lstm,ba,det,calls-4,calls-40")
    parser.add_argument("--scenarios", default="empty,used")
    parser.add_argument("--against", default=None,
                        help="another srcgrad checkout, measured first in every round")
    parser.add_argument("--against-scenarios", default=None,
                        help="the scenarios measured for --against (default: --scenarios)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "cold.md"))
    args = parser.parse_args(argv)
    sides = {"before": Path(args.against).resolve()} if args.against else {}
    sides["this tree"] = ROOT
    cases = [c for c in args.problems.split(",") if c]
    scenarios = [s for s in args.scenarios.split(",") if s]
    per_side = {side: scenarios for side in sides}
    if args.against and args.against_scenarios is not None:
        per_side["before"] = [s for s in args.against_scenarios.split(",") if s]
    samples = measure(sides, cases, per_side, args.runs)
    text = report(samples, sides, cases, scenarios)
    print(text)
    Path(args.out).write_text(text)
    Path(args.out).with_suffix(".json").write_text(json.dumps(
        [{"side": side, "scenario": scenario, "case": case, "samples": got}
         for (side, scenario, case), got in samples.items()], indent=1))


if __name__ == "__main__":
    main()
