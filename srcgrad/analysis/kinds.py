"""What kind of value each name of a generated function holds, given its parameters' kinds.

A *kind* is one of
- `("num", d)`: a number; `d` is "f" (float), "i" (int) or "b" (bool);
- `("arr", ndim, d)`: an ndarray of `ndim` >= 1 dimensions whose dtype is float64 ("f"),
  an integer ("i"), bool ("b") or anything else ("?");
- `("tup", (kinds...))`: a tuple;
- `("list", kind)`: a list whose items all have `kind` (a tape of tuples, `tape_like`);
- `TOP`: anything else, or not known.

`infer(func, params)` gives every name bound in `func` (a gast FunctionDef) the join of
the kinds of all its bindings, flow-insensitively, to a fixed point: a name bound to two
kinds (an int and an array, arrays of two ranks) is TOP. Rules cover the arithmetic,
NumPy calls and srcgrad runtime helpers generated code uses; anything else is TOP, which
the passes reading kinds (transforms/loops.py) treat as "leave alone". Guarantee: a
name's kind, if not TOP, is the kind of every value it holds whenever the function runs
with arguments of the given kinds (numba types each binding the same way: a name that
holds an int and then a float is a float).
"""
from __future__ import annotations

import gast
import numpy as np

from ..syntax import walk

TOP = ("top",)
_BOTTOM = None
F, I = ("num", "f"), ("num", "i")  # noqa: E741  (I: the int kind)

UFUNCS = {"exp", "log", "log1p", "expm1", "log2", "log10", "sin", "cos", "tan", "tanh",
           "sinh", "cosh", "arcsin", "arccos", "arctan", "sqrt", "square", "abs", "absolute",
           "negative", "sign", "maximum", "minimum", "power", "reciprocal", "exp2", "cbrt",
           "floor", "ceil", "arctan2", "hypot", "fabs", "divide", "true_divide", "multiply",
           "add", "subtract"}
_REDUCTIONS = {"sum", "max", "min", "mean", "prod", "amax", "amin"}
ALLOCATE = {"zeros", "ones", "empty"}
# Helpers whose result has the kind of one argument: (its position, whether a float).
_LIKE = {"snapshot": (0, False), "restore_at": (2, False), "restore": (1, False),
         "zeros_like": (0, True), "zeros_plus": (0, True), "fill_like": (0, True),
         "unbroadcast": (1, True), "expand_to": (1, True), "axis_extremum_share": (0, True),
         "linked": (0, False), "stored": (0, True)}
_INTS = {"trip_count", "range_last", "len", "slice_at"}


def of_value(value):
    """The kind of a run-time argument."""
    if isinstance(value, (bool, np.bool_)):
        return ("num", "b")
    if isinstance(value, (int, np.integer)):
        return I
    if isinstance(value, (float, np.floating)):
        return F if np.dtype(type(value)) == np.float64 or isinstance(value, float) else TOP
    if isinstance(value, np.ndarray) and value.ndim >= 1:
        return ("arr", value.ndim, _dtype_letter(value.dtype))
    if isinstance(value, tuple):
        return ("tup", tuple(of_value(v) for v in value))
    return TOP


def _dtype_letter(dtype) -> str:
    if dtype == np.float64:
        return "f"
    return "i" if dtype.kind in "iu" and dtype.itemsize == 8 else "b" if dtype == np.bool_ else "?"


def join(a, b):
    if a is _BOTTOM:
        return b
    if b is _BOTTOM or a == b:
        return a
    if a[0] == b[0] == "num":
        return F if "f" in (a[1], b[1]) else I
    if a[0] == b[0] == "tup" and len(a[1]) == len(b[1]):
        return ("tup", tuple(join(x, y) for x, y in zip(a[1], b[1])))
    if a[0] == b[0] == "list":
        return ("list", join(a[1], b[1]))
    return TOP


def is_array(kind) -> bool:
    return kind is not _BOTTOM and kind[0] == "arr"


def is_number(kind) -> bool:
    return kind is not _BOTTOM and kind[0] == "num"


