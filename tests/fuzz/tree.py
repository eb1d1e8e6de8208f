"""The fuzzer's program tree and its printer.

A generated program is a `Module` of `FunctionDef`s whose bodies are lists of
statements (`Assign`, `AugAssign`, `ExprStmt`, `For`, `While`, `If`,
`Return`, `Break`, `Continue`) over expressions (`Num`, `Name`, `Bin`,
`Unary`, `Call`, `Method`, `Attr`, `Index`, `Slice`, `Compare`, `BoolOp`,
`IfExp`, `ListLit`, `TupleLit`). `Module.source()` prints it as Python with
the fewest parentheses that keep the tree's meaning.

Every float-valued expression carries its NumPy `shape` (a tuple, `()` for a
scalar); other expressions (integers, booleans, lists) have `shape = None`.
`bounds.py` uses the shapes to bound magnitudes; the generator sets them.
"""
from __future__ import annotations

# Python's operator precedences, low to high.
IFEXP, OR, AND, NOT, CMP, ADD, MUL, UNARY, POW, PRIMARY, ATOM = 1, 2, 3, 4, 5, 11, 12, 13, 14, 16, 17
BIN_PREC = {"+": ADD, "-": ADD, "*": MUL, "/": MUL, "%": MUL, "@": MUL, "**": POW}


class Expr:
    prec = ATOM
    shape = None

    def src(self) -> str:
        raise NotImplementedError

    def children(self) -> list:
        return []


def _sub(child, min_prec: int) -> str:
    text = child.src()
    return f"({text})" if child.prec < min_prec else text


def shaped(expr, shape):
    expr.shape = shape
    return expr


class Num(Expr):
    def __init__(self, value, shape=()):
        self.value = value
        self.shape = shape if isinstance(value, float) else None

    @property
    def prec(self):
        return UNARY if self.value < 0 else ATOM

    def src(self):
        return repr(self.value)


class Name(Expr):
    def __init__(self, id, shape=None):
        self.id, self.shape = id, shape

    def src(self):
        return self.id


class Bin(Expr):
    def __init__(self, op, left, right, shape=None):
        self.op, self.left, self.right, self.shape = op, left, right, shape

    @property
    def prec(self):
        return BIN_PREC[self.op]

    def src(self):
        p = self.prec
        if self.op == "**":  # right-associative; a unary minus on the left needs parentheses
            return f"{_sub(self.left, POW + 1)} ** {_sub(self.right, UNARY)}"
        return f"{_sub(self.left, p)} {self.op} {_sub(self.right, p + 1)}"

    def children(self):
        return [self.left, self.right]


class Unary(Expr):
    def __init__(self, op, operand, shape=None):
        self.op, self.operand, self.shape = op, operand, shape

    @property
    def prec(self):
        return NOT if self.op == "not" else UNARY

    def src(self):
        sep = " " if self.op == "not" else ""
        return f"{self.op}{sep}{_sub(self.operand, self.prec)}"

    def children(self):
        return [self.operand]


class Call(Expr):
    prec = PRIMARY

    def __init__(self, func: str, args, kwargs=(), shape=None):
        self.func, self.args, self.kwargs, self.shape = func, list(args), list(kwargs), shape

    def src(self):
        parts = [a.src() for a in self.args] + [f"{k}={v.src()}" for k, v in self.kwargs]
        return f"{self.func}({', '.join(parts)})"

    def children(self):
        return self.args + [v for _, v in self.kwargs]


class Method(Expr):
    prec = PRIMARY

    def __init__(self, obj, name, args=(), shape=None):
        self.obj, self.name, self.args, self.shape = obj, name, list(args), shape

    def src(self):
        return f"{_sub(self.obj, PRIMARY)}.{self.name}({', '.join(a.src() for a in self.args)})"

    def children(self):
        return [self.obj] + self.args


