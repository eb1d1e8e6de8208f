"""Random valid NumPy programs whose gradients srcgrad must get right.

A program is a module `import numpy as np`, up to two helper functions
`h1`, `h2` and the function under test `f`, with 1-3 float parameters
(`x`, `y`, `z`: each a float, a float64 vector of length N = 2..5 or an
M x N matrix, M = 2..3) and maybe an integer `n` (0..3, never differentiated),
differentiated with respect to a non-empty subset of the float parameters.
`f` always returns a finite float. Its statements (most programs have 3-12)
are drawn from:

- new names and rebinding of names to expressions (`exprs.py`), including
  loop-carried nonlinear updates such as `y = np.sin((y + 1.0) * x)`;
- augmented assignment `s += e`, `a *= e` on scalars and on arrays;
- in-place writes `a[i] = e`, `a[i] += e`, `a[1:3] = e`, `a[:] = e`,
  `A[i, :] = e`, `A[:, j] = e`, `a[a > c] = e`, into arrays made by
  `np.zeros`, `np.ones`, `np.zeros_like`, `.copy()`, `np.empty` (always
  filled completely right away), arithmetic, or into argument arrays, also
  arrays bound in a loop and written after it (scratch arrays per step);
- views bound to names (`r = A[i]`, `w = x[1:3]`, `u = x`), read only;
- `for` over `range(c)`, `range(n)`, `range(len(x))`, `range(1, len(x))`, an
  array (also one the body writes into), `enumerate`, `zip`, a list; nested
  up to depth 2 (3 with branches); `while` loops on data with compound
  conditions and a hard cap (`while (w < 1.0 or s > 0.5) and it < 4:`);
  `if`/`elif`/`else` on data or loop indices; `break`, `continue` and early
  `return` under conditions or at the end of a loop body;
- lists built with `append` and read by index or by iteration;
- helpers (`h1`, `h2`) that loop, branch, return early, make and fill their
  own arrays, or write into their argument after `p = p.copy()`.

Names are block-scoped (nothing made in a loop or branch is read after it),
views and second names of an array keep it from being written, and
`bounds.repair` squashes by `np.tanh` any value that could grow past a bound,
so the NumPy run is valid and finite differences are well conditioned.

`programs()` is the hypothesis strategy; `random_program(rng)` draws the
same programs from a `random.Random` (the campaign). Both drive one
generator (`statements.py`, `exprs.py`) through the `draw.py` interface.
"""
from __future__ import annotations

import random

import numpy as np

from . import bounds
from .draw import Draw, HypothesisDraw, RandomDraw
from .exprs import Namer, Scope, Var
from .statements import ProgramGen
from .tree import Assign, FunctionDef, Method, Module, Name, Return


# ------------------------------------------------------------------ programs

class Program:
    """A generated module, the function to call, its arguments and `wrt` (positions)."""

    def __init__(self, module, source, fname, params, args, wrt):
        self.module, self.source, self.fname = module, source, fname
        self.params, self.args, self.wrt = params, args, wrt

    def args_source(self) -> str:
        return ", ".join(f"{p}={arg_source(a)}" for p, a in zip(self.params, self.args))

    def __repr__(self):
        return f"\n{self.source}\n# {self.fname}({self.args_source()}), wrt={self.wrt}\n"

    def _repr_pretty_(self, printer, cycle):  # how hypothesis prints a falsifying example
        printer.text(repr(self))


def arg_source(a) -> str:
    if isinstance(a, np.ndarray):
        return f"np.array({a.tolist()!r})"
    return repr(a)


def _helper(gen: ProgramGen, k: int, helpers: list):
    pshapes = [gen.draw.weighted([(2, ()), (3, (gen.N,))]) for _ in range(gen.draw.integer(1, 2))]
    params = ["p", "q"][:len(pshapes)]
    ret = gen.draw.choice([()] + [s for s in pshapes if s])
    sc = Scope(Namer(), list(helpers), ret)
    for p, s in zip(params, pshapes):
        sc.add(Var(p, "float", s, owned=False, deps=frozenset([p])))
    sc.wrt = frozenset(params)
    body = []
    if (gen.N,) in pshapes and gen.draw.chance(30):  # the helper works on its own copy
        p = params[pshapes.index((gen.N,))]
        body.append(Assign(Name(p, shape=(gen.N,)), Method(Name(p), "copy", shape=(gen.N,))))
        sc.vars[p].owned = True
    sc.max_loops = 1
    body += gen.block(sc, gen.draw.integer(0, 3), 1)
    if not (body and isinstance(body[-1], Return)):
        body.append(Return(gen.result(sc, ret) if ret == () and gen.draw.chance(50) else gen.expr(sc, ret, 2)))
    return FunctionDef(f"h{k}", params, body), (f"h{k}", pshapes, ret)


def generate(draw: Draw) -> Program:
    """Draw one program (helpers, `f`, arguments, wrt) from `draw`."""
    N, M = draw.integer(2, 5), draw.integer(2, 3)
    gen = ProgramGen(draw, N, M)
    shapes = [draw.weighted([(4, ()), (5, (N,)), (1, (M, N))]) for _ in range(draw.integer(1, 3))]
    names = ["x", "y", "z"][:len(shapes)]
    with_n = draw.chance(30)
    n_value = draw.integer(0, 3) if with_n else None
    functions, sigs = [], []
    for k in range(1, 1 + draw.weighted([(5, 0), (3, 1), (1, 2)])):
        fn, sig = _helper(gen, k, sigs)
        functions.append(fn)
        sigs.append(sig)
    wrt_names = [nm for nm in names if draw.chance(60)] or names[:1]
    sc = Scope(Namer(), sigs, ())
    sc.wrt = frozenset(wrt_names)
    for name, shape in zip(names, shapes):
        sc.add(Var(name, "float", shape, owned=True, deps=frozenset([name])))
    params = list(names)
    if with_n:
        sc.add(Var("n", "int", lo=n_value, hi=n_value, counter=False))
        params.insert(draw.integer(0, len(params)), "n")
    body = gen.block(sc, draw.integer(1, 5), 0)
    if not isinstance(body[-1], Return):
        body.append(Return(gen.result(sc, ())))
    functions.append(FunctionDef("f", params, body))
    module = Module(functions)
    bounds.repair(module, {**{nm: 1.5 for nm in names}, "n": float(n_value or 0)})

    rng = np.random.default_rng(draw.integer(0, 2**32 - 1))
    values = {nm: (float(rng.uniform(-1.5, 1.5)) if s == () else rng.uniform(-1.5, 1.5, size=s))
              for nm, s in zip(names, shapes)}
    values["n"] = n_value
    wrt = tuple(params.index(nm) for nm in wrt_names)
    return Program(module, module.source(), "f", params, [values[p] for p in params], wrt)


def random_program(rng: random.Random) -> Program:
    return generate(RandomDraw(rng))


def programs():
    """The hypothesis strategy: a `Program` (shrinks to fewer, simpler statements)."""
    from hypothesis import strategies as st

    @st.composite
    def _programs(draw):
        return generate(HypothesisDraw(draw))

    return _programs()
