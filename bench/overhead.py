"""What srcgrad adds around the compiled gradient it runs (issue 14).

    python bench/overhead.py [--rounds 15] [--warm-runs 5] [--problems ode,gmm]
                             [--out bench/results/overhead.md]

Three measurements, each a median over rounds that alternate the sides being
compared, so a burst of load on a shared machine hits all of them. Times are
CPU time of the measuring process (`time.process_time`): on a machine shared
with other work, the time a process waits for a CPU is not counted.

(a) call overhead: `srcgrad.grad(f)(x)` for tiny functions whose compiled
    gradient runs in well under a microsecond, against calling numba's
    dispatcher of the same generated function directly (what is left is
    srcgrad's argument binding, checks and result shaping);
(b) GradientTape: one training step (`with tape:` + `tape.gradient`) of the
    two-layer model of examples/training_loop.py, against `srcgrad.grad` of
    the same loss written as a function and the block's NumPy code run alone
    (the tape runs it as written); what is left is the tape's own cost;
(c) warm cache: a fresh process's first call (building the gradient plus its
    first call) once the cache is filled, and `import srcgrad` in that process,
    for a Lorenz-96 model with a helper (written to a file in a temporary
    cache directory) and for the suite problems given by --problems (their
    natural form at the quick suite's first size, as bench/warm.py builds it).

Prints a Markdown table and writes it to --out.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import srcgrad  # noqa: E402
from bench.settings import apply_user_python  # noqa: E402


# ---- (a) call overhead ------------------------------------------------------------------

def newton(x):
    """One Newton step for x**2 = 2, as a function of x."""
    return x - (x * x - 2.0) / (2.0 * x)


def quartic(x, a):
    return a * x ** 4 - 3.0 * x ** 2 + np.sin(x)


SCALE = 0.5


def with_global(x):
    return SCALE * x * x


def small_array(x):
    return np.sum(x * x)


CALL_CASES = [
    ("newton(x), x float", newton, (1.3,), 0),
    ("quartic(x, a), wrt x", quartic, (1.3, 0.7), 0),
    ("with_global(x): reads a module float", with_global, (1.3,), 0),
    ("small_array(x), x float64[3]", small_array, (np.array([1.0, 2.0, 3.0]),), 0),
]


def per_call(fn, args, calls: int) -> float:
    """CPU seconds per call (this process's CPU time: a shared machine's other load, which
    preempts the process, does not count)."""
    start = time.process_time()
    for _ in range(calls):
        fn(*args)
    return (time.process_time() - start) / calls


def interleaved(timers, rounds: int) -> list[float]:
    """Medians of per-call times of zero-argument timers, their order rotated every round."""
    samples = [[] for _ in timers]
    for k in range(rounds):
        for j in range(len(timers)):
            i = (j + k) % len(timers)
            samples[i].append(timers[i]())
    return [statistics.median(s) for s in samples]


def direct_inputs(gradient, args):
    """The inputs of the generated function: the arguments, then the data globals."""
    program = gradient._program
    return list(args) + [float(v) if isinstance(v, float) else v
                         for v in program.resolved.read_globals()]


def call_overhead(rounds: int, calls: int) -> list[dict]:
    rows = []
    for label, func, args, wrt in CALL_CASES:
        gradient = srcgrad.grad(func, wrt)
        gradient(*args)
        dispatcher = gradient._program.compiled.dispatcher
        inputs = direct_inputs(gradient, args)
        dispatcher(*inputs)
        ours, direct = interleaved([lambda: per_call(gradient, args, calls),
                                    lambda: per_call(dispatcher, inputs, calls)], rounds)
        rows.append({"case": label, "srcgrad_us": ours * 1e6, "direct_us": direct * 1e6})
    return rows


# ---- (b) GradientTape per step ---------------------------------------------------------

_rng = np.random.default_rng(0)
X = _rng.uniform(-1.0, 1.0, size=(32, 1))
Y = 3.0 * X - 2.0 + 0.05 * _rng.normal(size=(32, 1))
W1 = srcgrad.Variable(_rng.normal(size=(1, 8)) * 0.5, name="W1")
b1 = srcgrad.Variable(np.zeros(8), name="b1")
W2 = srcgrad.Variable(_rng.normal(size=(8, 1)) * 0.5, name="W2")
b2 = srcgrad.Variable(np.zeros(1), name="b2")
VARIABLES = [W1, b1, W2, b2]


def model(x):
    hidden = np.tanh(x @ W1 + b1)
    return hidden @ W2 + b2


def mse(y_true, y_pred):
    return np.mean((y_true - y_pred) ** 2)


def tape_step(xb, yb):
    with srcgrad.GradientTape() as tape:
        loss = mse(yb, model(xb))
    return tape.gradient(loss, VARIABLES)


def forward_only(xb, yb):
    """What the block runs as Python, without a tape."""
    loss = mse(yb, model(xb))
    return loss


def loss_of(w1, c1, w2, c2, xb, yb):
    hidden = np.tanh(xb @ w1 + c1)
    return np.mean((yb - (hidden @ w2 + c2)) ** 2)


def tape_overhead(rounds: int, calls: int) -> dict:
    loss_grad = srcgrad.grad(loss_of, wrt=(0, 1, 2, 3))
    values = [v.numpy() for v in VARIABLES]
    by_tape = tape_step(X, Y)
    by_grad = loss_grad(*values, X, Y)
    for g, h in zip(by_tape, by_grad):
        assert np.allclose(g, h), "the tape and srcgrad.grad disagree"
    ours, plain, forward = interleaved([lambda: per_call(tape_step, (X, Y), calls),
                                        lambda: per_call(loss_grad, (*values, X, Y), calls),
                                        lambda: per_call(forward_only, (X, Y), calls)], rounds)
    return {"tape_us": ours * 1e6, "grad_us": plain * 1e6, "forward_us": forward * 1e6}


# ---- (c) warm cache in a second process ------------------------------------------------

LORENZ = '''
import numpy as np


def lorenz_rhs(x, forcing):
    n = x.shape[0]
    d = np.zeros(n)
    for i in range(n):
        d[i] = (x[(i + 1) % n] - x[i - 2]) * x[i - 1] - x[i] + forcing
    return d


def lorenz96(x0, forcing, steps, dt):
    x = x0.copy()
    for s in range(steps):
        x = x + dt * lorenz_rhs(x, forcing)
    return np.sum(x * x)
'''

# A fresh process: import srcgrad, set the problem up, then build its gradient and call it
# once. CPU time of this process (its waits for a CPU on a loaded machine do not count) and
# wall time are both printed.
CHILD = '''
import sys, time
c0, w0 = time.process_time(), time.perf_counter()
import srcgrad
c1, w1 = time.process_time(), time.perf_counter()
{setup}
c2, w2 = time.process_time(), time.perf_counter()
{first_call}
c3, w3 = time.process_time(), time.perf_counter()
print({{"import_s": c1 - c0, "first_call_s": c3 - c2, "first_call_wall_s": w3 - w2}})
'''
LORENZ_SETUP = '''sys.path.insert(0, {tmp!r})
import numpy as np
import warm_model
x0 = np.linspace(0.0, 1.0, 8)'''
LORENZ_CALL = '''srcgrad.grad(warm_model.lorenz96)(x0, 8.0, 10, 0.01)'''
FLOOR_SETUP = '''import glob, importlib.util, os
import numba
import numpy as np
path = glob.glob({tmp!r} + "/lorenz96__grad_*.py")[0]
name = "srcgrad_generated." + os.path.basename(path)[:-3]  # as numba's cache recorded it
spec = importlib.util.spec_from_file_location(name, path)
module = sys.modules[name] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
x0 = np.linspace(0.0, 1.0, 8)'''
FLOOR_CALL = '''numba.njit(cache=True)(module.lorenz96__grad)(x0, 8.0, 10, 0.01)'''
PROBLEM_SETUP = '''from bench.problems import load
problem = load({name!r})
impl = problem.srcgrad_impl(problem.generate(problem.SIZES["quick"][0]))'''
PROBLEM_CALL = '''impl.make_gradient()()'''


def _child(code: str, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         cwd=ROOT)
    if out.returncode:
        raise RuntimeError(f"a measuring process failed:\n{out.stderr}")
    return eval(out.stdout.strip().splitlines()[-1], {})  # a dict literal printed by the child


def warm_cache(runs: int, problems: list[str]) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="srcgrad-overhead-") as tmp:
        env = {**os.environ, "SRCGRAD_CACHE_DIR": tmp, "PYTHONPATH": str(ROOT),
               "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        apply_user_python(env)
        (Path(tmp) / "warm_model.py").write_text(LORENZ)
        cases = [("lorenz96 (a helper, 8 variables)",
                  CHILD.format(setup=LORENZ_SETUP.format(tmp=tmp), first_call=LORENZ_CALL))]
        cases += [(p, CHILD.format(setup=PROBLEM_SETUP.format(name=p), first_call=PROBLEM_CALL))
                  for p in problems]
        colds = [_child(code, env) for _, code in cases]  # fill the cache
        cases.insert(1, ("lorenz96's generated module, called by numba.njit(cache=True) "
                         "directly (numba's own part)",
                         CHILD.format(setup=FLOOR_SETUP.format(tmp=tmp), first_call=FLOOR_CALL)))
        colds.insert(1, {"first_call_s": None})
        samples = [[] for _ in cases]
        for _ in range(runs):  # interleaved: one run of every case per round
            for k, (_, code) in enumerate(cases):
                samples[k].append(_child(code, env))
        for (label, _), cold, got in zip(cases, colds, samples):
            rows.append({"case": label, "cold_s": cold["first_call_s"],
                         "warm_s": statistics.median(s["first_call_s"] for s in got),
                         "warm_wall_s": statistics.median(s["first_call_wall_s"] for s in got),
                         "import_s": statistics.median(s["import_s"] for s in got)})
    return rows


# ---- the report ------------------------------------------------------------------------

def report(calls, tape, warm) -> str:
    lines = ["## (a) Call overhead of a tiny gradient", "",
             "| function | srcgrad.grad(f)(...) | numba dispatcher, direct | ratio | added |",
             "|---|---|---|---|---|"]
    for r in calls:
        lines.append(f"| {r['case']} | {r['srcgrad_us']:.2f} µs | {r['direct_us']:.2f} µs | "
                     f"{r['srcgrad_us'] / r['direct_us']:.1f}x | "
                     f"{r['srcgrad_us'] - r['direct_us']:.2f} µs |")
    if tape:
        lines += ["", "## (b) GradientTape per training step (examples/training_loop.py's model)",
                  "", "| with tape + tape.gradient | srcgrad.grad of the same loss | the "
                  "block's NumPy alone | ratio tape / grad | added by the tape |",
                  "|---|---|---|---|---|",
                  f"| {tape['tape_us']:.1f} µs | {tape['grad_us']:.1f} µs | "
                  f"{tape['forward_us']:.1f} µs | {tape['tape_us'] / tape['grad_us']:.1f}x | "
                  f"{tape['tape_us'] - tape['grad_us'] - tape['forward_us']:.1f} µs |", "",
                  "Added by the tape = tape step - srcgrad.grad - the block's own NumPy code "
                  "(which runs in the block as written)."]
    if warm:
        lines += ["", "## (c) Second process with a warm cache (CPU time of the process)", "",
                  "| model | first call, cold cache | first call, warm cache | (wall) | "
                  "import srcgrad |", "|---|---|---|---|---|"]
    for r in warm:
        cold = "-" if r["cold_s"] is None else f"{r['cold_s'] * 1e3:.0f} ms"
        lines.append(f"| {r['case']} | {cold} | {r['warm_s'] * 1e3:.0f} ms | "
                     f"{r['warm_wall_s'] * 1e3:.0f} ms | {r['import_s'] * 1e3:.0f} ms |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000, help="calls per round in (a)")
    parser.add_argument("--steps", type=int, default=100, help="steps per round in (b)")
    parser.add_argument("--warm-runs", type=int, default=5)
    parser.add_argument("--problems", default="lse,ode,gmm",
                        help="suite problems for (c), comma-separated ('' for none)")
    parser.add_argument("--parts", default="abc", help="which measurements to run")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "overhead.md"),
                        help="where to write the table ('' for nowhere)")
    args = parser.parse_args(argv)
    calls = call_overhead(args.rounds, args.calls) if "a" in args.parts else []
    tape = tape_overhead(args.rounds, args.steps) if "b" in args.parts else None
    warm = warm_cache(args.warm_runs, [p for p in args.problems.split(",") if p]) \
        if "c" in args.parts else []
    head = textwrap.dedent(f"""\
        # srcgrad's overhead (bench/overhead.py)

        Python {sys.version.split()[0]}, numba {__import__('numba').__version__}, srcgrad
        {srcgrad.__version__}. CPU time of the measuring process; medians of {args.rounds}
        interleaved rounds ((a): {args.calls} calls per round, (b): {args.steps} steps per
        round), (c): {args.warm_runs} fresh processes per model after one that filled the
        cache. Load average at the end: {', '.join(f'{v:.2f}' for v in os.getloadavg())}.

        """)
    text = head + report(calls, tape, warm)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return text


if __name__ == "__main__":
    main()
