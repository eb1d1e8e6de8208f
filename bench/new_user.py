"""Loop code as a new user writes it: srcgrad's gradient against the numba primal,
JAX's jitted gradient and (where short) a hand-written numba adjoint (issue 13).

    python bench/new_user.py [--quick] [--pin CPU] [--out bench/results/new_user.md]

Five problems, each written once in plain Python + NumPy the way a scientist
would write it (srcgrad differentiates exactly that function; numba.njit of the
same function is the primal), and once the way a JAX user would (vectorized,
`lax.fori_loop` over time steps, `jax.jit(jax.grad(f))`, 64-bit):

- pair loop: Lennard-Jones energy of 300 particles in 3-d, `for i: for j in
  range(i + 1, n):` with scalar temporaries; gradient wrt positions;
- heat: 1-d heat equation, n=200, 500 steps of `un = u.copy();
  u[1:-1] = un[1:-1] + a * (un[2:] - 2 un[1:-1] + un[:-2])`; wrt u0 and a;
- pendulum: damped pendulum, 100k semi-implicit Euler steps on scalars;
  wrt the initial state and both parameters;
- Lorenz-96: 40 states, 2000 RK4 steps, the right-hand side a helper with an
  element loop; wrt the initial state and the forcing;
- MLP: a two-layer tanh MLP's mean squared error, vectorized, batch 256,
  64 inputs, hidden 128, 10 outputs; wrt both layers' weights and biases.

Timing: every callable is called once first (its "first call": building and
compiling the gradient, tracing and compiling for JAX), then all of them are
called in turn, round after round, so a burst of load on the shared machine
hits all of them; each sample repeats a call enough times to last about 2 ms;
medians are reported. Timings run with glibc's thresholds fixed where srcgrad
sets them itself when a gradient is made (`measure.steady_allocator`, as the
suite's workers do; srcgrad/backend/allocator.py): with the defaults, large tapes were sometimes mapped and
page-faulted afresh at every call (pendulum: 4.3x instead of 1.6x), and a
fixed MALLOC_MMAP_THRESHOLD_ of 64 KiB does that to every large temporary. Peak
memory is measured afterwards in a child process started with that
threshold fixed: the resident-set growth during one call of each gradient
(bench/measure.py: the kernel's high-water mark reset just before the call).
One thread everywhere (bench/settings.py). Every gradient is checked against
JAX's (and the hand-written adjoint's) with GradBench's metric. Writes a
Markdown table to --out and prints it.
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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.settings import MALLOC, apply_thread_env  # noqa: E402

apply_thread_env(os.environ)  # before NumPy, numba or JAX are imported
os.environ.setdefault("SRCGRAD_CACHE_DIR", tempfile.mkdtemp(prefix="srcgrad-new-user-"))

import numba  # noqa: E402
import numpy as np  # noqa: E402

from bench import measure  # noqa: E402
from bench.common import TOLERANCE, flat, mismatch, njit_with  # noqa: E402
from bench.report import fmt_time  # noqa: E402

MODES = {  # rounds of every callable per problem: at least min, at most max, within budget s
    "quick": {"min_rounds": 5, "max_rounds": 31, "budget": 2.0},
    "full": {"min_rounds": 11, "max_rounds": 101, "budget": 10.0},
}
SAMPLE = 2e-3  # seconds one timed sample lasts at least (short calls are repeated)


# ---- the problems, as a new user writes them ---------------------------------------------

def lj_energy(pos, eps, sigma):
    n = pos.shape[0]
    e = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            dz = pos[i, 2] - pos[j, 2]
            r2 = dx * dx + dy * dy + dz * dz
            sr2 = sigma * sigma / r2
            sr6 = sr2 * sr2 * sr2
            e += 4.0 * eps * (sr6 * sr6 - sr6)
    return e


def heat(u0, a, steps):
    u = u0.copy()
    for k in range(steps):
        un = u.copy()
        u[1:-1] = un[1:-1] + a * (un[2:] - 2.0 * un[1:-1] + un[:-2])
    return np.sum(u * u)


def pendulum(theta0, omega0, g_over_l, damping, steps):
    dt = 0.001
    theta = theta0
    omega = omega0
    for k in range(steps):
        omega = omega + dt * (-g_over_l * np.sin(theta) - damping * omega)
        theta = theta + dt * omega
    return theta * theta + 0.5 * omega * omega


def l96(x, forcing):
    n = x.shape[0]
    d = np.empty(n)
    for i in range(n):
        d[i] = (x[(i + 1) % n] - x[i - 2]) * x[i - 1] - x[i] + forcing
    return d


def lorenz96(x0, forcing, steps):
    dt = 0.001
    x = x0.copy()
    for s in range(steps):
        k1 = l96(x, forcing)
        k2 = l96(x + 0.5 * dt * k1, forcing)
        k3 = l96(x + 0.5 * dt * k2, forcing)
        k4 = l96(x + dt * k3, forcing)
        x = x + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(x * x) / x.shape[0]


def mlp_loss(W1, b1, W2, b2, X, Y):
    H = np.tanh(X @ W1 + b1)
    P = H @ W2 + b2
    R = P - Y
    return np.mean(R * R)


# ---- hand-written numba adjoints -----------------------------------------------------------

@numba.njit(cache=False)
def lj_forces_by_hand(pos, eps, sigma):
    """The gradient wrt pos in one sweep over the pairs: what a physicist's force loop does."""
    n = pos.shape[0]
    g = np.zeros((n, 3))
    s2 = sigma * sigma
    for i in range(n):
        for j in range(i + 1, n):
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            dz = pos[i, 2] - pos[j, 2]
            r2 = dx * dx + dy * dy + dz * dz
            sr2 = s2 / r2
            sr6 = sr2 * sr2 * sr2
            de_dr2 = -12.0 * eps * (2.0 * sr6 * sr6 - sr6) / r2
            gx, gy, gz = 2.0 * de_dr2 * dx, 2.0 * de_dr2 * dy, 2.0 * de_dr2 * dz
            g[i, 0] += gx
            g[i, 1] += gy
            g[i, 2] += gz
            g[j, 0] -= gx
            g[j, 1] -= gy
            g[j, 2] -= gz
    return g


