"""Which names may hold values of different shapes at different bindings.

The backward sweep reads some values only for their shape and type
(`unbroadcast(g, v)`, `zeros_like(v)`; recompute.py's `_SHAPE_ONLY`). Such a
read needs no recording only if the value the name holds at the end of the
forward sweep has the shape it had at the forward point the read stands for.
`shape_varying(body, inputs, ints)` returns the names for which that is not
shown; record.py then treats their shape-only reads as value reads (the name
is recomputed or recorded, on a stack, which takes any shape).

Each expression gets a *class*: a set of atoms whose broadcast is its shape.
- Fixed atoms: a name bound at most once in a run (a parameter never
  reassigned, a name assigned once outside loops or in exclusive arms of an
  `if`: `_retval`), a global, a value computed from fixed values only
  (`n = x.shape[0]`), an array made from a fixed shape (`np.zeros(n)` and
  `np.ones(n)` share one), `x[i]` with an int `i` of any value (it drops an
  axis), and calls whose shape follows their operands' classes (`np.dot`).
- Elementwise expressions have the union of their operands' classes (a
  scalar has the empty set); whole reductions and `math.*` are scalars.
- A name bound several times is the atom `carried n` when every binding that
  reads n broadcasts `carried n` with atoms in which n appears only through
  its shape (`np.empty(n.shape)`), an element (`n[i]`) or a product with a
  fixed other operand (`W @ n`, `n @ W`): such a binding keeps n's shape. The
  assumption is optimistic and withdrawn to a fixed point: a name whose
  bindings fail it, or whose class reads a withdrawn name, varies.
Anything else varies: a slice whose bound changes (`x[j:]` in `for j`), an
index that may be an integer array or a mask, `np.zeros(j)`, `y = y[1:]`, an
unknown call of changing operands, and whatever is computed from those.

Caveats (assumed, not shown): bindings of n that do not read n are taken to
agree in shape with each other and with the loop's (the value a loop starts
from, `y = a` then `y = y * 0.5 + v`, and two places binding n in one loop,
`t = x[:2]` in one branch and `t = x` in the other). The first is caught
where it matters: the derivative then has another size than its argument,
which api/arguments.py reports as an error naming the argument.
"""
from __future__ import annotations

import gast

from ..syntax import dotted_name, walk

_ELEMENTWISE = {
    "abs", "absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
    "ceil", "clip", "conj", "conjugate", "copy", "cos", "cosh", "deg2rad", "exp", "exp2", "expm1",
    "fabs", "floor", "fmax", "fmin", "hypot", "log", "log10", "log1p", "log2", "logaddexp",
    "maximum", "minimum", "negative", "power", "rad2deg", "real", "imag", "reciprocal", "rint",
    "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh", "where", "asarray", "isnan",
    "isfinite", "logical_and", "logical_or", "logical_not", "heaviside", "copysign", "mod",
    "fmod", "true_divide", "divide", "multiply", "add", "subtract",
    "tie_share", "select_where", "sum_start",  # srcgrad's runtime (forward mode, sums)
}
# Whole reductions give a scalar (called with the array alone).
_REDUCTIONS = {"sum", "mean", "prod", "max", "min", "amax", "amin", "std", "var", "norm",
               "len", "float", "int", "trace", "det", "all", "any", "argmax", "argmin",
               "count_nonzero", "median", "vdot", "logsumexp"}
# Result shapes that follow the shapes of the array operands (the others must be fixed values).
_SHAPE_FOLLOWS = {"dot": 2, "matmul": 2, "outer": 2, "inner": 2, "solve": 2, "kron": 2,
                  "cross": 2, "inv": 1, "transpose": 1, "cumsum": 1, "cumprod": 1, "diff": 1,
                  "ravel": 1, "flatten": 1, "diag": 1, "cholesky": 1, "sum": 1, "mean": 1, "prod": 1, "max": 1, "min": 1, "amax": 1, "amin": 1,
                  "std": 1, "var": 1, "norm": 1}
# Array constructors from a shape, and calls whose result has their first argument's shape
# (whatever their other arguments: np.roll(u, k), np.sort(a, axis=0)).
_CONSTRUCTORS = {"zeros", "ones", "empty", "full"}
_LIKE = {"zeros_like", "ones_like", "empty_like", "full_like", "snapshot", "copy",
         "ascontiguousarray", "axis_extremum_share", "roll", "flip", "fliplr", "flipud",
         "sort", "argsort", "tril", "triu", "nan_to_num", "round", "around", "roll_back",
         "stop_gradient", "unit_like"}
