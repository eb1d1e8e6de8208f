"""What a generated gradient's forward sweep records, counted by running that sweep once.

Guarantees: `census(program, inputs)` runs the main generated function, the same source
numba compiles, as Python up to its `# backward sweep` comment, with every recording
replaced by a counter: `tape_array` and `tape_like` allocate nothing, `record_at` and
`_tape_v.append` store nothing. So counting costs about one run of the user's function
as Python (its own arrays, no tape) whatever the tape's size, and the backward sweep
never runs. The count says, per recording site (a generated line), how often it recorded,
what (dtype, shape), and how many bytes the compiled code holds for it:

- a preallocated tape holds its whole capacity from its allocation on (capacity x the
  item's bytes; `tape_array` of a number holds float64, as its numba version does);
- a stack holds what is pushed: an array's data once per buffer (pushing an array that is
  held already, an argument or the same array again, costs nothing; a view keeps its
  whole base array alive), 8 bytes per number (1 per bool), the list's own slots aside.

`peak` is the largest sum of live tape bytes reached during the sweep (a site allocated
again drops its previous allocation). Outermost loops count their iterations (`turns`).
Checkpointed loops' snapshots held at its end are counted apart (`snapshot_bytes`).
Recursive helpers (`g__grad_all`) run as they are: their short-lived tapes are not counted.
"""
from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..errors import SrcgradError

_BACKWARD = "# backward sweep"
_ALLOCATORS = ("tape_array", "tape_like")
_READ_BACK = ("srcgrad's tape report cannot count this gradient: its forward sweep reads a "
              "tape back, which srcgrad's generated code does not do (please report this)")


@dataclass
class SiteCount:
    """One recording site: its count, the bytes it holds, the kind of value it records."""

    dtype: str
    shape: tuple | None
    kind: object  # what a recording must match for the shape not to vary (cheap to compare)
    count: int = 0
    bytes: int = 0
    shapes_vary: bool = False


def _kind(value):
    return (value.dtype, value.shape) if type(value) is np.ndarray else type(value)


@dataclass
class Census:
    sites: dict = field(default_factory=dict)  # generated line -> SiteCount
    turns: dict = field(default_factory=dict)  # generated line of an outermost loop -> count
    snapshots: int = 0  # bytes of checkpointed loops' snapshots (snapshot_bytes)
    held: dict = field(default_factory=dict)  # the function's locals when its sweep ends
    live: int = 0
    peak: int = 0

    def grow(self, nbytes: int) -> None:
        self.live += nbytes
        self.peak = max(self.peak, self.live)


def describe(value) -> tuple[str, tuple | None]:
    """(dtype, shape) of a recorded value as numba holds it."""
    if isinstance(value, np.ndarray):
        return str(value.dtype), value.shape
    if isinstance(value, (bool, np.bool_)):
        return "bool", ()
    if isinstance(value, np.generic):
        return str(value.dtype), ()
    if isinstance(value, int):
        return "int64", ()
    if isinstance(value, float):
        return "float64", ()
    return type(value).__name__, None


def item_bytes(value) -> int:
    """Bytes one copy of `value` takes in compiled code."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, (bool, np.bool_)):
        return 1
    if isinstance(value, np.generic):
        return value.itemsize
    if isinstance(value, (tuple, list)):
        return sum(item_bytes(v) for v in value)
    return 8


class _Preallocated:
    """Stands for `tape_array(x, n)` / `tape_like(x, n)`: holds no values."""

    def __init__(self, item: int, capacity: int):
        self.item, self.capacity = item, capacity

    def __getitem__(self, k):
        raise SrcgradError(_READ_BACK)

    def __getattr__(self, attribute):
        raise SrcgradError(_READ_BACK)


class _Stack(_Preallocated):
    """Stands for `_tape_v = []`: counts what is pushed, keeps none of it."""

    def __init__(self):
        super().__init__(0, 0)


def _root(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


class _Counter:
    """The hooks the rewritten forward sweep calls."""

    def __init__(self, held):
        self.census = Census()
        self._held = weakref.WeakValueDictionary()  # id -> a base array pushed, while alive
        for value in held:
            if isinstance(value, np.ndarray):
                self._note(_root(value))
        self._tapes: dict[str, _Preallocated] = {}

    def _note(self, root) -> bool:
        """Whether `root`'s buffer is new (then it is noted as held)."""
        if self._held.get(id(root)) is root:
            return False
        self._held[id(root)] = root
        return True

    def alloc(self, tape: str, value, n):
        capacity = max(int(n), 0)
        item = item_bytes(value)
        if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
            item = 8  # tape_array widens numbers to float64; tape_like keeps int64/float64
        made = _Preallocated(item, capacity)
        old = self._tapes.get(tape)
        if old is not None:
            self.census.live -= old.item * old.capacity
        self._tapes[tape] = made
        self.census.grow(item * capacity)
        return made

    def stack(self, tape: str):
        made = _Stack()
        self._tapes[tape] = made
        return made

    def record(self, line: int, tape, value) -> None:
        site = self.census.sites.get(line)
        if site is None:
            site = self.census.sites[line] = SiteCount(*describe(value), _kind(value))
        elif _kind(value) != site.kind:
            site.shapes_vary = True
        site.count += 1
        if type(tape) is _Stack:
            nbytes = self._pushed_bytes(value)
            self.census.grow(nbytes)
            site.bytes += nbytes
        else:
            site.bytes += tape.item

    def _pushed_bytes(self, value) -> int:
        if isinstance(value, np.ndarray):
            root = _root(value)
            return root.nbytes if self._note(root) else 0
        if isinstance(value, tuple):
            return sum(self._pushed_bytes(v) for v in value)
        return item_bytes(value)

    def turn(self, line: int) -> None:
        self.census.turns[line] = self.census.turns.get(line, 0) + 1


