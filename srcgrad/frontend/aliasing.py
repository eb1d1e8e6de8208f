"""Updates of arrays that may be shared: where srcgrad's code gives NumPy's numbers.

srcgrad computes the user's `z op= v` (z a name) as `z = z op v`, a new value
bound to z, as JAX does; NumPy updates an array z *in place*, so the old
object gets the new values. The two agree exactly when nothing observes the
old object afterwards except through z. `guard_updates` decides this on
normalize's output (calls inlined, one operation per statement, loops over
`range` or `while`) for every update `z = z op v` made from a `z op= v`, and
for every write `z[i] = v` (which srcgrad does not differentiate when z's
memory is reachable another way):

- *sharing*, a flow-sensitive may-analysis: `a = b` and views (`b[i]`, `b[1:]`,
  `np.transpose`, `np.reshape`, ..., and normalize's `snapshot`, the copy
  standing for a view) make a share with b and with all b shares with; a list
  shares with what is appended or stored into it, a tuple with its elements,
  a value read from either with the container; desugar's `_sK = y` for
  `for t in y` shares with y, an inlined parameter with the caller's argument.
  Binding a name to a fresh value (arithmetic, a NumPy function returning a
  new array, `.copy()`, a constant) ends its sharing. Branches join; loops
  iterate to a fixed point, so sharing set up later in a body reaches the
  update in the next iteration. A recursive function's parameters share with
  the caller's arrays.
- *liveness*: a partner counts only if it may be read afterwards (the next
  iteration included) before it is rebound.

Without a live partner the update is plain rebinding, and matches NumPy. By
induction over the statements executed: where NumPy's `z op= v` succeeds on
z's array O, it writes into O exactly the values of `z op v` (NumPy buffers
overlapping operands; the result must fit O, and does so exactly for a
float64 z), and srcgrad binds z to a new object with those values. After
that the two executions differ only in values sharing memory with O; the
analysis over-approximates every way of reaching O (names, views both ways,
containers, the caller) and none is read again, so every later statement
computes the same values in both.

With live partners, generated code calls `forbid_array_alias(z, p, message)`
before the update, per partner p: it raises `SrcgradError` with the user's
line and names only if z is an array and p holds one (`t = y[0]` of a 1-d y
is a number, a copy, so `t = y[0]; y += 1` keeps working); a partner not
bound on every path there is passed as None (raise for any array z).
"""
from __future__ import annotations

import copy
import io
import re
import tokenize
from dataclasses import dataclass

import gast

from ..runtime import __all__ as runtime_names
from ..syntax import dotted_name, walk

_SYMBOL = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**",
           gast.MatMult: "@", gast.Mod: "%", gast.FloorDiv: "//"}
# Calls whose result may share memory with an argument (a view, or the argument itself).
VIEWS = frozenset({
    "np.transpose", "np.reshape", "np.ravel", "np.swapaxes", "np.expand_dims", "np.squeeze",
    "np.moveaxis", "np.asarray", "np.asanyarray", "np.ascontiguousarray", "np.asfortranarray",
    "np.atleast_1d", "np.atleast_2d", "np.atleast_3d", "np.diagonal", "np.diag",
    "np.broadcast_to", "np.real", "np.imag", "np.flip", "np.fliplr", "np.flipud", "np.rot90",
    "np.split", "np.array_split", "np.hsplit", "np.vsplit", "np.dsplit",
    "snapshot", "stop_gradient", "linked"})
# Other calls known to return a new value (NumPy and math functions not in VIEWS, too).
_FRESH = frozenset({"len", "float", "int", "abs", "pow", "range", "bool", "round"})
_GENERATED = re.compile(r"^_(t|r|i|n|s|brk|skip)\d+|^_rhs\d+_\d+$|^_(ret|retval)$")
CALLER = "<caller>"  # stands for the caller's references to a recursive function's parameters


@dataclass
class Update:
    """What normalize marks on `z = z op v` made from the user's `z op= v`, and on `z[i] = v`."""
    old: str  # the name holding z's value before the update
    node: object  # the user's AugAssign (for its location and text)
    name: str  # the user's name for z, as messages print it: 'y', or 'p' in h()
    user: str  # the user's name for z as the user wrote it: y, p
    op: str | None  # '+', '-', ...; None for a write into the array, `z[i] = v`