class Attr(Expr):
    prec = PRIMARY

    def __init__(self, obj, name, shape=None):
        self.obj, self.name, self.shape = obj, name, shape

    def src(self):
        return f"{_sub(self.obj, PRIMARY)}.{self.name}"

    def children(self):
        return [self.obj]


class Slice(Expr):
    def __init__(self, lo=None, hi=None, step=None):
        self.lo, self.hi, self.step = lo, hi, step

    def src(self):
        text = ":".join("" if e is None else e.src() for e in (self.lo, self.hi))
        return text + (f":{self.step.src()}" if self.step is not None else "")

    def children(self):
        return [e for e in (self.lo, self.hi, self.step) if e is not None]


class Index(Expr):
    prec = PRIMARY

    def __init__(self, obj, items, shape=None):
        self.obj, self.items, self.shape = obj, list(items), shape

    def src(self):
        return f"{_sub(self.obj, PRIMARY)}[{', '.join(i.src() for i in self.items)}]"

    def children(self):
        return [self.obj] + self.items


class Compare(Expr):
    prec = CMP

    def __init__(self, op, left, right):
        self.op, self.left, self.right = op, left, right

    def src(self):
        return f"{_sub(self.left, CMP + 1)} {self.op} {_sub(self.right, CMP + 1)}"

    def children(self):
        return [self.left, self.right]


class BoolOp(Expr):
    def __init__(self, op, values):
        self.op, self.values = op, list(values)

    @property
    def prec(self):
        return AND if self.op == "and" else OR

    def src(self):
        return f" {self.op} ".join(_sub(v, self.prec + 1) for v in self.values)

    def children(self):
        return self.values


class IfExp(Expr):
    prec = IFEXP

    def __init__(self, body, test, orelse, shape=None):
        self.body, self.test, self.orelse, self.shape = body, test, orelse, shape

    def src(self):
        return f"{_sub(self.body, OR)} if {_sub(self.test, OR)} else {_sub(self.orelse, IFEXP)}"

    def children(self):
        return [self.body, self.test, self.orelse]


class ListLit(Expr):
    def __init__(self, items):
        self.items = list(items)

    def src(self):
        return f"[{', '.join(i.src() for i in self.items)}]"

    def children(self):
        return self.items


class TupleLit(Expr):
    def __init__(self, items):
        self.items = list(items)

    def src(self):
        inner = ", ".join(i.src() for i in self.items)
        return f"({inner},)" if len(self.items) == 1 else f"({inner})"

    def children(self):
        return self.items


# ---------------------------------------------------------------- statements

class Stmt:
    pass


class Assign(Stmt):
    def __init__(self, target, value):
        self.target, self.value = target, value


class AugAssign(Stmt):
    def __init__(self, target, op, value):
        self.target, self.op, self.value = target, op, value


class ExprStmt(Stmt):
    def __init__(self, value):
        self.value = value


class For(Stmt):
    """`for <targets> in <iter>:`; `trips` is the most iterations it can run and
    `binds` says what each target holds: ("index", None) or ("element", expr)."""

    def __init__(self, targets, iter, body, trips, binds):
        self.targets, self.iter, self.body, self.trips, self.binds = targets, iter, body, trips, binds


class While(Stmt):
    def __init__(self, test, body, cap):
        self.test, self.body, self.cap = test, body, cap


class If(Stmt):
    def __init__(self, test, body, orelse=()):
        self.test, self.body, self.orelse = test, list(body), list(orelse)


class Return(Stmt):
    def __init__(self, value):
        self.value = value


class Break(Stmt):
    pass


class Continue(Stmt):
    pass


class FunctionDef(Stmt):
    def __init__(self, name, params, body):
        self.name, self.params, self.body = name, list(params), body