def holds_memory(kind) -> bool:
    """Whether a value of this kind (None: not known) may hold an array; numbers and
    tuples of numbers (shapes) do not."""
    if kind is _BOTTOM or kind[0] == "num":
        return kind is _BOTTOM
    return kind[0] != "tup" or any(map(holds_memory, kind[1]))


_RETURNS = "<returns>"  # not a name: where infer keeps its `returns` while it runs


def infer(func: gast.FunctionDef, params: dict, returns=None) -> dict:
    """name -> kind for every parameter and bound name of `func` (see the module docstring).
    `returns`, if given, is (names, kind): a call of a function in `names` (the generated
    functions of the same module) returns `kind(name, arg_kinds)`."""
    env = {n.id: _BOTTOM for n in walk(func) if isinstance(n, gast.Name)
           and isinstance(n.ctx, gast.Store)}
    env.update(params)
    env[_RETURNS] = returns
    for _ in range(12):
        before = dict(env)
        _visit(func.body, env)
        if env == before:
            del env[_RETURNS]
            return {n: TOP if k is _BOTTOM else k for n, k in env.items()}
    del env[_RETURNS]
    return {n: (k if n in params else TOP) for n, k in env.items()}  # no fixed point: give up


def returned(func: gast.FunctionDef, kinds: dict):
    """The join of the kinds `func`'s return statements return, given its names' kinds
    (BOTTOM, None, when it has none: it never returns)."""
    kind = _BOTTOM
    for node in walk(func):
        if isinstance(node, gast.Return):
            kind = join(kind, TOP if node.value is None else kind_of(node.value, kinds))
    return kind


def _bind(env, target, kind):
    if isinstance(target, gast.Name):
        env[target.id] = join(env.get(target.id, _BOTTOM), kind)
    elif isinstance(target, (gast.Tuple, gast.List)):
        items = kind[1] if kind is not _BOTTOM and kind[0] == "tup" else None
        for k, elt in enumerate(target.elts):
            if items is not None and len(items) == len(target.elts):
                _bind(env, elt, items[k])
            elif kind is not _BOTTOM:
                _bind(env, elt, TOP)


def _visit(stmts, env):
    for stmt in stmts:
        if isinstance(stmt, gast.Assign):
            kind = kind_of(stmt.value, env)
            for target in stmt.targets:
                _bind(env, target, kind)
        elif isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
            _bind(env, stmt.target, _binop(env.get(stmt.target.id, _BOTTOM),
                                           kind_of(stmt.value, env), stmt.op))
        elif isinstance(stmt, gast.For):
            it = stmt.iter
            ranged = isinstance(it, gast.Call) and isinstance(it.func, gast.Name) \
                and it.func.id == "range"
            _bind(env, stmt.target, I if ranged else TOP)
            _visit(stmt.body, env)
            _visit(stmt.orelse, env)
        elif isinstance(stmt, (gast.If, gast.While)):
            _visit(stmt.body, env)
            _visit(stmt.orelse, env)
        elif isinstance(stmt, (gast.With, gast.Try)):
            for field in ("body", "orelse", "finalbody"):
                _visit(getattr(stmt, field, []) or [], env)
            for handler in getattr(stmt, "handlers", []):
                if handler.name is not None:
                    _bind(env, handler.name, TOP)
                _visit(handler.body, env)


def _number_result(a, b, op):
    if isinstance(op, gast.Div):
        return F
    return F if "f" in (a[1], b[1]) else I


def _binop(a, b, op):
    if a is _BOTTOM or b is _BOTTOM:
        return _BOTTOM
    if isinstance(op, gast.MatMult):
        return _matmul(a, b)
    if a[0] == "num" and b[0] == "num":
        return _number_result(a, b, op)
    if a[0] == b[0] == "tup" and isinstance(op, gast.Add):
        return ("tup", a[1] + b[1])
    arrays = [k for k in (a, b) if k[0] == "arr"]
    if not arrays or any(k[0] not in ("arr", "num") for k in (a, b)):
        return TOP
    letters = {k[2] if k[0] == "arr" else k[1] for k in (a, b)}
    if "?" in letters:
        return TOP
    if isinstance(op, gast.Div) or "f" in letters:
        letter = "f"
    elif isinstance(op, (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod, gast.Pow)):
        letter = "i"
    else:
        return TOP
    return ("arr", max(k[1] for k in arrays), letter)


