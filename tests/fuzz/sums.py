"""A campaign of sum loops, the shape transforms/immediate.py reverses in place.

    python -m tests.fuzz.sums [--programs 100] [--seed 1]

Each program `f(x, y)` (x, y 1-d or 2-d, every index valid) runs one counted loop whose
iterations update one or two sums (`total += e`, `total = total + e`, `total = e + total`)
from scalar temporaries of elements (products, sin, cos, exp, tanh, sqrt(1 + a*a), division
by 2 + a*a), `if`s on an element's sign (sometimes nested) binding names in both branches
or in one and read only there, a small array per iteration read at constant positions or
summed, inlined helpers on rows, and element writes into an array made in the iteration;
it returns the sum (sometimes through a copy), an affine function of it, or of two sums.
A quarter of the programs carry a feature the pass must refuse: a name bound in one
branch and read after the `if`, a name rebound in a branch, a value carried to the next
iteration, a sum read in the loop, a `break`, a result whose adjoint depends on the sums
(`total * total`). Inputs are in +-[0.2, 0.9] and branches test elements against 0.0:
every program is differentiable where it is drawn.

Each gradient (wrt both arguments), compiled (SRCGRAD_LOOPS=strict, backend numba) and
with jit=False, must be close to central differences (1e-5) and equal (1e-12) the gradient
built with the pass off, from a second copy of the module (a cache entry of its own). No
loop with a refused feature may be fused; a fused gradient has no backward loop, its
unfused twin has one. A srcgrad error class counts as refused, any other error fails. The
summary says how many loops the pass reversed in place, and how many it left of those
drawn in a shape it takes (the sum returned, no loop-dependent slice), which is no failure.
"""
from __future__ import annotations

import random
import sys
import tempfile

import numpy as np

from .targeted import arguments, counting, load

_EXPRS = ["{p} * {q}", "np.sin({p})", "np.cos({p}) * {q}", "np.exp(0.5 * {p})",
          "np.sqrt(1.0 + {p} * {p})", "np.tanh({p}) + {q}", "{p} / (2.0 + {q} * {q})",
          "{p} - 0.5 * {q}", "{p} * {q} + {r}", "scaled({p}, {q})"]
_HELPERS = ("def helper(row, s):\n    return row[0] * np.cos(s) + row[1] * s\n\n\n"
            "def scaled(a, b):\n    c = a * b\n    return c / (2.0 + c * c)\n\n\n")
_REFUSED = ["carried", "rebound", "prev", "reads_sum", "break", "squared"]


