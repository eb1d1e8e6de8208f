"""What structured arguments, float32 and compiled reductions cost (issue 15).

    python bench/structures.py [--rounds 15] [--out bench/results/structures.md]

Each row is a ratio of two medians of CPU time (`time.process_time`) over rounds
that alternate the two sides, so load on a shared machine hits both:
(a) a gradient with respect to a dict of parameters against the same loss
    written with one parameter per array (what describing the dict, reading its
    leaves and rebuilding the gradient dict adds), for a tiny and a larger MLP;
(b) float32 inputs against float64 inputs of the same loss (the float32 data are
    widened to float64 at each call);
(c) a softmax cross-entropy with `max(axis=1, keepdims=True)`, compiled by numba,
    against the same generated code run as Python (before issue 15 these
    reductions made srcgrad fall back to Python).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import srcgrad  # noqa: E402


def mlp_loss(params, x, y):
    h = np.tanh(params["W1"] @ x + params["b1"])
    return np.sum((params["W2"] @ h + params["b2"] - y) ** 2)


def flat_loss(W1, b1, W2, b2, x, y):
    h = np.tanh(W1 @ x + b1)
    return np.sum((W2 @ h + b2 - y) ** 2)


def logistic(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def softmax_xent(z, y):
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    p = e / e.sum(axis=1, keepdims=True)
    return -np.mean(np.sum(y * np.log(p), axis=1))


def _cpu(call) -> float:
    start = time.process_time()
    call()
    return time.process_time() - start


def ratio(first, second, rounds: int, repeat: int) -> tuple[float, float, float]:
    """(median seconds of first, of second, first / second), alternating."""
    a, b = [], []
    for _ in range(rounds):
        a.append(_cpu(lambda: [first() for _ in range(repeat)]) / repeat)
        b.append(_cpu(lambda: [second() for _ in range(repeat)]) / repeat)
    ma, mb = statistics.median(a), statistics.median(b)
    return ma, mb, ma / mb


def _mlp_rows(rng, rounds):
    rows = []
    for hidden, batch, repeat in ((4, 1, 2000), (256, 256, 20)):
        W1, b1 = rng.normal(size=(hidden, 32)), rng.normal(size=hidden)
        W2, b2 = rng.normal(size=(8, hidden)), rng.normal(size=8)
        x, y = rng.normal(size=(32, batch)).squeeze(), rng.normal(size=(8, batch)).squeeze()
        if batch > 1:
            b1, b2 = b1[:, None], b2[:, None]
        params = {"W1": W1, "b1": b1, "W2": W2, "b2": b2}
        tree = srcgrad.grad(mlp_loss)
        flat = srcgrad.grad(flat_loss, wrt=(0, 1, 2, 3))
        tree(params, x, y), flat(W1, b1, W2, b2, x, y)
        t, f, r = ratio(lambda: tree(params, x, y), lambda: flat(W1, b1, W2, b2, x, y),
                        rounds, repeat)
        rows.append((f"dict of parameters / flat parameters, MLP 32-{hidden}-8, batch {batch}",
                     t, f, r))
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "structures.md"))
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    rows = _mlp_rows(rng, args.rounds)
    X, w = rng.normal(size=(20000, 50)), rng.normal(size=50) * 0.1
    y = (rng.random(20000) > 0.5) * 1.0
    g = srcgrad.grad(logistic)
    X32, w32, y32 = X.astype(np.float32), w.astype(np.float32), y.astype(np.float32)
    g(w32, X32, y32), g(w, X, y)
    rows.append(("float32 / float64 inputs, logistic loss, X 20000x50",
                 *ratio(lambda: g(w32, X32, y32), lambda: g(w, X, y), args.rounds, 5)))
    z, labels = rng.normal(size=(2000, 10)), np.eye(10)[rng.integers(0, 10, 2000)]
    compiled, python = srcgrad.grad(softmax_xent), srcgrad.grad(softmax_xent, jit=False)
    compiled(z, labels), python(z, labels)
    assert compiled.backend == "numba"
    rows.append(("softmax with keepdims: numba / the same code as Python, z 2000x10",
                 *ratio(lambda: compiled(z, labels), lambda: python(z, labels), args.rounds,
                        5)))
    lines = ["| measurement | first | second | ratio |", "|---|---|---|---|"]
    lines += [f"| {name} | {a * 1e6:.1f} µs | {b * 1e6:.1f} µs | {r:.2f}x |"
              for name, a, b, r in rows]
    text = "\n".join(lines)
    print(text)
    Path(args.out).write_text(f"# bench/structures.py ({args.rounds} rounds, CPU time, "
                              "medians)\n\n" + text + "\n")


if __name__ == "__main__":
    main()