_SCALAR = frozenset()


def _bindings(body, inputs):
    """name -> [(value or a ("for", iter) pair, where)]. `where` is None inside a loop, else
    the (if, arm) pairs around the binding; inputs bind first, outside everything."""
    found = {n: [(("param", n), ())] for n in inputs}

    def bind(n, value, where):
        found.setdefault(n, []).append((value, where))

    def visit(stmts, where):
        for stmt in stmts:
            if isinstance(stmt, gast.For):
                if isinstance(stmt.target, gast.Name):
                    bind(stmt.target.id, ("for", stmt.iter), None)
                visit(stmt.body, None)
                visit(stmt.orelse, where)
            elif isinstance(stmt, gast.While):
                visit(stmt.body, None)
                visit(stmt.orelse, where)
            elif isinstance(stmt, gast.If):
                visit(stmt.body, None if where is None else where + ((id(stmt), 0),))
                visit(stmt.orelse, None if where is None else where + ((id(stmt), 1),))
            elif isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                bind(stmt.targets[0].id, stmt.value, where)
            elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
                bind(stmt.target.id, gast.BinOp(left=gast.Name(stmt.target.id, gast.Load(), None,
                                                               None), op=stmt.op, right=stmt.value),
                     where)
            else:  # any other binding (a tuple target, a with, a handler) is not followed
                for n in walk(stmt):
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                        bind(n.id, None, where)
    visit(body, ())
    return found


def _exclusive(a, b) -> bool:
    """Whether two binding places lie in different arms of one `if`."""
    arms = dict(a)
    return any(arms.get(if_, arm) != arm for if_, arm in b)