def _matmul(a, b):
    if not (is_array(a) and is_array(b)) or a[2] != "f" or b[2] != "f":
        return TOP
    ndim = {(1, 1): 0, (2, 1): 1, (1, 2): 1, (2, 2): 2}.get((a[1], b[1]))
    return TOP if ndim is None else (F if ndim == 0 else ("arr", ndim, "f"))


def _element(kind, ndim):
    """The kind of an array of `kind`'s dtype with `ndim` dimensions (a number for 0)."""
    if ndim < 0:
        return TOP
    if ndim == 0:
        return {"f": F, "i": I, "b": ("num", "b")}.get(kind[2], TOP)
    return ("arr", ndim, kind[2])


def _subscript(node, env):
    base = kind_of(node.value, env)
    if base is _BOTTOM:
        return _BOTTOM
    index = node.slice
    if base[0] == "tup":
        if isinstance(index, gast.Constant) and isinstance(index.value, int) \
                and -len(base[1]) <= index.value < len(base[1]):
            return base[1][index.value]
        if isinstance(index, gast.Slice) and index.step is None and all(
                b is None or isinstance(b, gast.Constant) and type(b.value) is int
                for b in (index.lower, index.upper)):  # shape[1:]: a row's shape
            return ("tup", base[1][slice(*[b and b.value for b in (index.lower, index.upper)])])
        return TOP
    if base[0] == "list":
        at = kind_of(index, env)
        return base[1] if at == I else at if at is _BOTTOM else TOP
    if base[0] != "arr":
        return TOP
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    if len(parts) > base[1]:
        return TOP
    dropped = 0
    for part in parts:
        if isinstance(part, gast.Slice):
            continue
        kind = kind_of(part, env)
        if kind is _BOTTOM:
            return _BOTTOM
        if kind != I:
            return TOP
        dropped += 1
    return _element(base, base[1] - dropped)


def kind_of(node, env):
    """The kind of expression `node` (None while a name it reads has no binding yet)."""
    if isinstance(node, gast.Constant):
        value = node.value
        if isinstance(value, bool):
            return ("num", "b")
        return I if isinstance(value, int) else F if isinstance(value, float) else TOP
    if isinstance(node, gast.Name):
        return env[node.id] if node.id in env else TOP  # a global: np, math, a helper
    if isinstance(node, gast.Tuple):
        kinds = [kind_of(e, env) for e in node.elts]
        return _BOTTOM if _BOTTOM in kinds else ("tup", tuple(kinds))
    if isinstance(node, gast.BinOp):
        return _binop(kind_of(node.left, env), kind_of(node.right, env), node.op)
    if isinstance(node, gast.UnaryOp):
        inner = kind_of(node.operand, env)
        if isinstance(node.op, gast.Not):
            return ("num", "b") if is_number(inner) else TOP if inner is not _BOTTOM else inner
        if is_number(inner) and inner[1] == "b":
            return I
        return inner if inner is _BOTTOM or inner[0] in ("num", "arr") else TOP
    if isinstance(node, gast.Compare):
        kinds = [kind_of(n, env) for n in [node.left, *node.comparators]]
        if _BOTTOM in kinds:
            return _BOTTOM
        return ("num", "b") if all(is_number(k) for k in kinds) else TOP
    if isinstance(node, gast.IfExp):
        return join(kind_of(node.body, env), kind_of(node.orelse, env))
    if isinstance(node, gast.Attribute):
        return _attribute(node, env)
    if isinstance(node, gast.Subscript):
        return _subscript(node, env)
    if isinstance(node, gast.Call):
        return _call(node, env)
    return TOP


def _attribute(node, env):
    base = kind_of(node.value, env) if not isinstance(node.value, gast.Name) \
        or node.value.id in env else TOP
    if base is _BOTTOM:
        return _BOTTOM
    if not is_array(base):
        return TOP
    if node.attr == "shape":
        return ("tup", (I,) * base[1])
    if node.attr in ("size", "ndim"):
        return I
    if node.attr == "T":
        return base
    return TOP


