"""A fuzz campaign for loops whose values change shape between iterations.

    python -m tests.fuzz.varying [--programs 300] [--seed 1] [--jit-fraction 0.1]

The main generator (programs.py) types every value with a fixed shape; this one
draws loops over `j` whose slices follow the loop (`x[:j]`, `x[j:]`, `x[j - 1:]`),
scratch arrays sized by `j` (`np.zeros(j)`), slice writes of both halves, carried
values that shrink (`y = y[1:] * c`), and a name bound to different shapes in the
two arms of a branch (a caveat analysis/shape_classes.py states). Each program's
gradient (wrt x and w) is compared with central finite differences; a mismatch,
or an error other than srcgrad's clear refusals, is printed with its source.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import random
import sys
import tempfile
import traceback
import warnings

import numpy as np

_SLICES = ["x[:j]", "x[j:]", "x[j - 1:]", "x[:n - j]", "x[1:j + 1]"]
_UNARY = ["np.sin({})", "np.cos({})", "np.tanh({})", "np.exp(0.3 * {})", "({}) * ({})",
          "{} * w[j % 3]", "{} + w[0]", "2.5 * {}", "{} - 0.5"]


def _elementwise(rng, leaf, depth=2):
    e = leaf
    for _ in range(rng.randint(1, depth)):
        e = rng.choice(_UNARY).format(e, e)
    return e


def _statement(rng):
    kind = rng.randrange(6)
    s = rng.choice(_SLICES)
    if kind == 0:  # a temporary of a moving slice, reduced
        red = rng.choice(["np.sum(t * t)", "np.sum(t) * w[1]", "np.max(t)", "np.mean(t * w[2])"])
        return [f"t = {_elementwise(rng, s)}", f"total += {red}"]
    if kind == 1:  # both halves of a scratch array written from moving slices
        return ["m = x * 1.5", f"m[:j] = {_elementwise(rng, 'x[:j]')}",
                f"m[j:] = {_elementwise(rng, 'x[j:]')}", "total += np.sum(m * m)"]
    if kind == 2:  # scratch sized by the loop
        return ["z = np.zeros(j)", f"z[:] = {_elementwise(rng, 'x[:j]')}",
                "total += np.sum(z * x[:j])"]
    if kind == 3:  # a shape chosen by a branch
        a, b = _elementwise(rng, "x[:2]", 1), _elementwise(rng, "x[1:]", 1)
        return ["if j % 2 == 0:", f"    u = {a}", "else:", f"    u = {b}",
                rng.choice(["total += np.sum(u * 3.0)", "total += np.sum(u * u)"])]
    if kind == 4:  # a slice read into an accumulation without a temporary
        return [f"total += np.sum({_elementwise(rng, s)} * {rng.choice(_SLICES)}[:1])"]
    return [f"total += np.sum({_elementwise(rng, s)})"]


def program(rng) -> str:
    body = [line for _ in range(rng.randint(1, 3)) for line in _statement(rng)]
    carried = rng.random() < 0.3
    lines = ["import numpy as np", "", "", "def f(x, w, n):", "    total = 0.0"]
    if carried:
        lines.append("    y = x * 1.0")
    lines.append("    for j in range(1, n):")
    lines += ["        " + line for line in body]
    if carried:
        lines.append("        y = y[1:] * 0.9 + 0.1 * y[:1]")
    lines.append("    return total" + (" + np.sum(y * y)" if carried else ""))
    return "\n".join(lines) + "\n"


def _fd(f, args, k, h=1e-6):
    base = np.array(args[k], dtype=float)
    g = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        up, down = list(args), list(args)
        up[k], down[k] = base.copy(), base.copy()
        up[k][idx] += h
        down[k][idx] -= h
        g[idx] = (f(*up) - f(*down)) / (2 * h)
    return g


def check(source: str, jit: bool, folder: str, number: int):
    """'ok', 'refused' (a clear srcgrad error) or ('wrong' | 'crash', detail)."""
    import srcgrad

    path = os.path.join(folder, f"varying_{number}.py")
    with open(path, "w") as out:
        out.write(source)
    spec = importlib.util.spec_from_file_location(f"varying_{number}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x, w, n = np.array([0.3, -0.7, 1.1, 0.4, -0.2]), np.array([0.5, -0.4, 0.9]), 5
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gx, gw = srcgrad.grad(module.f, wrt=(0, 1), jit=jit)(x, w, n)
    except srcgrad.SrcgradError:
        return "refused"
    except Exception:
        return "crash", traceback.format_exc(limit=3)
    ex, ew = _fd(module.f, (x, w, n), 0), _fd(module.f, (x, w, n), 1)
    if np.allclose(gx, ex, rtol=1e-5, atol=1e-6) and np.allclose(gw, ew, rtol=1e-5, atol=1e-6):
        return "ok"
    return "wrong", f"srcgrad {gx} {gw}\nfinite differences {ex} {ew}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jit-fraction", type=float, default=0.1)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="srcgrad-varying-") as folder:
        sys.path.insert(0, folder)
        for number in range(args.programs):
            source = program(rng)
            jit = rng.random() < args.jit_fraction
            outcome = check(source, jit, folder, number)
            kind = outcome if isinstance(outcome, str) else outcome[0]
            counts[kind] = counts.get(kind, 0) + 1
            if not isinstance(outcome, str):
                print(f"--- program {number} (jit={jit}): {kind}\n{source}{outcome[1]}\n")
    print(counts)
    return 0 if set(counts) <= {"ok", "refused"} else 1


if __name__ == "__main__":
    sys.exit(main())