class _Classes:
    def __init__(self, body, inputs, ints):
        self.bound = _bindings(body, inputs)
        self.ints = ints
        self.varying: set[str] = set()
        self._visiting: set[str] = set()
        self.memo: dict = {}  # name -> class, for one round of assumptions

    def fixed_once(self, n) -> bool:
        """Bound at most once in a run: outside loops, each binding in an arm of an `if`
        that excludes the others' (a function's returns: `_retval`)."""
        b = self.bound.get(n)
        return b is None or all(w is not None for _, w in b) and all(
            _exclusive(b[i][1], b[j][1]) for i in range(len(b)) for j in range(i))

    # ---- values that are the same at every evaluation --------------------------------------
    def value(self, e):
        if isinstance(e, gast.Constant):
            return ("c", repr(e.value))
        if isinstance(e, gast.Name):
            return self._value_of_name(e.id)
        if isinstance(e, gast.Attribute) and e.attr in ("shape", "size", "ndim"):
            k = self.of(e.value)
            return None if k is None else ("attr", e.attr, k)
        if isinstance(e, gast.Subscript):
            return self._parts("sub", [e.value, e.slice])
        if isinstance(e, gast.BinOp):
            return self._parts(type(e.op).__name__, [e.left, e.right])
        if isinstance(e, gast.UnaryOp):
            return self._parts(type(e.op).__name__, [e.operand])
        if isinstance(e, gast.Tuple):
            return self._parts("tuple", e.elts)
        if isinstance(e, gast.Slice):
            return self._parts("slice", [e.lower, e.upper, e.step])
        if isinstance(e, gast.Call) and "random" not in dotted_name(e.func) and not e.keywords:
            if dotted_name(e.func).split(".")[-1] == "len" and e.args:
                k = self.of(e.args[0])
                return None if k is None else ("len", k)
            return self._parts("call " + dotted_name(e.func), e.args)
        return None

    def _value_of_name(self, n):
        """A name bound once per run, or once in a loop to a fixed value, has a fixed value:
        the value of its binding where that is fixed (so `n = x.shape[0]` and `x.shape[0]`
        are the same value), else the name itself."""
        if n not in self.bound:
            return ("v", n)
        (binding, _), *others = self.bound[n]
        found = None
        if not others and n not in self._visiting and isinstance(binding, gast.AST):
            self._visiting.add(n)
            try:
                found = self.value(binding)
            finally:
                self._visiting.discard(n)
        return ("v", n) if found is None and self.fixed_once(n) else found

    def _parts(self, kind, parts):
        keys = [("c", "None") if p is None else self.value(p) for p in parts]
        return None if any(k is None for k in keys) else (kind, *keys)

    # ---- shape classes: frozensets of atoms ------------------------------------------------
    def of(self, e):
        """e's class, or None. A structural class comes first (`np.zeros(n)` and `np.ones(n)`
        share one), a fixed value's own atom next."""
        if isinstance(e, gast.Constant):
            return _SCALAR
        if isinstance(e, gast.Name):
            return self.of_name(e.id)
        found = self._structure(e)
        if found is None:
            fixed = self.value(e)
            found = None if fixed is None else frozenset([fixed])
        return found

    def _structure(self, e):
        if isinstance(e, gast.BinOp) and isinstance(e.op, gast.MatMult):
            return self._atom("@", [self.of(e.left), self.of(e.right)])
        if isinstance(e, gast.IfExp):
            body, orelse = self.of(e.body), self.of(e.orelse)
            return body if body == orelse else None
        if isinstance(e, gast.BinOp):
            return self._union([e.left, e.right])
        if isinstance(e, gast.UnaryOp):
            return self._union([e.operand])
        if isinstance(e, gast.Compare):
            return self._union([e.left, *e.comparators])
        if isinstance(e, gast.Attribute) and e.attr in ("real", "imag"):
            return self.of(e.value)
        if isinstance(e, gast.Attribute) and e.attr == "T":
            return self._atom("T", [self.of(e.value)])
        if isinstance(e, gast.Subscript) and _whole(e.slice):
            return self.of(e.value)  # x[::-1], x[:, ::-1]: every element, in some order
        if isinstance(e, gast.Subscript):
            return self._atom("sub", [self.of(e.value), self._index(e.slice)])
        if isinstance(e, gast.Call):
            return self._call(e)
        if isinstance(e, (gast.Tuple, gast.List)):
            return self._atom("display", [self.of(x) for x in e.elts])
        return None

    def _union(self, parts):
        classes = [self.of(p) for p in parts]
        return None if any(k is None for k in classes) else frozenset().union(*classes)

    @staticmethod
    def _atom(kind, keys):
        return None if any(k is None for k in keys) else frozenset([(kind, *keys)])

    def _index(self, index):
        """What decides the shape an index selects, or None."""
        if isinstance(index, gast.Tuple):
            parts = [self._index(e) for e in index.elts]
            return None if any(p is None for p in parts) else ("tuple", *parts)
        if isinstance(index, gast.Name) and index.id in self.ints or isinstance(
                index, gast.Constant) and type(index.value) is int:
            return ("int",)  # one element along the axis, whichever int it is
        if isinstance(index, gast.BinOp) and all(
                isinstance(x, gast.Constant) or isinstance(x, gast.Name) and x.id in self.ints
                for x in (index.left, index.right)):
            return ("int",)
        return self.value(index)

    def _call(self, e):
        func = dotted_name(e.func)
        short = func.split(".")[-1]
        args = list(e.args)
        if isinstance(e.func, gast.Attribute) and not func.startswith(("np.", "numpy.", "math.")):
            args = [e.func.value] + args  # a method: x.copy(), x.sum()
        if func.startswith("math."):
            return _SCALAR
        if func in ("max", "min") and len(args) > 1:
            return self._union(args)  # one of its arguments, compared: scalars
        if short in _CONSTRUCTORS and args:
            shape = self.value(args[0])
            if shape is not None:
                return frozenset([("shape", shape if shape[0] == "tuple" else ("tuple", shape))])
        if short in _LIKE and args:
            return self.of(args[0])
        keywords = [self.value(k.value) for k in e.keywords]
        if any(k is None for k in keywords):
            return None
        if short in _REDUCTIONS and len(args) == 1 and not e.keywords:
            return _SCALAR if self.of(args[0]) is not None else None
        if short in _ELEMENTWISE and "random" not in func:
            return self._union(args) if not e.keywords else None
        follow = _SHAPE_FOLLOWS.get(short)
        if follow is None or "random" in func:
            return None
        keys = [self.of(a) for a in args[:follow]] + [self.value(a) for a in args[follow:]]
        return self._atom("call " + short, keys + [tuple(keywords)])

    # ---- names -----------------------------------------------------------------------------
    def of_name(self, n):
        if n in self.varying:
            return None
        bindings = self.bound.get(n)
        if bindings is None or isinstance(bindings[0][0], tuple) and bindings[0][0][0] == "param" \
                and len(bindings) == 1:
            return frozenset([("v", n)])  # a global, or a parameter never reassigned
        if len(bindings) > 1 and self.fixed_once(n):
            return frozenset([("v", n)])
        if len(bindings) > 1 or n in self._visiting:
            return frozenset([("carried", n)])
        if n not in self.memo:
            self._visiting.add(n)
            try:
                found = self._binding(n, bindings[0][0])
            finally:
                self._visiting.discard(n)
            if self.fixed_once(n) and (found is None or any(
                    a[:1] == ("carried",) for k in found for a in _atoms(k))):
                found = frozenset([("v", n)])  # bound once: one shape, whatever its value
            self.memo[n] = found
        return self.memo[n]

    def _binding(self, n, value):
        if value is None:
            return None
        if isinstance(value, tuple) and value[0] == "param":
            return frozenset([("v", n)])
        if isinstance(value, tuple) and value[0] == "for":
            it = value[1]
            if isinstance(it, gast.Call) and dotted_name(it.func) == "range":
                return _SCALAR
            return self._atom("row", [self.of(it)])
        return self.of(value)

    def holds(self, n) -> bool:
        """Whether n's bindings, under the current assumptions, keep one shape in the loops.

        A binding that reads n keeps its shape when its class is n's own atom broadcast with
        others in which n appears only through its shape (`np.empty(n.shape)`), an element
        (`n[i]`) or a product with a fixed matrix (`W @ n`). Bindings that do not read n
        have classes of their own, each fixed; that they agree is assumed (the module's
        caveats: the value a loop starts from, whose class is not needed, and two places
        binding n in one loop)."""
        bindings = self.bound[n]
        if self.fixed_once(n):
            return True
        if len(bindings) == 1:
            return self.of_name(n) is not None
        mine = ("carried", n)
        in_loops = any(w is None for _, w in bindings)  # then the others are starting values
        classes = [self._binding(n, v) for v, w in bindings if w is None or not in_loops]
        if any(k is None for k in classes):
            return False
        return all(a == mine or _safe(a, mine) for k in classes
                   if any(mine in _atoms(a) for a in k) for a in k)