def _called(func):
    """'np.exp' / 'math.log' / 'zeros_like' for a call's function, or None."""
    parts = []
    while isinstance(func, gast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, gast.Name):
        return None
    parts.append(func.id)
    return ".".join(reversed(parts))


def _call(node, env):
    called = _called(node.func)
    args = [kind_of(a, env) for a in node.args]
    if _BOTTOM in args:
        return _BOTTOM
    if called is None:
        return TOP
    module, _, attr = called.rpartition(".")
    if module == "math":
        return I if attr in ("floor", "ceil", "trunc") else F
    if module == "np":
        return _numpy(attr, args, node)
    if module:
        if called.endswith(".copy") and not node.args:
            base = kind_of(node.func.value, env)
            return base if base is _BOTTOM or is_array(base) else TOP
        return TOP
    returns = env.get(_RETURNS)
    if returns is not None and attr in returns[0]:
        return returns[1](attr, tuple(args)) if not node.keywords else TOP
    return _helper(attr, args)


def _numpy(attr, args, node):
    if attr in UFUNCS and args:
        if any(k[0] not in ("num", "arr") for k in args):
            return TOP
        arrays = [k for k in args if k[0] == "arr"]
        if any(k[2] == "?" for k in arrays):
            return TOP
        return ("arr", max(k[1] for k in arrays), "f") if arrays else F
    if attr in _REDUCTIONS and len(args) == 1 and not node.keywords:
        return F if is_array(args[0]) and args[0][2] == "f" else TOP
    if attr in _REDUCTIONS and len(args) == 1 and [k.arg for k in node.keywords] == ["axis"] \
            and isinstance(node.keywords[0].value, gast.Constant) \
            and type(node.keywords[0].value.value) is int:  # along one axis of >= 2
        return ("arr", args[0][1] - 1, "f") if is_array(args[0]) and args[0][1] >= 2 \
            and args[0][2] == "f" else TOP
    if attr in ALLOCATE and len(args) == 1 and not node.keywords:
        shape = args[0]
        if shape == I:
            return ("arr", 1, "f")
        if shape[0] == "tup" and shape[1] and all(k == I for k in shape[1]):
            return ("arr", len(shape[1]), "f")
        return TOP
    if attr in ("zeros_like", "empty_like", "ones_like", "copy") and len(args) == 1 \
            and not node.keywords:
        return args[0] if is_array(args[0]) else TOP
    if attr in ("dot", "matmul") and len(args) == 2:
        return _matmul(*args)
    return TOP


def _helper(name, args):
    if name in _INTS:
        return I
    if name in ("float",):
        return F
    if name in ("int",):
        return I
    if name in ("min", "max") and len(args) >= 2 and all(k in (I, F) for k in args):
        return I if all(k == I for k in args) else F
    if name in _LIKE and len(args) > _LIKE[name][0]:
        position, floats = _LIKE[name]
        like = args[position]
        if is_number(like):
            return F if floats else like
        if is_array(like):
            return ("arr", like[1], "f") if floats else like
        return TOP
    if name in ("matmul_lhs_grad", "matmul_rhs_grad") and len(args) == 3 \
            and all(is_number(k) or (is_array(k) and k[1] <= 2) for k in args) \
            and args[0][-1] == "f":  # a float cotangent: products are floats
        like = args[1] if name == "matmul_lhs_grad" else args[2]  # the operand's shape
        return F if is_number(like) else ("arr", like[1], "f")
    if name == "seed_like" and args:
        return F if is_number(args[0]) else args[0] if is_array(args[0]) else TOP
    if name in ("tape_like", "tape_array") and len(args) == 2:
        item = args[0]
        if is_array(item):
            return ("arr", item[1] + 1, item[2])
        if is_number(item):
            return ("arr", 1, item[1] if name == "tape_like" else
                    ("b" if item[1] == "b" else "f"))
        if name == "tape_like" and item[0] == "tup":
            return ("list", item)
    return TOP