class _Draw:
    """One program's body: `scope` lists the expressions of this iteration a statement
    may read where it is drawn (names, `v[2]`, `np.sum(w * x[i])`)."""

    def __init__(self, rng: random.Random, dims: dict):
        self.rng, self.dims, self.count, self.before, self.force = rng, dims, 0, [], []
        self.sliced = False

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def element(self) -> str:
        a, k = self.rng.choice("xy"), self.rng.randrange(3)
        if self.dims[a] == 2:
            return f"{a}[i, {k}]"
        return f"{a}[i + {k}]" if k else f"{a}[i]"

    def row(self) -> str:
        a = self.rng.choice("xxy")
        if self.dims[a] == 2:
            return self.rng.choice([f"{a}[i]", f"{a}[i]", f"{a}[0]"])
        row = self.rng.choice([f"{a}[i:i + 3]", f"{a}[:3] * {a}[i]", f"{a}[1:4] * {a}[i + 1]",
                               f"{a}[:3]", f"{a}[1:4]", f"np.sin({a}[:3]) * {a}[i + 2]"])
        self.sliced |= "i:" in row  # its sums get tapes (record.py): not taken
        return row

    def atom(self, scope) -> str:
        return self.rng.choice(scope) if scope and self.rng.random() < 0.6 else self.element()

    def expr(self, scope) -> str:
        return self.rng.choice(_EXPRS).format(
            p=self.atom(scope), q=self.atom(scope), r=self.atom(scope))

    def test(self) -> str:
        return f"{self.element()} {self.rng.choice('<>')} 0.0"

    def statements(self, scope, pad, depth, count) -> list:
        return [line for _ in range(count) for line in self.statement(scope, pad, depth)]

    def statement(self, scope, pad, depth) -> list:
        rng, more = self.rng, " " * 4
        kind = rng.choices(["temp", "if", "array", "helper", "write"],
                           [4, 3 if depth < 2 else 0, 1.5, 1, 1])[0]
        if kind == "if":
            name, inner, other = self.fresh("b"), list(scope), list(scope)
            lines = [f"{pad}if {self.test()}:"]
            lines += self.statements(inner, pad + more, depth + 1, rng.choice([0, 1, 1, 2]))
            lines += [f"{pad}{more}{name} = {self.expr(inner)}", f"{pad}else:"]
            lines += self.statements(other, pad + more, depth + 1, rng.choice([0, 0, 1]))
            scope.append(name)
            return lines + [f"{pad}{more}{name} = {self.expr(other)}"]
        if kind == "array":
            v, row = self.fresh("v"), self.row()
            value = rng.choice([f"{row} * 2.0", f"{row} - {self.row()}", f"{row} * {self.row()}",
                                f"np.sin({row}) * {self.atom(scope)}"])
            scope += rng.sample([f"{v}[0]", f"{v}[2]", f"{v}[1]", f"np.sum({v})",
                                 f"np.sum({v} * {v})"], 2)
            return [f"{pad}{v} = {value}"]
        if kind == "write":
            w, stores = self.fresh("w"), rng.sample(range(3), rng.choice([1, 2, 3]))
            lines = [f"{pad}{w} = np.zeros(3)"]
            lines += [f"{pad}{w}[{k}] = {self.expr(scope)}" for k in stores]
            if rng.random() < 0.4:  # written in one branch only
                inner = list(scope)
                lines += [f"{pad}if {self.test()}:"] + self.statements(inner, pad + more, 2, 1)
                lines.append(f"{pad}{more}{w}[{rng.randrange(3)}] = {self.expr(inner)}")
            scope.append(rng.choice([f"np.sum({w} * {self.row()})", f"{w}[{stores[0]}]"]))
            return lines
        name = self.fresh("a" if kind == "temp" else "h")
        value = self.expr(scope) if kind == "temp" else \
            f"helper({self.row()}, {self.atom(scope)})"
        scope.append(name)
        return [f"{pad}{name} = {value}"]

    def refused(self, feature, scope, pad) -> list:
        """Statements with `feature`, which the pass must refuse."""
        name, more = self.fresh(feature[0]), " " * 4
        self.force.append(name)
        if feature == "carried":  # bound in one branch, read after the `if`
            self.before.append(f"    {name} = 0.5")
            return [f"{pad}if {self.test()}:", f"{pad}{more}{name} = {self.expr(scope)}"]
        if feature == "rebound":  # bound before the `if`, rebound inside it
            return [f"{pad}{name} = {self.expr(scope)}", f"{pad}if {self.test()}:",
                    f"{pad}{more}{name} = np.sin({name}) * {self.element()}"]
        if feature == "reads_sum":
            return [f"{pad}{name} = {self.element()} * np.cos(total)"]
        self.force.pop()  # break
        return [f"{pad}if i > 1:", f"{pad}{more}if {self.test()}:", f"{pad}{more * 2}break"]

    def update(self, total, scope) -> str:
        picks = self.force + scope[-2:] + [self.atom(scope)]
        self.force = []
        terms = [self.rng.choice(["{a}", "{a} * {e}", "np.sin({a})", "{a} * {a}"]).format(
            a=a, e=self.element()) for a in dict.fromkeys(picks)]
        e = " + ".join(terms)  # parenthesized: `s = s + e` is a sum, `s = s + a + b` not
        return self.rng.choice([f"{total} += {e}", f"{total} = {total} + ({e})",
                                f"{total} = ({e}) + {total}"])


def program(rng: random.Random, n: int, dims: dict):
    """(source, the refused feature or None, whether the pass should take the loop)."""
    draw, pad = _Draw(rng, dims), " " * 8
    feature = rng.choice(_REFUSED) if rng.random() < 0.25 else None
    scope, body = [], []
    if feature == "prev":  # a value carried from the previous iteration
        draw.before.append("    prev = 0.3")
        body.append(f"{pad}p0 = prev * {draw.element()}")
        scope.append("p0")
        draw.force.append("p0")
    two = rng.random() < 0.15
    body += draw.statements(scope, pad, 0, rng.randint(1, 3))
    if feature in ("carried", "rebound", "reads_sum", "break"):
        body += draw.refused(feature, scope, pad)
    if two:
        body.append(f"{pad}{draw.update('other', scope)}")
    body += draw.statements(scope, pad, 0, rng.randint(1, 3))
    body.append(f"{pad}{draw.update('total', scope)}")
    if feature == "prev":
        body.append(f"{pad}prev = {scope[-1]}")
    if feature == "squared":  # the sums' adjoint is not known before the loop
        result = rng.choice(["total * total", "np.sin(total)"] + ["total * other"] * two)
    elif two:
        result = rng.choice(["total + other", "total - 0.5 * other", "other * 3.0 + total"])
    else:  # the others' adjoints are not copies of the seed: kept, not refused
        result = rng.choice(["total"] * 5 + ["z"] * 2 + ["total * 2.0 + 1.0", "total + 0.1 * extra"])
    after = ["    z = total"] * (result == "z") + ["    extra = np.sum(x * x)"] * ("extra" in result)
    bound = next((f"{a}.shape[0]" for a in "xy" if dims[a] == 2), "x.shape[0] - 2")
    bound = str(n) if rng.random() < 0.2 else bound
    init = ["    total = 0.0"] + ["    other = 1.0"] * two
    lines = ["import numpy as np", "", "", _HELPERS + "def f(x, y):", *init, *draw.before,
             f"    for i in range({bound}):", *body, *after, f"    return {result}"]
    return "\n".join(lines) + "\n", feature, feature is None and result in ("total", "z") \
        and not draw.sliced