def _safe(node, mine) -> bool:
    """Whether every occurrence of `mine` inside an atom depends on its shape only, keeping
    it: through `.shape` (`np.empty(n.shape)`), as the array of an element (`n[i]`), or as
    an operand of a product with a fixed other one (`W @ n`, `n @ W`)."""
    if node == mine:
        return False
    if isinstance(node, frozenset):
        return all(_safe(x, mine) for x in node)
    if not isinstance(node, tuple) or not node:
        return True
    kind = node[0]
    if kind in ("attr", "len"):
        return True
    if kind == "sub" and _int_index(node[2]):
        return all(_safe(x, mine) for x in node[1] - {mine})
    if kind in ("@", "call dot", "call matmul") and len(node) == 3 \
            and frozenset([mine]) in node[1:]:
        other = node[1] if node[2] == frozenset([mine]) else node[2]
        return mine not in {x for a in other for x in _atoms(a)}
    return all(_safe(p, mine) for p in node[1:])


def _whole(index) -> bool:
    """A slice, or a tuple of them, taking every element along its axes (step 1 or -1)."""
    if isinstance(index, gast.Tuple):
        return all(_whole(e) for e in index.elts)
    return isinstance(index, gast.Slice) and index.lower is None and index.upper is None and (
        index.step is None or isinstance(index.step, gast.Constant) and index.step.value in (1, -1)
        or isinstance(index.step, gast.UnaryOp) and isinstance(index.step.op, gast.USub)
        and isinstance(index.step.operand, gast.Constant) and index.step.operand.value == 1)


def _int_index(index) -> bool:
    return index == ("int",) or isinstance(index, tuple) and index[:1] == ("tuple",) and all(
        p == ("int",) for p in index[1:])


def _atoms(key):
    """Every nested tuple inside a class atom."""
    found = {key}
    for part in key:
        if isinstance(part, tuple):
            found |= _atoms(part)
        elif isinstance(part, frozenset):
            for x in part:
                found |= _atoms(x)
    return found


def shape_varying(body, inputs, ints) -> set[str]:
    """Names bound in `body` whose shape may differ between two of their bindings."""
    classes = _Classes(body, set(inputs), ints)
    while True:
        failed = {n for n in classes.bound if n not in classes.varying and not classes.holds(n)}
        if not failed:
            return classes.varying
        classes.varying |= failed
        classes.memo.clear()
