"""A campaign of inner-loop accumulators, the shape transforms/exit_tapes.py rewrites.

    python -m tests.fuzz.accumulators [--programs 100] [--seed 1]

Each program carries a value `r` through an inner loop (`for` over `range(i)`,
`range(1, i)`, `range(x.shape[0])`, a constant range, or a `while`), updated by one or two
`r = r +/- term` per iteration, sometimes by a second loop after it, then read once per
outer iteration. The general fuzzer (campaign.py) rarely draws this shape. Each gradient
is run in its compiled form (SRCGRAD_LOOPS=strict) and must equal the generated
function's own gradient to the last bit and central differences to 1e-5; the summary
says how many tapes the pass rewrote.
"""
from __future__ import annotations

import random
import sys
import tempfile

from .targeted import arguments, counting, exact_failure, load

_TERMS = ["x[j] * 0.5", "np.sin(x[j])", "x[j] * x[j]", "0.3 * x[j] * t", "x[j] / (2.0 + i)"]
_READS = ["total += r * r", "total += np.sin(r)", "total = total + r", "total += r * x[i]"]


def program(rng: random.Random) -> str:
    body = [f"r = r {rng.choice('+-')} {rng.choice(_TERMS)}" for _ in range(rng.choice([1, 1, 2]))]
    if rng.random() < 0.3:
        body.append("u = r * 2.0")
    bound = rng.choice(["range(i)", "range(x.shape[0])", "range(1, i)", "range(2)", "while"])
    pad = " " * 12
    if bound == "while":
        loop = "        j = 0\n        while j < i:\n" + "".join(f"{pad}{b}\n" for b in body) \
            + f"{pad}j += 1\n"
    else:
        loop = f"        for j in {bound}:\n" + "".join(f"{pad}{b}\n" for b in body)
    second = f"        for j in range(2):\n{pad}r = r + x[j] * 0.25\n" \
        if rng.random() < 0.25 else ""
    return (f"import numpy as np\n\n\ndef f(x):\n    total = 0.0\n"
            f"{rng.choice(['', '    r = 0.0' + chr(10)])}"
            f"    for i in range(x.shape[0]):\n        t = 0.5 * i\n"
            f"        r = {rng.choice(['x[i]', 'np.sign(x[i])', '0.0', 'x[i] * 2.0'])}\n"
            f"{loop}{second}"
            f"        {rng.choice(_READS)}\n"
            "    return total\n")


def main(argv=None) -> int:
    args = arguments(__doc__, argv, "acc")
    import numpy as np
    from srcgrad.transforms import loops

    rewritten = counting(loops, "exit_tapes")
    folder, rng, bad = tempfile.mkdtemp(prefix="srcgrad-acc-src-"), random.Random(args.seed), 0
    for k in range(args.programs):
        module, path = load(folder, f"acc_{args.seed}_{k}", program(rng))
        x = np.random.default_rng(k).uniform(-0.9, 0.9, 5)
        failure = exact_failure(module.f, 0, (x,), path)
        if failure:
            bad += 1
            print(failure)
    print(f"{args.programs} programs, {bad} failing, {rewritten[0]} tapes kept at a loop's exit")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