@numba.njit(cache=False)
def pendulum_adjoint_by_hand(theta0, omega0, g_over_l, damping, steps):
    """Forward sweep storing (theta, omega) per step, backward sweep by hand."""
    dt = 0.001
    thetas = np.empty(steps)
    omegas = np.empty(steps)
    theta, omega = theta0, omega0
    for k in range(steps):
        thetas[k] = theta
        omegas[k] = omega
        omega = omega + dt * (-g_over_l * np.sin(theta) - damping * omega)
        theta = theta + dt * omega
    gt, go, gg, gc = 2.0 * theta, omega, 0.0, 0.0
    for k in range(steps - 1, -1, -1):
        go += dt * gt
        th = thetas[k]
        gt += go * dt * (-g_over_l * np.cos(th))
        gg -= go * dt * np.sin(th)
        gc -= go * dt * omegas[k]
        go *= 1.0 - dt * damping
    return gt, go, gg, gc


# ---- the same problems as a JAX user writes them -------------------------------------------

def jax_versions(jax):
    jnp, lax = jax.numpy, jax.lax

    def lj(pos, eps, sigma):
        i, j = np.triu_indices(pos.shape[0], 1)
        d = pos[i] - pos[j]
        sr6 = (sigma * sigma / jnp.sum(d * d, axis=1)) ** 3
        return jnp.sum(4.0 * eps * (sr6 * sr6 - sr6))

    def heat_(u0, a, steps):
        def step(k, u):
            return u.at[1:-1].set(u[1:-1] + a * (u[2:] - 2.0 * u[1:-1] + u[:-2]))
        u = lax.fori_loop(0, steps, step, u0)
        return jnp.sum(u * u)

    def pendulum_(theta0, omega0, g_over_l, damping, steps):
        dt = 0.001

        def step(k, state):
            theta, omega = state
            omega = omega + dt * (-g_over_l * jnp.sin(theta) - damping * omega)
            return theta + dt * omega, omega
        theta, omega = lax.fori_loop(0, steps, step, (theta0, omega0))
        return theta * theta + 0.5 * omega * omega

    def rhs(x, forcing):
        return (jnp.roll(x, -1) - jnp.roll(x, 2)) * jnp.roll(x, 1) - x + forcing

    def lorenz96_(x0, forcing, steps):
        dt = 0.001

        def step(s, x):
            k1 = rhs(x, forcing)
            k2 = rhs(x + 0.5 * dt * k1, forcing)
            k3 = rhs(x + 0.5 * dt * k2, forcing)
            k4 = rhs(x + dt * k3, forcing)
            return x + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        x = lax.fori_loop(0, steps, step, x0)
        return jnp.sum(x * x) / x.shape[0]

    def mlp(W1, b1, W2, b2, X, Y):
        R = jnp.tanh(X @ W1 + b1) @ W2 + b2 - Y
        return jnp.mean(R * R)

    return {"pair loop": lj, "heat": heat_, "pendulum": pendulum_, "Lorenz-96": lorenz96_,
            "MLP": mlp}


