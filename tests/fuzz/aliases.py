"""A campaign of second names for arrays that are written into (frontend/second_names.py).

    python -m tests.fuzz.aliases [--programs 100] [--seed 1]

Each program keeps three vectors a, b, c (and sometimes a 2 x 4 matrix M) and
runs statements drawn from: a second name (`a = b`), a swap (`a, b = b, a`), a
tuple bind (`a, c = b, np.cos(c)`), a chained assignment (`a = b = np.sin(c)`),
a list display read back (`L = [a]`), rows unpacked (`a, b = M`), a view
(`a = b[::-1]`), calls returning their argument or writing into a copy, a write
(`a[i] = ...`, `M[0, i] = ...`, `np.copyto(a, ...)`, `out=a`), an in-place update
(`a += b`), a fresh rebinding, and reads into the running sum s; at the top level
or in a loop (frontend/second_names.py, outputs.py and aliasing.py at work).
NumPy's result is the oracle: srcgrad must give NumPy's value and a gradient
within 1e-5 of central differences, or raise SrcgradError saying the write
would be seen through shared memory (NumPy's semantics there differ from
srcgrad's, which never differentiates a shared write). A quarter of the
programs run compiled (numba), the rest as Python. The summary counts both.
"""
from __future__ import annotations

import random
import sys
import tempfile

from .targeted import arguments, load

_VECS = ["a", "b", "c"]
_SHARED = ("shares memory", "holds it")  # aliasing.py's messages for a shared write
# Helpers the programs call (inlined): one returns its argument, one writes into a copy.
_HELPERS = ("def same(v):\n    return v\n\n\ndef pick(v, w):\n    t = v\n    return t\n\n\n"
            "def scaled(v, k):\n    v = v.copy()\n    v[0] = v[0] * k\n    return v\n\n\n")


def _statement(rng: random.Random, matrix: bool, idx: str) -> str:
    u, v, w = rng.sample(_VECS, 3)
    kinds = [
        f"{u} = {v}", f"{u}, {v} = {v}, {u}", f"{u}, {w} = {v}, np.cos({w})",
        f"{u} = {v} = np.sin({w}) * 0.5", f"L = [{u}]\n{{p}}s = s + np.sum(L[0] * x)",
        f"{u}[{idx}] = np.tanh({v}[{idx}] + s * 0.1)", f"{u} += 0.5 * {v}",
        f"{u} = {v} * 0.5 + np.sin({w})", f"s = s + np.sum({u} * {v})",
        f"s = s + np.sum(np.sin({u}) * x)", f"{u} = same({v})", f"{u} = pick({v}, {w})",
        f"{u} = {v}[::-1]", f"{u} = scaled({v}, 0.5)", f"np.copyto({u}, np.sin({v}))",
        f"np.multiply({u}, {v}, out={u})", f"{w} = np.add({v}, 0.5, out={u})",
    ]
    if matrix:
        kinds += [f"{u}, {v} = M", f"M[0, {idx}] = np.cos(s)", "M = np.stack((a, b))",
                  f"s = s + np.sum(M * M) * 0.1"]
    return rng.choice(kinds)


def program(rng: random.Random) -> str:
    matrix = rng.random() < 0.3
    loop = rng.random() < 0.5
    pad = " " * (8 if loop else 4)
    idx = "k" if loop and rng.random() < 0.5 else str(rng.randrange(4))
    body = [_statement(rng, matrix, idx) for _ in range(rng.randint(2, 6))]
    lines = "".join(pad + s.replace("{p}", pad) + "\n" for s in body)
    head = ("import numpy as np\n\n\n" + _HELPERS + "def f(x):\n    a = x * 1.0\n    b = np.sin(x)\n"
            "    c = x * x\n    s = 0.0\n" + ("    M = np.stack((a, c))\n" if matrix else ""))
    if loop:
        head += f"    for k in range({rng.choice([2, 3])}):\n"
    end = "    return s + np.sum(a * x) + np.sum(np.cos(b)) + np.sum(c)"
    return head + lines + end + (" + np.sum(M)\n" if matrix else "\n")


def check(func, x, jit: bool, path: str) -> str | None:
    """'ok', 'refused' (a shared write NumPy would show), or the failure's line."""
    import numpy as np
    import srcgrad
    from tests.gradcheck import numerical_grad

    try:
        expected = func(x.copy())
    except Exception:
        return "invalid"  # not a NumPy program (a shape that does not fit)
    try:
        value, grad = srcgrad.value_and_grad(func, jit=jit)(x.copy())
    except srcgrad.SrcgradError as exc:
        if any(s in str(exc) for s in _SHARED) and path in str(exc):
            return "refused"
        return f"ERROR {path}: {type(exc).__name__}: {exc}"
    except Exception as exc:
        return f"ERROR {path}: {type(exc).__name__}: {exc}"
    if not np.isclose(value, expected, rtol=1e-12, atol=1e-12):
        return f"VALUE {path}: srcgrad {value!r}, NumPy {expected!r}"
    fd = numerical_grad(func, (x,), 0)
    if not np.allclose(grad, fd, rtol=1e-5, atol=1e-6):
        return f"GRADIENT {path}: max error {np.max(np.abs(grad - fd)):.3g}, jit {jit}"
    return "ok"


def main(argv=None) -> int:
    args = arguments(__doc__, argv, "alias")
    import numpy as np

    folder, rng = tempfile.mkdtemp(prefix="srcgrad-alias-src-"), random.Random(args.seed)
    counts: dict[str, int] = {}
    for k in range(args.programs):
        module, path = load(folder, f"alias_{args.seed}_{k}", program(rng))
        x = np.random.default_rng(k).uniform(-0.9, 0.9, 4)
        outcome = check(module.f, x, rng.random() < 0.25, path)
        if outcome not in ("ok", "refused", "invalid"):
            print(outcome)
            outcome = "failed"
        counts[outcome] = counts.get(outcome, 0) + 1
    print(f"{args.programs} programs (seed {args.seed}): "
          + ", ".join(f"{n} {what}" for what, n in sorted(counts.items())))
    return 1 if counts.get("failed") else 0


if __name__ == "__main__":
    sys.exit(main())