class UserNames:
    """The user's names for generated ones, so messages never show `y__2`, `p__h1` or `_s3`."""

    def __init__(self, parsed):
        self.parsed = parsed
        self.inlined: dict[str, tuple[str, str]] = {}  # `p__h1` -> ('p', 'h')
        self.hoisted: dict[str, object] = {}  # `_s3` -> the `for` statement iterating it

    def show(self, name: str) -> str:
        """`'y'` for y and y__2, `'p' (in h())` for p__h1, the loop for a hoisted sequence."""
        if name in self.hoisted:
            return f"the sequence {self.loop_text(name)} iterates over"
        if re.fullmatch(r"_c\d+", name):  # comprehensions.py's list
            return "built by the comprehension"
        base = re.sub(r"__\d+$", "", name)
        if base in self.inlined:
            user, callee = self.inlined[base]
            if re.search(r"__jvp(_all)?$", callee):  # generated forward code (second order):
                tangents = re.match(r"(_tan_)*", user).end() // 5  # _tan_y: y's tangent
                user = re.sub(r"__\d+$", "", user[5 * tangents:])
                return "the tangent of " * tangents + repr(user)
            return f"{user!r} (in {callee}())"
        return repr(base)

    def user(self, name: str) -> str:
        """The user's spelling of a (possibly inlined) name: p for p__h1."""
        return self.inlined.get(name, (name,))[0]

    def text(self, expr) -> str:
        """A user expression as the user wrote it (inlined copies' names renamed back)."""
        expr = copy.deepcopy(expr)
        for node in walk(expr):
            if isinstance(node, gast.Name):  # (a shared parameter keeps the callee's spelling)
                node.id = getattr(node, "srcgrad_user_name", None) or self.user(node.id)
        return gast.unparse(expr).strip()

    def loop_text(self, name: str) -> str:
        loop = self.hoisted[name]
        loc = self.parsed.loc(loop)
        return f"`{source_text(loc).rstrip(':').rstrip()}` ({loc})"

    def is_generated(self, name: str) -> bool:
        return bool(_GENERATED.search(name)) and name not in self.hoisted


def source_text(loc) -> str:
    """The line of `loc`, stripped, without a trailing comment."""
    text = loc.text.strip()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                return text[:tok.start[1]].rstrip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return text


def symbol(op) -> str:
    return _SYMBOL.get(type(op), "+")


# ---- the analyses -------------------------------------------------------------------

def _loads(node) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, gast.Name)
            and not isinstance(n.ctx, gast.Store)}


def _values(node) -> set[str]:
    """Names read as values: not `x` in `x.shape`, nor `np` in `np.pi` (never shared)."""
    if isinstance(node, gast.Attribute):
        return set()
    if isinstance(node, gast.Name):
        return {node.id}
    return {n for child in gast.iter_child_nodes(node) for n in _values(child)}


def _stores(stmt) -> set[str]:
    if isinstance(stmt, gast.Assign):
        return {t.id for t in stmt.targets if isinstance(t, gast.Name)}
    return set()


class _Shares:
    """A symmetric may-share relation between names, each pair with the statement that made it."""

    def __init__(self, adj=None):
        self.adj: dict[str, dict[str, object]] = {k: dict(v) for k, v in (adj or {}).items()}

    def copy(self) -> "_Shares":
        return _Shares(self.adj)

    def key(self):
        return {a: set(p) for a, p in self.adj.items()}

    def partners(self, name: str) -> dict[str, object]:
        return self.adj.get(name, {})

    def kill(self, name: str) -> None:
        for other in self.adj.pop(name, {}):
            self.adj[other].pop(name, None)
            if not self.adj[other]:
                del self.adj[other]

    def add(self, a: str, b: str, origin) -> None:
        if a != b:
            self.adj.setdefault(a, {}).setdefault(b, origin)
            self.adj.setdefault(b, {}).setdefault(a, origin)

    def join(self, other: "_Shares") -> "_Shares":
        for a, partners in other.adj.items():
            for b, origin in partners.items():
                self.add(a, b, origin)
        return self


