"""A campaign of recurrent matrix-vector products, the shape transforms/products.py rewrites.

    python -m tests.fuzz.products [--programs 100] [--seed 1]

Each program carries a state `h` through a loop over the rows of `xs`, updated by
products with two matrices from either side (`W @ h`, `h @ W`, `xs[t] @ V`, a product of
a product), sometimes in an inner loop, and reads dot products of the state into a total.
Sizes are drawn from 1 to 4 (a 1-element state, a 1x1 matrix). Each gradient (with respect
to every argument) runs in its compiled form (SRCGRAD_LOOPS=strict) and must equal the
generated function's own gradient to the last bit and central differences to 1e-5; the
summary says how many products the pass added in place.
"""
from __future__ import annotations

import random
import sys
import tempfile

from .targeted import arguments, counting, exact_failure, load

_UPDATES = [
    "h = np.tanh(W @ h + xs[t])",
    "h = np.tanh(h @ W + xs[t])",
    "h = np.sin(W @ h) * 0.5 + xs[t]",
    "h = np.tanh(W @ h - V @ xs[t])",
    "h = 0.5 * h + np.tanh(xs[t] @ V + h @ W)",
    "h = np.tanh(W @ (h * xs[t]))",
    "h = h - 0.1 * (V @ (W @ h))",
    "h = np.tanh(W @ h + (xs[t] @ h) * xs[t])",
]
_READS = [
    "total += np.tanh(xs[t] @ h)",
    "total += h @ h",
    "total = total + np.sin(V @ h) @ xs[t]",
    "total += (h @ V) @ xs[t]",
    "total -= 0.5 * (h @ h)",
]


def program(rng: random.Random) -> str:
    body = [rng.choice(_UPDATES)]
    if rng.random() < 0.5:
        body.append(rng.choice(_READS))
    if rng.random() < 0.3:
        inner = "for l in range(2):\n            " + rng.choice(_UPDATES)
        body.insert(rng.randrange(len(body) + 1), inner)
    lines = "".join(f"        {b}\n" for b in body)
    return ("import numpy as np\n\n\ndef f(W, V, h0, xs):\n    h = h0\n    total = 0.0\n"
            f"    for t in range(xs.shape[0]):\n{lines}"
            "    return total + np.sum(h * h)\n")


def main(argv=None) -> int:
    args = arguments(__doc__, argv, "products")
    import numpy as np
    from srcgrad.transforms import loops

    rewritten = counting(loops, "outer_products")
    folder, rng, bad = tempfile.mkdtemp(prefix="srcgrad-products-src-"), random.Random(args.seed), 0
    for k in range(args.programs):
        module, path = load(folder, f"products_{args.seed}_{k}", program(rng))
        n, steps = rng.randint(1, 4), rng.randint(1, 4)
        draw = np.random.default_rng(k)
        values = (draw.normal(size=(n, n)) * 0.5, draw.normal(size=(n, n)) * 0.5,
                  draw.normal(size=n) * 0.5, draw.normal(size=(steps, n)) * 0.5)
        failure = exact_failure(module.f, (0, 1, 2, 3), values, path)
        if failure:
            bad += 1
            print(failure)
    print(f"{args.programs} programs, {bad} failing, {rewritten[0]} products added in place")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