def _close(got, want, rtol, atol) -> bool:
    return all(np.allclose(a, b, rtol=rtol, atol=atol) for a, b in zip(got, want))


def check(module, twin, values, fused: list, feature):
    """(None | "refused" | "failing", why, loops fused) for a program and its twin."""
    import srcgrad
    from srcgrad import pipeline
    from srcgrad.errors import SrcgradError
    from tests.gradcheck import numerical_grad

    counted, before = pipeline.immediate, fused[0]
    try:
        g = srcgrad.grad(module.f, wrt=(0, 1))
        got = g(*values)
        here = fused[0] - before
        python = srcgrad.grad(module.f, wrt=(0, 1), jit=False)(*values)
        pipeline.immediate = lambda rev: 0
        try:
            plain = srcgrad.grad(twin.f, wrt=(0, 1), jit=False)
            unfused = plain(*values)
        finally:
            pipeline.immediate = counted
    except Exception as exc:
        kind = "refused" if isinstance(exc, SrcgradError) else "failing"
        return kind, f"{type(exc).__name__}: {exc}", fused[0] - before
    fd = numerical_grad(module.f, values, (0, 1))
    wrong = [what for what, bad in [
        (f"backend {g.backend}", g.backend != "numba"),
        ("numba gradient far from central differences", not _close(got, fd, 1e-5, 1e-6)),
        ("jit=False gradient far from central differences", not _close(python, fd, 1e-5, 1e-6)),
        ("numba gradient differs from the unfused one", not _close(got, unfused, 1e-12, 1e-14)),
        ("jit=False gradient differs from the unfused one",
         not _close(python, unfused, 1e-12, 1e-14)),
        (f"fused a loop with {feature}", here and feature is not None),
        ("fused, yet a backward loop is left", here and "-1, -1)" in g.source),
        ("the unfused twin has no backward loop", here and "-1, -1)" not in plain.source),
    ] if bad]
    return ("failing" if wrong else None), "; ".join(wrong), here


def main(argv=None) -> int:
    args = arguments(__doc__, argv, "sums")
    from srcgrad import pipeline

    fused = counting(pipeline, "immediate")
    folder, rng = tempfile.mkdtemp(prefix="srcgrad-sums-src-"), random.Random(args.seed)
    bad = refused = missed = expecting = loops = 0
    for k in range(args.programs):
        n, dims = rng.randint(3, 5), {"x": rng.choice([1, 2, 2]), "y": rng.choice([1, 2])}
        source, feature, expected = program(rng, n, dims)
        name = f"sums_{args.seed}_{k}"
        module, path = load(folder, name, source)
        twin, _ = load(folder, name + "_plain", source)
        draw = np.random.default_rng(k)
        values = tuple(draw.uniform(0.2, 0.9, shape) * draw.choice([-1.0, 1.0], shape)
                       for shape in ((n, 3) if dims[a] == 2 else (n + 2,) for a in "xy"))
        kind, why, here = check(module, twin, values, fused, feature)
        loops, expecting = loops + here, expecting + expected
        if kind is None and expected and not here:
            missed += 1
            print(f"NOT FUSED {path}: a loop the pass should take (not a failure)")
        refused, bad = refused + (kind == "refused"), bad + (kind == "failing")
        if kind:
            print(f"{kind.upper()} {path}: {why}")
    print(f"{args.programs} programs, {bad} failing, {loops} loops reversed in place "
          f"({missed} of the {expecting} it should take not taken; {refused} refused)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