class _Analysis:
    def __init__(self, body, inputs, recursive: bool):
        self.lists = {t.id for n in walk(gast.Module(body=body, type_ignores=[]))
                      if isinstance(n, gast.Assign) and isinstance(n.value, gast.List)
                      for t in n.targets if isinstance(t, gast.Name)}
        self.before: dict[int, dict[str, object]] = {}  # update -> partners of z's old value
        self.after: dict[int, set[str]] = {}  # update -> names live after it
        self.bound: dict[int, set[str]] = {}  # update -> names bound on every path to it
        start = _Shares()
        if recursive:
            for name in inputs:
                start.add(name, CALLER, None)
        self.flow(body, start)
        self.live(body, set())
        self.defined(body, set(inputs))

    # sharing, forward

    def flow(self, block, state: _Shares) -> _Shares:
        for stmt in block:
            if isinstance(stmt, gast.If):
                state = self.flow(stmt.body, state.copy()).join(self.flow(stmt.orelse, state))
            elif isinstance(stmt, (gast.For, gast.While)):
                state = self.loop(stmt, state)
            else:
                update = getattr(stmt, "srcgrad_update", None)
                if update is not None:
                    self.before[id(stmt)] = dict(state.partners(update.old))
                self.simple(stmt, state)
        return state
    def loop(self, stmt, state: _Shares) -> _Shares:
        head = state.copy()
        while True:
            entry = head.copy()
            if isinstance(stmt, gast.For):
                entry.kill(stmt.target.id)
            new = head.copy().join(self.flow(stmt.body, entry))
            if new.key() == head.key():
                return new
            head = new

    def simple(self, stmt, state: _Shares) -> None:
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
            func = stmt.value.func
            if isinstance(func, gast.Attribute) and func.attr == "append" \
                    and isinstance(func.value, gast.Name):
                self.link(state, func.value.id, _values(stmt.value) - {func.value.id}, stmt)
            return
        if not isinstance(stmt, gast.Assign):
            return
        target = stmt.targets[0]
        if isinstance(target, gast.Subscript):  # hs[i] = h stores a reference; A[i] = h copies
            if isinstance(target.value, gast.Name) and target.value.id in self.lists:
                self.link(state, target.value.id, _values(stmt.value), stmt)
            return
        sources = self.sources(stmt.value)
        for t in stmt.targets:
            if isinstance(t, gast.Name):
                found = {s: None for s in sources}
                for s in sources:
                    found.update(state.partners(s))
                state.kill(t.id)
                for s in found:
                    state.add(t.id, s, stmt)

    def link(self, state, holder: str, sources, stmt) -> None:
        found = set(sources)
        for s in sources:
            found |= set(state.partners(s))
        for s in found:
            state.add(holder, s, stmt)

    def sources(self, value) -> set[str]:
        """Names whose memory the value of `value` may share (empty: a fresh value)."""
        if isinstance(value, (gast.Name, gast.Tuple, gast.List)):
            return _values(value)
        if isinstance(value, gast.Subscript):
            return _values(value.value)
        if isinstance(value, gast.Call):
            spelled = dotted_name(value.func)
            if spelled == "linked":
                return _values(value.args[0])
            if spelled in VIEWS:
                return {n for a in value.args for n in _values(a)}
            if (getattr(value, "callee", None) is not None or spelled in _FRESH
                    or spelled in runtime_names or spelled.endswith("__grad_all")
                    or spelled.startswith(("np.", "math."))):
                return set()
            return {n for a in value.args + [k.value for k in value.keywords]
                    for n in _values(a)}  # unknown callee: it may return an argument
        return set()  # arithmetic, comparisons, constants, .shape, np.pi: a new value

    # liveness, backward
    def live(self, block, out: set[str]) -> set[str]:
        live = set(out)
        for stmt in reversed(block):
            if isinstance(stmt, gast.If):
                live = _loads(stmt.test) | self.live(stmt.body, live) | self.live(stmt.orelse, live)
            elif isinstance(stmt, (gast.For, gast.While)):  # live at the head, to a fixed point
                var = {stmt.target.id} if isinstance(stmt, gast.For) else set()
                head = live | _loads(stmt.iter if var else stmt.test)
                while True:
                    new = head | (self.live(stmt.body, head) - var)
                    if new == head:
                        break
                    head = new
                live = head
            else:
                if getattr(stmt, "srcgrad_update", None) is not None:
                    self.after[id(stmt)] = set(live)
                live = (live - _stores(stmt)) | _loads(stmt)
        return live

    # names bound on every path, forward
    def defined(self, block, bound: set[str]) -> set[str]:
        bound = set(bound)
        for stmt in block:
            if isinstance(stmt, gast.If):
                bound = self.defined(stmt.body, bound) & self.defined(stmt.orelse, bound)
            elif isinstance(stmt, gast.For):
                self.defined(stmt.body, bound | {stmt.target.id})
            elif isinstance(stmt, gast.While):
                self.defined(stmt.body, bound)
            else:
                if getattr(stmt, "srcgrad_update", None) is not None:
                    self.bound[id(stmt)] = set(bound)
                bound |= _stores(stmt)
        return bound


