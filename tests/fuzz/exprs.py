"""Scopes and the expression generator.

A `Scope` knows which names are bound at a point of the generated function
(block-scoped: a name made inside a loop or branch is forgotten after it, so
no program reads an unbound name), their kinds and shapes, which arrays are
the function's own and may be written in place (not while a view of them is
in scope), and how many times the enclosing loops can run.

`ExprGen.expr(scope, shape, depth)` draws a float expression of exactly the
given NumPy shape: arithmetic with broadcasting (scalar with array, matrix
with row vector), elementwise functions (sin cos tanh exp abs maximum minimum,
log and sqrt only of positive arguments, `/` only by denominators >= 0.5),
`**` 2 or 3, reductions (np.sum np.mean np.max np.min np.prod, `.sum()`,
`axis=`), `@`, element reads and slices with in-range indices (constants,
loop indices, `i + 1`, `i % n`, `-1`), list elements, conditional
expressions, and calls into the module's helper functions.
`ExprGen.cond(scope)` draws a condition: comparisons on data or on loop
indices, combined with `and`, `or`, `not`.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from .tree import (Attr, Bin, BoolOp, Call, Compare, IfExp, Index, Method, Name, Num, Slice,
                   TupleLit, Unary)

CONSTS = [0.5, 1.0, 2.0, 0.3, 1.5, 0.1, 0.25, 0.7, 3.0]
ELEMENTWISE = ["np.sin", "np.tanh", "np.cos", "np.exp", "np.abs", "log", "sqrt", "neg", "square"]
REDUCTIONS = ["np.sum", "np.mean", "np.max", "np.min", "np.prod", ".sum"]


@dataclass
class Var:
    name: str
    kind: str                 # "float", "int" or "list"
    shape: tuple = ()         # a float's shape; a list's elements' shape
    owned: bool = False       # a float array this function may write into
    view_of: tuple = ()       # the arrays it may share memory with
    lo: int = 0               # int: smallest value; list: fewest elements
    hi: int = 0               # int: largest value; list: most elements
    counter: bool = False     # a while loop's counter: never read by expressions
    written: bool = False     # some statement so far writes into it
    frozen: bool = False      # a second name was bound to it: never write into it
    deps: frozenset = frozenset()  # the parameters its value may depend on


class Namer:
    def __init__(self):
        self.counts = {}

    def __call__(self, prefix: str) -> str:
        self.counts[prefix] = self.counts.get(prefix, 0) + 1
        return f"{prefix}{self.counts[prefix]}"


class Scope:
    def __init__(self, namer, helpers, ret_shape):
        self.vars: dict[str, Var] = {}
        self.namer, self.helpers, self.ret_shape = namer, helpers, ret_shape
        self.loops = 0            # enclosing loops
        self.max_loops = 2        # how deep loops may nest here
        self.trips = 1            # most times this point can run per call
        self.jumps_ok = True      # break / continue / return allowed here
        self.definite = True      # this point runs exactly once per call
        self.iterated = frozenset()  # lists a loop around this point iterates over
        self.wrt = frozenset()    # the parameters differentiated

    def child(self, loop_trips=None):
        c = copy.copy(self)
        c.vars = {k: copy.copy(v) for k, v in self.vars.items()}
        c.definite = False
        if loop_trips is not None:
            c.loops, c.trips = self.loops + 1, self.trips * max(loop_trips, 1)
        return c

    def merge(self, *children):
        """After a block: an outer array stays writable only if it is on every path."""
        for name, v in self.vars.items():
            for c in children:
                if name in c.vars:
                    v.owned = v.owned and c.vars[name].owned
                    v.written = v.written or c.vars[name].written
                    v.frozen = v.frozen or c.vars[name].frozen
                    v.deps = v.deps | c.vars[name].deps
                    v.hi = max(v.hi, c.vars[name].hi)

    def add(self, var):
        self.vars.pop(var.name, None)
        self.vars[var.name] = var  # most recently bound last
        return var

    def floats(self, shape=None):
        return [v for v in self.vars.values()
                if v.kind == "float" and (shape is None or v.shape == shape)]

    def arrays(self):
        return [v for v in self.vars.values() if v.kind == "float" and v.shape]

    def ints(self):
        return [v for v in self.vars.values() if v.kind == "int" and not v.counter]

    def lists(self, shape=None):
        return [v for v in self.vars.values() if v.kind == "list" and (shape is None or v.shape == shape)]

    def alias(self, names) -> bool:
        """Bind a second name to arrays `names`, if none is written into: they never will be."""
        if any(self.vars[n].written for n in names if n in self.vars):
            return False
        for n in names:
            if n in self.vars:
                self.vars[n].frozen = True
        return True

    def deps(self, *exprs) -> frozenset:
        """The parameters the values of `exprs` may depend on (data flow only)."""
        out, todo = set(), list(exprs)
        while todo:
            e = todo.pop()
            if isinstance(e, Name) and e.id in self.vars:
                out |= self.vars[e.id].deps
            todo += e.children()
        return frozenset(out)

    def writable(self, v) -> bool:
        return (v.kind == "float" and bool(v.shape) and v.owned and not v.frozen
                and not any(v.name in u.view_of for u in self.vars.values()))


def fnum(x):
    return Num(float(x))


class ExprGen:
    def __init__(self, draw, n, m):
        self.draw, self.N, self.M = draw, n, m

    # ----------------------------------------------------------------- pieces
    def const(self):
        c = self.draw.choice(CONSTS)
        return Num(-c if self.draw.chance(15) else c)

    def array_shapes(self, sc):
        shapes = {(self.N,)} | {v.shape for v in sc.floats() if v.shape}
        return sorted(shapes)

    def index(self, sc, length):
        """An integer expression that is a valid index into an axis of `length`."""
        opts = [(4, ("const", None)), (1, ("last", None))]
        for v in sc.ints():
            if 0 <= v.lo and v.hi <= length - 1:
                opts += [(5, ("var", v)), (1, ("rev", v))]
            if 0 <= v.lo and v.hi + 1 <= length - 1:
                opts.append((2, ("next", v)))
            if 1 <= v.lo and v.hi <= length:
                opts.append((2, ("prev", v)))
            if 0 <= v.lo:
                opts.append((1, ("mod", v)))
        kind, v = self.draw.weighted(opts)
        if kind == "const":
            return Num(self.draw.integer(0, length - 1))
        if kind == "last":
            return Num(-1)
        i = Name(v.name)
        return {"var": i, "rev": Bin("-", Num(length - 1), i), "next": Bin("+", i, Num(1)),
                "prev": Bin("-", i, Num(1)), "mod": Bin("%", i, Num(length))}[kind]

    def slice(self, base_len, length):
        """A slice of `length` elements of an axis of `base_len` (>= length)."""
        lo = self.draw.integer(0, base_len - length)
        hi = lo + length
        if hi == base_len and lo > 0 and self.draw.chance(30):
            return Slice(Num(-length), None)
        return Slice(Num(lo) if lo else None, Num(hi) if hi < base_len else None)

    def safe_den(self, sc, shape, depth):
        kind = self.draw.integer(0, 3)
        if kind == 0:
            return self.const_den()
        e = self.expr(sc, shape, depth)
        if kind == 1:
            return Bin("+", Num(1.0), Bin("**", e, Num(2), shape=shape), shape=shape)
        fn = "np.cos" if kind == 2 else "np.tanh"
        return Bin("+", Num(2.0 if kind == 2 else 1.5), Call(fn, [e], shape=shape), shape=shape)

    def const_den(self):
        return Num(self.draw.choice([2.0, 3.0, 0.5, 4.0]))

    # ------------------------------------------------------------ expressions
    def expr(self, sc, shape, depth):
        if depth <= 0 or self.draw.chance(20):
            return self.leaf(sc, shape)
        d = depth - 1
        helpers = [h for h in sc.helpers if h[2] == shape]
        opts = [(3, "leaf"), (7, "bin"), (6, "unary"), (2, "pow"), (1, "maximum"), (1, "ifexp"),
                (3 if helpers else 0, "helper")]
        if shape == ():
            opts += [(5, "reduce"), (1, "dot"), (1, "builtin"), (1, "index")]
        else:
            opts += [(1, "matvec"), (1, "axis")]
        kind = self.draw.weighted(opts)
        if kind == "bin":
            op = self.draw.weighted([(4, "+"), (4, "*"), (3, "-"), (2, "/")])
            other = self.draw.choice([shape, ()] + ([shape[1:]] if len(shape) == 2 else []))
            if op == "/":
                return Bin("/", self.expr(sc, shape, d), self.safe_den(sc, other, d - 1), shape=shape)
            a, b = self.expr(sc, shape, d), self.expr(sc, other, d)
            if self.draw.chance(40):
                a, b = b, a
            return Bin(op, a, b, shape=shape)
        if kind == "unary":
            return self.unary(self.draw.choice(ELEMENTWISE), self.expr(sc, shape, d), shape)
        if kind == "pow":
            return Bin("**", self.expr(sc, shape, d), Num(self.draw.choice([2, 3])), shape=shape)
        if kind == "maximum":
            other = self.draw.choice([shape, ()])
            fn = self.draw.choice(["np.maximum", "np.minimum"])
            return Call(fn, [self.expr(sc, shape, d), self.expr(sc, other, d)], shape=shape)
        if kind == "ifexp":
            return IfExp(self.expr(sc, shape, d), self.cond(sc, 0), self.expr(sc, shape, d), shape=shape)
        if kind == "helper":
            name, pshapes, _ = self.draw.choice(helpers)
            return Call(name, [self.expr(sc, p, d) for p in pshapes], shape=shape)
        if kind == "reduce":
            arg = self.expr(sc, self.draw.choice(self.array_shapes(sc)), d)
            fn = self.draw.choice(REDUCTIONS)
            if fn == ".sum":
                return Method(arg, "sum", shape=())
            return Call(fn, [arg], shape=())
        if kind == "dot":
            s = self.draw.choice([s for s in self.array_shapes(sc) if len(s) == 1])
            a, b = self.expr(sc, s, d), self.expr(sc, s, d)
            return Call("np.dot", [a, b], shape=()) if self.draw.chance(40) else Bin("@", a, b, shape=())
        if kind == "builtin":
            fn = self.draw.choice(["abs", "max", "min"])
            args = [self.expr(sc, (), d)] + ([] if fn == "abs" else [self.expr(sc, (), d)])
            return Call(fn, args, shape=())
        if kind == "index":
            s = self.draw.choice([s for s in self.array_shapes(sc) if len(s) == 1])
            return Index(self.expr(sc, s, d), [self.index(sc, s[0])], shape=())
        if kind == "matvec" and len(shape) == 1:
            left = self.draw.chance(40)  # v @ M, else M @ v
            mats = [v.shape for v in sc.arrays()
                    if len(v.shape) == 2 and v.shape[1 if left else 0] == shape[0]]
            if mats:
                ms = self.draw.choice(mats)
                if left:
                    return Bin("@", self.expr(sc, ms[:1], d), self.expr(sc, ms, d), shape=shape)
                return Bin("@", self.expr(sc, ms, d), self.expr(sc, ms[1:], d), shape=shape)
        if kind == "axis" and len(shape) == 1:
            mats = [v.shape for v in sc.arrays() if len(v.shape) == 2 and shape[0] in v.shape]
            if mats:
                ms = self.draw.choice(mats)
                axis = 0 if ms[1] == shape[0] else 1
                return Call("np.sum", [self.expr(sc, ms, d)], [("axis", Num(axis))], shape=shape)
        return self.leaf(sc, shape)

    def unary(self, fn, e, shape):
        if fn == "neg":
            return Unary("-", e, shape=shape)
        if fn == "square":
            return Bin("*", e, e, shape=shape)
        if fn == "log":
            if self.draw.chance(50):
                return Call("np.log", [Bin("+", fnum(self.draw.choice([1.0, 0.5])),
                                           Bin("**", e, Num(2), shape=shape), shape=shape)], shape=shape)
            return Call("np.log", [Bin("+", Num(2.0), Call("np.cos", [e], shape=shape), shape=shape)],
                        shape=shape)
        if fn == "sqrt":
            return Call("np.sqrt", [Bin("+", Bin("**", e, Num(2), shape=shape),
                                        fnum(self.draw.choice([1.0, 0.25])), shape=shape)], shape=shape)
        return Call(fn, [e], shape=shape)

    def leaf(self, sc, shape):
        if shape == ():
            return self.scalar_leaf(sc)
        same = sc.floats(shape)
        opts = [(8 if same else 0, "var"), (1, "fill")]
        if len(shape) == 1:
            L = shape[0]
            longer = [v for v in sc.floats() if len(v.shape) == 1 and v.shape[0] > L]
            rows = [v for v in sc.floats() if len(v.shape) == 2 and v.shape[1] == L]
            cols = [v for v in sc.floats() if len(v.shape) == 2 and v.shape[0] == L]
            opts += [(3 if longer else 0, "slice"), (1 if same else 0, "reverse"),
                     (3 if rows else 0, "row"), (1 if cols else 0, "col"),
                     (1 if [v for v in sc.lists(shape) if v.lo >= 1] else 0, "list")]
        else:
            trans = sc.floats(shape[::-1])
            opts += [(1 if trans else 0, "T"), (1, "outer")]
        kind = self.draw.weighted(opts)
        if kind == "var":
            return Name(self.draw.choice(same).name, shape=shape)
        if kind == "reverse":
            return Index(Name(self.draw.choice(same).name), [Slice(None, None, Num(-1))], shape=shape)
        if kind == "slice":
            v = self.draw.choice(longer)
            return Index(Name(v.name), [self.slice(v.shape[0], L)], shape=shape)
        if kind == "row":
            v = self.draw.choice(rows)
            items = [self.index(sc, v.shape[0])] + ([Slice()] if self.draw.chance(40) else [])
            return Index(Name(v.name), items, shape=shape)
        if kind == "col":
            v = self.draw.choice(cols)
            return Index(Name(v.name), [Slice(), self.index(sc, v.shape[1])], shape=shape)
        if kind == "list":
            v = self.draw.choice([v for v in sc.lists(shape) if v.lo >= 1])
            return Index(Name(v.name), [self.list_index(v)], shape=shape)
        if kind == "T":
            return Attr(Name(self.draw.choice(trans).name), "T", shape=shape)
        if kind == "outer":
            return Call("np.outer", [self.leaf(sc, shape[:1]), self.leaf(sc, shape[1:])], shape=shape)
        dims = Num(shape[0]) if len(shape) == 1 else TupleLit([Num(k) for k in shape])
        ctor = Call(self.draw.choice(["np.ones", "np.zeros"]), [dims], shape=shape)
        return Bin("*" if ctor.func == "np.ones" else "+", self.scalar_leaf(sc), ctor, shape=shape)

    def list_index(self, v):
        return Num(self.draw.choice([-1] + list(range(v.lo))))

    def scalar_leaf(self, sc, data=False):
        """A constant, a scalar name, an element, an index, a list element or a reduction
        (`data`: not a constant, if the scope has anything else)."""
        scalars, arrays, ints = sc.floats(()), sc.arrays(), sc.ints()
        lists = [v for v in sc.lists(()) if v.lo >= 1]
        data = data and bool(scalars or arrays or ints or lists)
        kind = self.draw.weighted([(0 if data else 2, "const"), (8 if scalars else 0, "var"), (5 if arrays else 0, "elem"),
                                   (1 if ints else 0, "int"), (1 if lists else 0, "list"),
                                   (2 if arrays else 0, "reduce")])
        if kind == "const":
            return fnum(self.const().value)
        if kind == "var":
            return Name(self.draw.choice(scalars).name, shape=())
        if kind == "elem":
            v = self.draw.choice(arrays)
            return Index(Name(v.name), [self.index(sc, k) for k in v.shape], shape=())
        if kind == "int":
            i = Name(self.draw.choice(ints).name)
            if self.draw.chance(50):
                return Bin("*", fnum(self.draw.choice([0.5, 0.1, 0.3])), i, shape=())
            return Bin("+", i, Num(1.0), shape=())
        if kind == "list":
            v = self.draw.choice(lists)
            return Index(Name(v.name), [self.list_index(v)], shape=())
        v = self.draw.choice(arrays)
        fn = self.draw.choice(REDUCTIONS[:4])
        return Call(fn, [Name(v.name, shape=v.shape)], shape=())

    # ------------------------------------------------------------- conditions
    def cond(self, sc, depth=1):
        kind = self.draw.weighted([(6, "cmp"), (2 if sc.ints() else 0, "int"),
                                   (2 if depth > 0 else 0, "bool"), (1 if depth > 0 else 0, "not")])
        if kind == "bool":
            return BoolOp(self.draw.choice(["and", "or"]), [self.cond(sc, 0), self.cond(sc, 0)])
        if kind == "not":
            return Unary("not", self.cond(sc, 0))
        if kind == "int":
            i = Name(self.draw.choice(sc.ints()).name)
            if self.draw.chance(50):
                return Compare("==", Bin("%", i, Num(2)), Num(self.draw.integer(0, 1)))
            return Compare(self.draw.choice([">", "<", "=="]), i, Num(self.draw.integer(0, 2)))
        op = self.draw.choice([">", "<", ">=", "<="])
        left = self.expr(sc, (), 1)
        if isinstance(left, Num):  # a condition on data, not on constants
            left = self.scalar_leaf(sc, data=True)
        right = self.const() if self.draw.chance(70) else self.scalar_leaf(sc)
        return Compare(op, left, right)