def forward_sweep(source: str, function: str) -> ast.FunctionDef:
    """The generated `function`'s definition, cut at its backward sweep."""
    tree = ast.parse(source)
    func = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    lines = source.splitlines()
    cut = next((k + 1 for k in range(func.lineno, func.end_lineno)
                if lines[k].strip() == _BACKWARD), None)
    if cut is not None:
        func.body = [s for s in func.body if s.lineno < cut]
    return func


def _hook(name: str, *args) -> ast.Call:
    return ast.Call(func=ast.Attribute(value=ast.Name(id="_sg_census", ctx=ast.Load()),
                                       attr=name, ctx=ast.Load()),
                    args=list(args), keywords=[])


def _tape_name(node) -> str | None:
    if isinstance(node, ast.Name) and node.id.startswith("_tape_"):
        return node.id
    return None


def recorded(stmt) -> tuple[ast.expr, ast.expr] | None:
    """(tape, value) if `stmt` is `record_at(tape, k, value)` or `tape.append(value)`."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    if isinstance(call.func, ast.Name) and call.func.id == "record_at" and len(call.args) == 3:
        return call.args[0], call.args[2]
    if (isinstance(call.func, ast.Attribute) and call.func.attr == "append"
            and _tape_name(call.func.value) and len(call.args) == 1):
        return call.func.value, call.args[0]
    return None


class _Instrument(ast.NodeTransformer):
    """Recordings become counter calls; each outermost loop counts its iterations."""

    def __init__(self):
        self.depth = 0

    def visit_Assign(self, node):
        tape = _tape_name(node.targets[0]) if len(node.targets) == 1 else None
        value = node.value
        if tape and isinstance(value, ast.List) and not value.elts:
            node.value = _hook("stack", ast.Constant(tape))
        elif (tape and isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
              and value.func.id in _ALLOCATORS):
            node.value = _hook("alloc", ast.Constant(tape), *value.args)
        return node

    def visit_Expr(self, node):
        found = recorded(node)
        if found is None:
            return node
        return ast.Expr(value=_hook("record", ast.Constant(node.lineno), *found))

    def _loop(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1
        if self.depth == 0:
            node.body.insert(0, ast.Expr(value=_hook("turn", ast.Constant(node.lineno))))
        return node

    visit_For = visit_While = _loop


def census(program, inputs: list, function: str | None = None) -> Census:
    """Run `program`'s forward sweep on `inputs` (the generated function's arguments),
    counting its recordings; or that of the module's generated `function` (a checkpointed
    loop's step vjp)."""
    emitted = program.emitted
    function = function or emitted.function
    func = _Instrument().visit(forward_sweep(emitted.source, function))
    func.body.append(ast.Return(value=ast.Call(func=ast.Name(id="locals", ctx=ast.Load()),
                                               args=[], keywords=[])))
    module = ast.fix_missing_locations(ast.Module(body=[func], type_ignores=[]))
    namespace = dict(program.compiled.module.__dict__)
    namespace.update(program.compiled.helpers)  # the Python versions of generated helpers
    counter = _Counter(inputs)
    namespace["_sg_census"] = counter
    exec(compile(module, program.compiled.path, "exec"), namespace)
    held = namespace[function](*inputs)
    counter.census.snapshots = snapshot_bytes(held)
    counter.census.held = held
    return counter.census


def snapshot_bytes(held: dict) -> int:
    """Bytes of checkpointed loops' snapshots held when the forward sweep ends: the arrays
    (or lists and tuples of them) in locals named `_snap...`, or what an object there
    says (`snapshot_bytes`). The hook for checkpointed loops (transforms/checkpoint*.py):
    the generated code names its snapshots so."""
    total = 0
    for name, value in held.items():
        if not name.startswith("_snap"):
            continue
        if hasattr(value, "snapshot_bytes"):
            total += int(value.snapshot_bytes() if callable(value.snapshot_bytes)
                         else value.snapshot_bytes)
        elif isinstance(value, (list, tuple)):
            total += sum(item_bytes(v) for v in value)
        else:
            total += item_bytes(value)
    return total
