"""A campaign of loops reading arrays at offsets, some past their ends: the accesses
transforms/bounds.py checks itself before compiling without numba's boundscheck.

    python -m tests.fuzz.indices [--programs 100] [--seed 1]

Each program loops over a range (from 0 or 1, to an extent, a parameter m or an extent
minus one, forwards, backwards or by 2), reads arrays of different lengths at the loop
index plus or minus a constant, through a name bound to such a sum, at constants, at an
outer loop's index in an inner loop, inside branches, after a `break`, and write slices
bounded by the index. Arguments are drawn so that some programs index past an end (or
before the start, which NumPy wraps) or combine slices of different lengths. Where
NumPy raises IndexError (ValueError) the gradient must raise it too; elsewhere it must run
its compiled form (SRCGRAD_LOOPS=strict), equal the generated function's own gradient to
1e-13 (the form may sum in another order: README, "The compiled form") and central
differences to 1e-5. The summary says in how many programs the
form checked its own indices.
"""
from __future__ import annotations

import random
import sys
import tempfile

from .targeted import arguments, counting, load

_RANGES = ["range(n)", "range(1, n)", "range(m)", "range(n - 1, -1, -1)", "range(0, n, 2)",
           "range(m, 0, -1)", "range(1, k)"]
_ARRAYS = ["z", "y", "x"]


def _index(rng, var):
    c = rng.choice([0, 0, 0, 1, -1, 2, -2])
    return var if c == 0 else f"{var} + {c}" if c > 0 else f"{var} - {-c}"


def program(rng: random.Random) -> str:
    pad, body = " " * 8, []
    for _ in range(rng.randint(1, 3)):
        a, b = rng.choice(_ARRAYS), rng.choice(_ARRAYS)
        shape = rng.random()
        if shape < 0.4:
            body.append(f"total += {a}[{_index(rng, 'i')}] * {b}[{_index(rng, 'i')}]")
        elif shape < 0.55:
            body.append(f"j = {_index(rng, 'i')}")
            body.append(f"total += np.sin({a}[j]) * {b}[i]")
        elif shape < 0.65:
            body.append(f"total += {a}[{rng.choice([0, 1, 3, -1])}] * {b}[i]")
        elif shape < 0.75:
            body.append(f"if i % 2 == 0:\n{pad}    total += {a}[{_index(rng, 'i')}] ** 2")
        elif shape < 0.85:
            body.append(f"for q in range({rng.choice(['i', '2', 'k'])}):\n{pad}    "
                        f"total += {a}[q] * {b}[{_index(rng, 'i')}]")
        elif shape < 0.92:
            body.append(f"w[{_index(rng, 'i')}] += {a}[i] * 0.5")
        else:  # slices bounded by names (flat_views.py reads them as elements)
            bound = rng.choice(["i", "i + 1", "2"])
            body.append(f"w[:{bound}] = w[:{bound}] * 0.9 + {a}[1:{bound} + 1] * 0.1")
    if rng.random() < 0.2:
        body.insert(rng.randint(0, len(body)), f"if i >= {rng.choice([2, 3])}:\n{pad}    break")
    return ("import numpy as np\n\n\ndef f(x, y, m):\n    n = x.shape[0]\n    k = y.shape[0]\n"
            "    z = np.sin(x) * 1.5 + x\n    w = np.cos(y) * y\n    total = 0.0\n"
            f"    for i in {rng.choice(_RANGES)}:\n"
            + "".join(f"{pad}{line}\n" for line in body)
            + "    return total + np.sum(w * w)\n")


def main(argv=None) -> int:
    args = arguments(__doc__, argv, "idx")
    import numpy as np
    import srcgrad
    from srcgrad.backend import fused
    from tests.gradcheck import gradient_without_forms, numerical_grad

    owned = counting(fused, "own_bounds")
    folder, rng = tempfile.mkdtemp(prefix="srcgrad-idx-src-"), random.Random(args.seed)
    bad = raised = 0
    for p in range(args.programs):
        module, path = load(folder, f"idx_{args.seed}_{p}", program(rng))
        draw = np.random.default_rng(p)
        x = draw.uniform(-0.9, 0.9, rng.choice([3, 5, 6, 6]))
        y = draw.uniform(-0.9, 0.9, rng.choice([2, 7, 8, 9]))
        m = rng.choice([0, 2, 5, 5, 7])
        try:
            module.f(x, y, m)
            expected = None
        except (IndexError, ValueError) as exc:  # ValueError: slices of other lengths
            expected = type(exc)
        try:
            g = srcgrad.grad(module.f, wrt=(0, 1))
            got = g(x, y, m)
        except (IndexError, ValueError) as exc:
            if expected is not type(exc):
                bad += 1
                print(f"{type(exc).__name__} where NumPy raised {expected}: {path}")
            raised += 1
            continue
        except Exception as exc:
            bad += 1
            print(f"ERROR {path}: {type(exc).__name__}: {exc}")
            continue
        if expected is not None:
            bad += 1
            print(f"MISSED {expected.__name__} {path}: the gradient returned {got}")
            continue
        base = gradient_without_forms(module.f, (0, 1), (x, y, m))
        same = all(np.allclose(a, b, rtol=1e-13, atol=1e-15) for a, b in zip(got, base))
        close = all(np.allclose(a, numerical_grad(module.f, (x, y, m), j), rtol=1e-5,
                                atol=1e-6) for j, a in enumerate(got))
        if not (same and close and g.backend == "numba"):
            bad += 1
            print(f"MISMATCH {path}: same to 1e-13 {same}, close to FD {close}, {g.backend}")
    print(f"{args.programs} programs, {bad} failing, {raised} raised IndexError or "
          f"ValueError as NumPy does; {owned[0]} compiled forms checked their own indices")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
