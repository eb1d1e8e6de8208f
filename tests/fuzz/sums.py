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

Two programs in five nest the sum loop (transforms/immediate_nests.py): `for i in
range(n)` (n rows) binds zero to two outer locals (a scalar of elements `x[i, k]`, a row
like `x[i] * 2.0`, a number of i), then runs the inner loop over `range(i + 1, n)`,
`range(n)`, `range(i)` or `range(2)`, whose body, drawn as above, reads elements at both
indices (`x[j, 1]`, `x[i, 0]`, `(x[i, 0] - x[j, 0])`), rows `x[j]`, the outer locals, and
updates the sums. Half of them carry a feature the pass must refuse: a sum updated after
the inner loop, an outer local rebound in it, a value carried to the next inner
iteration, an outer local reading the sum (bounded: `np.tanh(0.5 * total)`).

Each gradient (wrt both arguments), compiled (SRCGRAD_LOOPS=strict, backend numba) and
with jit=False, must be close to central differences (1e-5) and equal (1e-12) the gradient
built with the pass off, from a second copy of the module (a cache entry of its own). No
loop with a refused feature may be fused; a fused gradient has no backward loop (but a
nest's outer one when its inner loop reads an outer local's value), its unfused twin has
one. A srcgrad error class counts as refused, any other error fails. The
summary says how many loops the pass reversed in place, and how many it left of those
drawn in a shape it takes (the sum returned, no loop-dependent slice, no nest whose inner
loop reads an outer local with an adjoint: its outer backward loop stays, not taken
yet), which is no failure; and how many nests it drew and reversed.
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
_NEST_REFUSED = ["after", "outer_rebound", "prev", "outer_reads_sum"]


class _Draw:
    """One program's body: `scope` lists the expressions of this iteration a statement
    may read where it is drawn (names, `v[2]`, `np.sum(w * x[i])`)."""

    def __init__(self, rng: random.Random, dims: dict):
        self.rng, self.dims, self.count, self.before, self.force = rng, dims, 0, [], []
        self.sliced, self.nest, self.scalar, self.active = False, False, None, False

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def index(self) -> str:
        return self.rng.choice("ijj") if self.nest else "i"

    def element(self) -> str:
        a, k = self.rng.choice("xy"), self.rng.randrange(3)
        if self.nest and self.rng.random() < 0.2:  # a pair's difference
            return f"({self.at(a, 'i', k)} - {self.at(a, 'j', k)})"
        return self.at(a, self.index(), k)

    def at(self, a, i, k) -> str:
        if self.dims[a] == 2:
            return f"{a}[{i}, {k}]"
        return f"{a}[{i} + {k}]" if k else f"{a}[{i}]"

    def row(self, i=None) -> str:
        a, i = self.rng.choice("xxy"), i or self.index()
        if self.dims[a] == 2:
            return self.rng.choice([f"{a}[{i}]", f"{a}[{i}]", f"{a}[0]"])
        row = self.rng.choice([f"{a}[{i}:{i} + 3]", f"{a}[:3] * {a}[{i}]",
                               f"{a}[1:4] * {a}[{i} + 1]", f"{a}[:3]", f"{a}[1:4]",
                               f"np.sin({a}[:3]) * {a}[{i} + 2]"])
        self.sliced |= f"{i}:" in row  # its sums get tapes (record.py): not taken
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

    def outer(self, feature, scope) -> list:
        """A nest's outer body before its inner loop: locals bound once (rows or scalars
        of this row's elements, numbers of i; one reading the sum or rebound in the inner
        loop). `active`: the inner loop reads one with an adjoint (not taken yet)."""
        lines, pad, later = [], " " * 8, []  # later: what reads j
        for _ in range(self.rng.choice([0, 0, 1, 1, 2])):
            o, kind = self.fresh("o"), self.rng.random()
            if kind < 0.3:
                value = self.rng.choice(["0.25 * i + 0.5", "np.cos(0.3 * i)"])
                lines.append(f"{pad}{o} = {value}")
                reads = [o]
            elif kind < 0.55:
                value = self.rng.choice(["{r} * 2.0", "np.sin({r}) * {e}", "{r} - {s}"])
                lines.append(f"{pad}{o} = " + value.format(
                    r=self.row("i"), s=self.row("i"), e=self.element()))
                reads = self.rng.sample([f"{o}[0]", f"{o}[2]", f"np.sum({o})",
                                         f"np.sum({o} * {self.row('j')})"], 2)
            else:
                lines.append(f"{pad}{o} = {self.expr(scope)}")
                reads = [o]
            for read in reads:
                (later if "j" in read else scope).append(read)
            self.force.append(reads[-1])
            self.active |= "[" in lines[-1]  # of elements, or of a local of them
        if feature in ("outer_rebound", "outer_reads_sum"):
            o = self.scalar = self.fresh("t")
            value = self.expr(scope) if feature == "outer_rebound" else self.rng.choice(
                ["np.tanh(0.5 * total)", f"np.cos(total) * {self.element()}"])
            lines.append(f"{pad}{o} = {value}")
            scope.append(o)
            self.force.append(o)
        scope += later
        return lines

    def refused(self, feature, scope, pad) -> list:
        """Statements with `feature`, which the pass must refuse."""
        if feature == "outer_rebound":  # read from the last inner iteration
            self.force.append(self.scalar)
            return [f"{pad}{self.scalar} = np.sin({self.scalar}) * {self.element()}"]
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
    """(source, the refused feature or None, whether the pass should take the loop,
    (whether it is a nest, whether its inner loop reads an outer local's value))."""
    draw, nest, scope, body = _Draw(rng, dims), rng.random() < 0.4, [], []
    feature = rng.choice(_NEST_REFUSED) if nest and rng.random() < 0.5 else \
        rng.choice(_REFUSED) if not nest and rng.random() < 0.25 else None
    bound = next((f"{a}.shape[0]" for a in "xy" if dims[a] == 2), "x.shape[0] - 2")
    bound = str(n) if rng.random() < 0.2 else bound
    head, pad = [f"    for i in range({bound}):"], " " * (12 if nest else 8)
    if nest:
        head += draw.outer(feature, scope)
        inner = rng.choice([f"i + 1, {bound}", bound, "i", "2"])
        head.append(f"        for j in range({inner}):")
        draw.nest = True
    if feature == "prev":  # a value carried from the previous iteration
        draw.before.append("    prev = 0.3")
        body.append(f"{pad}p0 = prev * {draw.element()}")
        scope.append("p0")
        draw.force.append("p0")
    two = rng.random() < 0.15
    body += draw.statements(scope, pad, 0, rng.randint(1, 3))
    if feature in ("carried", "rebound", "reads_sum", "break", "outer_rebound"):
        body += draw.refused(feature, scope, pad)
    if two:
        body.append(f"{pad}{draw.update('other', scope)}")
    body += draw.statements(scope, pad, 0, rng.randint(1, 3))
    body.append(f"{pad}{draw.update('total', scope)}")
    if feature == "prev":
        body.append(f"{pad}prev = {scope[-1]}")
    draw.nest = False
    if feature == "after":  # the outer loop updates the sum too
        body.append(f"        total += {draw.element()} * 0.5")
    if feature == "squared":  # the sums' adjoint is not known before the loop
        result = rng.choice(["total * total", "np.sin(total)"] + ["total * other"] * two)
    elif two:
        result = rng.choice(["total + other", "total - 0.5 * other", "other * 3.0 + total"])
    else:  # the others' adjoints are not copies of the seed: kept, not refused
        result = rng.choice(["total"] * 5 + ["z"] * 2 + ["total * 2.0 + 1.0",
                                                        "total + 0.1 * extra"])
    after = ["    z = total"] * (result == "z") + ["    extra = np.sum(x * x)"] * (
        "extra" in result)
    init = ["    total = 0.0"] + ["    other = 1.0"] * two
    lines = ["import numpy as np", "", "", _HELPERS + "def f(x, y):", *init, *draw.before,
             *head, *body, *after, f"    return {result}"]
    return "\n".join(lines) + "\n", feature, feature is None and result in ("total", "z") \
        and not draw.sliced and not draw.active, (nest, draw.active)