# ---- inputs ----------------------------------------------------------------------------------

def lattice_3d(n, spacing, rng, jitter=0.1):
    side = int(np.ceil(n ** (1.0 / 3.0)))
    cells = np.array([[i % side, (i // side) % side, i // (side * side)] for i in range(n)])
    return cells * spacing + rng.uniform(-jitter, jitter, size=(n, 3))


def problems():
    rng = np.random.default_rng(13)
    u0 = np.sin(np.linspace(0.0, np.pi, 200)) + 0.1 * rng.normal(size=200)
    mlp_args = (rng.normal(size=(64, 128)) / 8.0, 0.1 * rng.normal(size=128),
                rng.normal(size=(128, 10)) / 11.3, 0.1 * rng.normal(size=10),
                rng.normal(size=(256, 64)), rng.normal(size=(256, 10)))
    return [
        {"name": "pair loop", "size": "300 particles (44,850 pairs)", "f": lj_energy,
         "args": (lattice_3d(300, 1.2, rng), 1.0, 1.0), "wrt": 0,
         "hand": lj_forces_by_hand},
        {"name": "heat", "size": "n=200, 500 steps", "f": heat,
         "args": (u0, 0.25, 500), "wrt": (0, 1)},
        {"name": "pendulum", "size": "100k steps", "f": pendulum,
         "args": (1.2, 0.3, 9.81, 0.05, 100_000), "wrt": (0, 1, 2, 3),
         "hand": pendulum_adjoint_by_hand},
        {"name": "Lorenz-96", "size": "40 states, 2000 RK4 steps", "f": lorenz96,
         "helpers": (l96,), "args": (8.0 + rng.normal(size=40), 8.0, 2000), "wrt": (0, 1)},
        {"name": "MLP", "size": "batch 256, 64-128-10", "f": mlp_loss,
         "args": mlp_args, "wrt": (0, 1, 2, 3)},
    ]


# ---- measuring -------------------------------------------------------------------------------

def flat_grad(value):
    """A gradient (or tuple of them, JAX arrays included) as one float64 vector."""
    if isinstance(value, (tuple, list)):
        return flat(*[np.asarray(v, dtype=np.float64) for v in value])
    return flat(np.asarray(value, dtype=np.float64))


def repetitions(call):
    """How many calls one sample makes so that it lasts about SAMPLE seconds."""
    start = time.perf_counter()
    call()
    once = time.perf_counter() - start
    return max(1, min(1000, int(SAMPLE / max(once, 1e-7))))


def timed_rounds(calls: dict, mode: dict) -> tuple[dict, int]:
    """Median seconds per call of each callable, all of them called in turn each round."""
    reps = {name: repetitions(call) for name, call in calls.items()}
    samples = {name: [] for name in calls}
    start = time.perf_counter()
    rounds = 0
    while rounds < mode["max_rounds"]:
        if rounds >= mode["min_rounds"] and time.perf_counter() - start > mode["budget"]:
            break
        order = list(calls)
        order = order[rounds % len(order):] + order[:rounds % len(order)]  # rotate who goes first
        for name in order:
            call, k = calls[name], reps[name]
            t0 = time.perf_counter()
            for _ in range(k):
                call()
            samples[name].append((time.perf_counter() - t0) / k)
        rounds += 1
    return {name: statistics.median(s) for name, s in samples.items()}, rounds


def first_call(make):
    """Seconds to build and make the first call, and what that call returned."""
    start = time.perf_counter()
    call = make()
    out = call()
    return time.perf_counter() - start, call, out


def build(problem, jax, jax_f, row):
    """Every callable of one problem, each called once (first-call times go into row),
    and srcgrad's gradient checked against JAX's and the hand-written adjoint's."""
    import srcgrad

    f, args, wrt = problem["f"], problem["args"], problem["wrt"]
    argnums = wrt if isinstance(wrt, tuple) else (wrt,)
    sizes = tuple(k for k, a in enumerate(args) if isinstance(a, int))
    jargs = tuple(jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a for a in args)

    primal = njit_with(f, *problem.get("helpers", ()))
    row["primal_first"], primal_call, value = first_call(lambda: lambda: primal(*args))
    made = []

    def make_srcgrad():
        made.append(srcgrad.grad(f, wrt=wrt))
        return lambda: made[0](*args)
    row["srcgrad_first"], srcgrad_call, got = first_call(make_srcgrad)
    if made[0].backend != "numba":
        row["notes"].append(f"srcgrad ran as {made[0].backend}")
    jax_primal = jax.jit(jax_f, static_argnums=sizes)
    jax_grad = jax.jit(jax.grad(jax_f, argnums=argnums), static_argnums=sizes)
    row["jax_primal_first"], jax_primal_call, jax_value = first_call(
        lambda: lambda: jax.block_until_ready(jax_primal(*jargs)))
    row["jax_first"], jax_call, expected = first_call(
        lambda: lambda: jax.block_until_ready(jax_grad(*jargs)))
    calls = {"primal": primal_call, "srcgrad": srcgrad_call, "jax": jax_call,
             "jax_primal": jax_primal_call}
    errors = [float(np.max(mismatch(flat_grad(got), flat_grad(expected)))),
              float(mismatch(value, float(jax_value)))]
    hand = problem.get("hand")
    if hand is not None:
        errors.append(float(np.max(mismatch(flat_grad(got), flat_grad(hand(*args))))))
        calls["hand"] = lambda: hand(*args)
    row["error"] = max(errors)
    row["valid"] = row["error"] <= TOLERANCE
    return calls


PEAKS = ("srcgrad", "jax", "hand")


def measure_problem(problem, jax, jax_f, mode):
    row = {"name": problem["name"], "size": problem["size"], "notes": []}
    calls = build(problem, jax, jax_f, row)
    medians, row["rounds"] = timed_rounds(calls, mode)
    row.update(medians)
    return row


def peaks(selected, jax, jax_fs) -> dict:
    """Peak resident-set growth of one call of each gradient, per problem (run in a child
    process started with MALLOC_MMAP_THRESHOLD_ fixed, see measure.py)."""
    out = {}
    for problem in selected:
        row = {"notes": []}
        calls = build(problem, jax, jax_fs[problem["name"]], row)
        out[problem["name"]] = {k: measure.peak_growth(calls[k]) for k in PEAKS if k in calls}
    return out


def peaks_in_child(names) -> dict:
    """Run `peaks` in a fresh process whose glibc hands large freed blocks back to the
    kernel (its generated code comes from this run's srcgrad cache)."""
    env = dict(os.environ, **MALLOC)
    out = Path(tempfile.mkstemp(prefix="new-user-peaks-", suffix=".json")[1])
    try:
        subprocess.run([sys.executable, __file__, "--peaks-json", str(out),
                        "--only", ",".join(names)], env=env, check=True)
        return json.loads(out.read_text())
    finally:
        out.unlink(missing_ok=True)


# ---- report ----------------------------------------------------------------------------------

def fmt_mib(value):
    return "-" if value is None else f"{value / 2 ** 20:.1f}"


def ratio(a, b):
    return "-" if a is None or b is None else f"{a / b:.1f}x"


def table(rows) -> str:
    head = ("| problem | size | numba primal | srcgrad grad | srcgrad / primal | JAX grad "
            "| JAX grad / numba primal | srcgrad / JAX | hand adjoint | hand / primal "
            "| JAX primal | peak MiB srcgrad / JAX / hand | first call srcgrad / JAX | check "
            "| rounds |")
    lines = [head, "|" + "---|" * head.count(" | ") + "---|"]
    for r in rows:
        check = "ok" if r["valid"] else f"MISMATCH {r['error']:.1e}"
        peaks = " / ".join(fmt_mib(r.get(f"{k}_peak")) for k in ("srcgrad", "jax", "hand"))
        lines.append(
            f"| {r['name']} | {r['size']} | {fmt_time(r['primal'])} | {fmt_time(r['srcgrad'])} "
            f"| **{ratio(r['srcgrad'], r['primal'])}** | {fmt_time(r['jax'])} "
            f"| {ratio(r['jax'], r['primal'])} | **{ratio(r['srcgrad'], r['jax'])}** "
            f"| {fmt_time(r.get('hand'))} | {ratio(r.get('hand'), r['primal'])} "
            f"| {fmt_time(r['jax_primal'])} | {peaks} "
            f"| {fmt_time(r['srcgrad_first'])} / {fmt_time(r['jax_first'])} | {check} "
            f"| {r['rounds']} |")
    return "\n".join(lines)


def header(mode_name, mode, seconds, load) -> str:
    from importlib import metadata

    import srcgrad
    where = Path(srcgrad.__file__).resolve().parent.parent  # the checkout srcgrad came from
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=where,
                                capture_output=True, text=True).stdout.strip() or "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "srcgrad"], cwd=where,
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        commit, dirty = "unknown", ""
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in ("numpy", "numba", "jax"))
    return (f"# Loop code as a new user writes it (`python bench/new_user.py"
            f"{' --quick' if mode_name == 'quick' else ''}`)\n\n"
            f"srcgrad at {commit}{' with uncommitted changes under srcgrad/' if dirty else ''}; "
            f"{versions}; one thread each; medians of {mode['min_rounds']} to "
            f"{mode['max_rounds']} interleaved rounds per problem (within about "
            f"{mode['budget']:.0f} s); load average "
            f"{load[0]:.1f} / {load[1]:.1f} at the start and the end on "
            f"{os.cpu_count()} cores; {seconds:.0f} s in all.\n\n"
            "srcgrad / primal: srcgrad's gradient against numba.njit of the same function; "
            "srcgrad / JAX: srcgrad's gradient time over jax.jit(jax.grad(f)) (below 1 means "
            "srcgrad is faster); peak: resident-set growth during one gradient call (under "
            "about 1 MiB is noise; measured in a second process with MALLOC_MMAP_THRESHOLD_ "
            "fixed, timings with glibc's thresholds at their steady state); first call: building and compiling the "
            "gradient plus its first call (srcgrad: transformation + numba, with an empty "
            "cache; JAX: tracing + XLA); check: srcgrad's gradient against JAX's and the "
            "hand-written adjoint's, "
            f"|x - y| / max(1, |x| + |y|) <= {TOLERANCE}.\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (under a minute)")
    parser.add_argument("--pin", type=int, default=None, help="run on this CPU only")
    parser.add_argument("--only", default=None, help="comma-separated problem names")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "new_user.md"))
    parser.add_argument("--peaks-json", default=None, help=argparse.SUPPRESS)  # the child's
    opts = parser.parse_args()
    if opts.pin is not None:
        os.sched_setaffinity(0, {opts.pin})
    if not opts.peaks_json:
        measure.steady_allocator()  # as the suite's workers time (bench/measure.py)
    mode_name = "quick" if opts.quick else "full"
    mode = MODES[mode_name]

    from bench.problems.peers import jax as load_jax
    jax = load_jax()
    jax_fs = jax_versions(jax)
    selected = [p for p in problems() if not opts.only or p["name"] in opts.only.split(",")]
    if opts.peaks_json:
        Path(opts.peaks_json).write_text(json.dumps(peaks(selected, jax, jax_fs)))
        return
    start, load_start = time.perf_counter(), os.getloadavg()[0]
    rows = []
    for problem in selected:
        row = measure_problem(problem, jax, jax_fs[problem["name"]], mode)
        rows.append(row)
        print(f"{row['name']}: srcgrad/primal {ratio(row['srcgrad'], row['primal'])}, "
              f"srcgrad/JAX {ratio(row['srcgrad'], row['jax'])}, {row['rounds']} rounds",
              file=sys.stderr, flush=True)
    print("peak memory, in a fresh process", file=sys.stderr, flush=True)
    measured = peaks_in_child([r["name"] for r in rows])
    for row in rows:
        row.update({f"{k}_peak": v for k, v in measured.get(row["name"], {}).items()})
    text = header(mode_name, mode, time.perf_counter() - start,
                  (load_start, os.getloadavg()[0])) + "\n" + table(rows) + "\n"
    notes = [f"- {r['name']}: {n}" for r in rows for n in r["notes"]]
    if notes:
        text += "\n" + "\n".join(notes) + "\n"
    Path(opts.out).parent.mkdir(parents=True, exist_ok=True)
    Path(opts.out).write_text(text)
    print(text)
    cache = os.environ.get("SRCGRAD_CACHE_DIR", "")
    if Path(cache).name.startswith("srcgrad-new-user-"):
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