# ---- the checks ---------------------------------------------------------------------

def _load(name: str):
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


class _Guard:

    def __init__(self, analysis: _Analysis, names: UserNames, function: str):
        self.analysis, self.names, self.function = analysis, names, function
    def block(self, block) -> None:
        for stmt in list(block):
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                self.block(stmt.body)
                self.block(stmt.orelse)
            update = getattr(stmt, "srcgrad_update", None)
            if update is not None:
                k = next(k for k, s in enumerate(block) if s is stmt)
                block[k:k] = [gast.copy_location(c, stmt) for c in self.checks(stmt, update)]

    def checks(self, stmt, update: Update):
        a = self.analysis
        loc = self.names.parsed.loc(update.node)
        said = f"{loc}: `{source_text(loc)}`"
        partners = {p: origin for p, origin in a.before.get(id(stmt), {}).items()
                    if p == CALLER or (p in a.after.get(id(stmt), set()) and p != update.old)}
        if update.op is None and update.old in a.lists:
            return []  # hs[i] = h: a list, never an array written into
        before = []
        for p in sorted(partners, key=lambda p: (p == CALLER, self.names.is_generated(p), p)):
            rebind = f"`{update.user} = {update.user} {update.op} ...`"
            if update.op is None:
                message = (f"{said} writes into {update.name}, and {self.clause(p, partners[p])}; "
                           "srcgrad does not differentiate writes into an array that is shared "
                           "(NumPy would change both). Make one of them a copy (.copy()).")
            else:
                message = (f"{said} would update {update.name} in place, and "
                           f"{self.clause(p, partners[p])}; srcgrad computes {rebind} (a new "
                           f"array) instead, which would give a different result. Write {rebind} "
                           "if the other should keep the old values.")
            bound = p != CALLER and p in a.bound.get(id(stmt), set())
            partner = _load(p) if bound else gast.Constant(value=None, kind=None)
            before.append(gast.Expr(value=gast.Call(func=_load("forbid_array_alias"), keywords=[],
                                                    args=[_load(update.old), partner,
                                                          gast.Constant(value=message, kind=None)])))
        return before

    def clause(self, partner: str, origin) -> str:
        if partner == CALLER:
            return (f"it may be an array of the caller's ({self.function} calls itself, and "
                    "NumPy would change the caller's array too)")
        names = self.names
        if partner in names.hoisted:
            return f"the loop {names.loop_text(partner)} iterates over that array"
        since = ""
        if origin is not None:
            loc = names.parsed.loc(origin)
            since = f" (since `{source_text(loc).rstrip(':')}`, {loc})"
        if partner in self.analysis.lists:
            return f"the list {names.show(partner)} holds it{since}"
        if names.is_generated(partner):
            return "a value computed" + since.replace("since ", "at ") + " shares its memory"
        return f"it shares memory with {names.show(partner)}{since}, which is used later"


def guard_updates(body, inputs, names: UserNames, function: str, recursive: bool) -> None:
    """Insert the run-time checks of the module docstring before each marked update.

    `inputs` are the parameters and data globals; `recursive` says the function calls itself
    (its parameters may be the caller's arrays).
    """
    analysis = _Analysis(body, inputs, recursive)
    _Guard(analysis, names, function).block(body)