def _close(got, want, rtol, atol) -> bool:
    return all(np.allclose(a, b, rtol=rtol, atol=atol) for a, b in zip(got, want))


def check(module, twin, values, fused: list, feature, keeps=0):
    """(None | "refused" | "failing", why, loops fused) for a program and its twin; a fused
    gradient keeps at most `keeps` backward loops (a nest's outer one, with adjoints)."""
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
        ("fused, yet a backward loop is left", here and g.source.count("-1, -1)") > keeps),
        ("the unfused twin has no backward loop", here and "-1, -1)" not in plain.source),
    ] if bad]
    return ("failing" if wrong else None), "; ".join(wrong), here


def main(argv=None) -> int:
    args = arguments(__doc__, argv, "sums")
    from srcgrad import pipeline

    fused = counting(pipeline, "immediate")
    folder, rng = tempfile.mkdtemp(prefix="srcgrad-sums-src-"), random.Random(args.seed)
    bad = refused = missed = expecting = loops = nests = nested = active = 0
    for k in range(args.programs):
        n, dims = rng.randint(3, 5), {"x": rng.choice([1, 2, 2]), "y": rng.choice([1, 2])}
        source, feature, expected, (nest, reads) = program(rng, n, dims)
        name = f"sums_{args.seed}_{k}"
        module, path = load(folder, name, source)
        twin, _ = load(folder, name + "_plain", source)
        draw = np.random.default_rng(k)
        values = tuple(draw.uniform(0.2, 0.9, shape) * draw.choice([-1.0, 1.0], shape)
                       for shape in ((n, 3) if dims[a] == 2 else (n + 2,) for a in "xy"))
        kind, why, here = check(module, twin, values, fused, feature, int(reads))
        loops, expecting = loops + here, expecting + expected
        nests, nested, active = nests + nest, nested + (nest and here), active + reads
        if kind is None and expected and not here:
            missed += 1
            print(f"NOT FUSED {path}: a loop the pass should take (not a failure)")
        refused, bad = refused + (kind == "refused"), bad + (kind == "failing")
        if kind:
            print(f"{kind.upper()} {path}: {why}")
    print(f"{args.programs} programs, {bad} failing, {loops} loops reversed in place "
          f"({missed} of the {expecting} it should take not taken; {refused} refused); "
          f"{nests} nests, {nested} reversed in place ({active} read outer locals' values)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