def stmt_lines(stmt, indent=0) -> list[str]:
    pad = "    " * indent
    if isinstance(stmt, Assign):
        return [f"{pad}{stmt.target.src()} = {stmt.value.src()}"]
    if isinstance(stmt, AugAssign):
        return [f"{pad}{stmt.target.src()} {stmt.op}= {stmt.value.src()}"]
    if isinstance(stmt, ExprStmt):
        return [f"{pad}{stmt.value.src()}"]
    if isinstance(stmt, Return):
        return [f"{pad}return {stmt.value.src()}"]
    if isinstance(stmt, Break):
        return [f"{pad}break"]
    if isinstance(stmt, Continue):
        return [f"{pad}continue"]
    if isinstance(stmt, For):
        head = [f"{pad}for {', '.join(stmt.targets)} in {stmt.iter.src()}:"]
        return head + block_lines(stmt.body, indent + 1)
    if isinstance(stmt, While):
        return [f"{pad}while {stmt.test.src()}:"] + block_lines(stmt.body, indent + 1)
    if isinstance(stmt, If):
        lines = [f"{pad}if {stmt.test.src()}:"] + block_lines(stmt.body, indent + 1)
        orelse = stmt.orelse
        while len(orelse) == 1 and isinstance(orelse[0], If):  # elif chains
            lines += [f"{pad}elif {orelse[0].test.src()}:"] + block_lines(orelse[0].body, indent + 1)
            orelse = orelse[0].orelse
        if orelse:
            lines += [f"{pad}else:"] + block_lines(orelse, indent + 1)
        return lines
    if isinstance(stmt, FunctionDef):
        return [f"{pad}def {stmt.name}({', '.join(stmt.params)}):"] + block_lines(stmt.body, indent + 1)
    raise TypeError(stmt)


def block_lines(body, indent) -> list[str]:
    lines = [line for s in body for line in stmt_lines(s, indent)]
    return lines or ["    " * indent + "pass"]


def sub_blocks(stmt) -> list[list]:
    """The statement lists nested directly in `stmt`."""
    if isinstance(stmt, (For, While, FunctionDef)):
        return [stmt.body]
    if isinstance(stmt, If):
        return [stmt.body, stmt.orelse]
    return []


class Module:
    """Helper functions first, then the function under test (the last one)."""

    HEADER = "import numpy as np\n"

    def __init__(self, functions):
        self.functions = list(functions)

    def body_source(self) -> str:
        """The functions without the import line (autograd execs it with its own `np`)."""
        return "\n\n".join("\n".join(stmt_lines(f)) + "\n" for f in self.functions)

    def source(self) -> str:
        return self.HEADER + "\n\n" + self.body_source()


# ---------------------------------------------------------- memory sharing

def is_helper(func: str) -> bool:
    return func[:1] == "h" and func[1:].isdigit()  # the generator names helpers h1, h2


def stmt_values(stmt):
    """The expression a simple statement stores (for data-flow dependences)."""
    if isinstance(stmt, For):
        return ListLit([stmt_values(b) for b in stmt.body])
    return stmt.value


def view_bases(e) -> tuple:
    """The arrays `e` may share memory with (a bare name, a slice, a row, `.T`, a branch of
    `a if c else b`, or what a helper returns: any of its array arguments)."""
    if not e.shape:
        return ()
    if isinstance(e, Name):
        return (e.id,)
    if isinstance(e, (Index, Attr)):
        return (e.obj.id,) if isinstance(e.obj, Name) else view_bases(e.obj)
    if isinstance(e, IfExp):
        return view_bases(e.body) + view_bases(e.orelse)
    if isinstance(e, Call) and is_helper(e.func):
        return tuple(b for a in e.args for b in view_bases(a))
    return ()


def alias_bases(e) -> tuple:
    """The arrays `e` may be (not a part of): bare names, through `a if c else b` and helpers."""
    if not e.shape:
        return ()
    if isinstance(e, Name):
        return (e.id,)
    if isinstance(e, IfExp):
        return alias_bases(e.body) + alias_bases(e.orelse)
    if isinstance(e, Call) and is_helper(e.func):
        return tuple(b for a in e.args for b in alias_bases(a))
    return ()


def fresh(e):
    """`e`, copied if it may share memory with a named array."""
    return Method(e, "copy", shape=e.shape) if view_bases(e) else e
