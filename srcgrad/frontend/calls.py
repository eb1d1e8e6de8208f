"""Pass 4b, calls: prepare every call into user code for inlining, or for a recursive gradient.

srcgrad differentiates calls into user functions by *inlining* them: normalize
copies the callee's body into the caller at the call, with the callee's
names renamed per copy (`y` -> `y__h1`). The whole computation then becomes
one function: numba compiles it as a unit, the tape analysis sees through
calls, and nothing crosses a function boundary at run time. The cost is
code size (each call site is a copy).

Recursion cannot be inlined. A call back into a function that is already
being inlined calls the generated `f__grad_all(args)` instead, the joint
gradient of `f` with respect to all its parameters, and ties the value to
each argument with its partial derivative (`linked`). That costs one
gradient per recursive call in the forward sweep (no re-computation in the
backward sweep) and needs the recursive function to return a scalar.

Guarantees to normalize, for every call into user code (a call node that
resolve marked with `callee`):
- `call.callee` is a `Callee`: the callee's checked, resolved and desugared
  body (one `return`, last), its parameters, their defaults, and the names to
  rename in each inlined copy; or a `Recursive` naming `f__grad_all`; or an
  `Outlined` (reverse mode, a function called from OUTLINE_SITES places or more)
  naming `f__value` and `f__vjp`, which pipeline._outline built.
- Data the callee reads from its module or closure becomes an input of the
  function being transformed (`Resolved.data_globals`, `global_sources`).
- The callee's lines are shifted into the caller's `Parsed` (NOTE [inlined
  lines] in parse.py), so error messages and comments name the callee's file.
- `Resolved.recursive` lists the functions whose `__grad_all` is needed, and
  `Resolved.sources` every callee source the result depends on (cache key).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

import gast

from .checkpoint_marks import mark_checkpoints
from .check import check, is_generated
from .desugar import desugar
from ..errors import MissingRuleError, SourceUnavailableError, SrcgradError, SrcgradSyntaxError
from .parse import LINE_BLOCK, parse
from .resolve import Resolved, is_user_function, resolve
from .varargs import shape_of, specialise, specialise_locals
from ..rules.calls import generated, outlined_value
from ..runtime import linked
from ..syntax import walk


@dataclass
class Callee:
    name: str  # suffix stem for inlined names: y -> y__<name><k>
    params: list[str]
    defaults: dict  # parameter -> default value node (a constant)
    body: list  # desugared statements, exactly one return, last
    locals: set[str]  # names each inlined copy renames
    nested: bool = False  # a local function: its other names are its definer's (a closure)
    closure_writes: frozenset = frozenset()  # its own locals its local functions assign


@dataclass
class Recursive:
    name: str  # the function's name; generated code calls `f__grad_all` or `f__jvp_all`
    params: list[str]
    defaults: dict


@dataclass
class Outlined:
    name: str  # the function's name; generated code calls `f__value`, its backward `f__vjp`
    params: list[str]
    defaults: dict


# A module-level function called from this many places in one function body is compiled
# once as `f__value` and `f__vjp` (one adjoint per callee) instead of being inlined at
# each: compile time then grows by about 0.09 s per call instead of 0.5 s, while each
# call's backward step runs the callee's forward sweep again (bench/README.md, "One
# adjoint per callee, built in": the gradient's call 1.3-1.5x slower than inlined; the
# first call 0.87x inlining's at 4 calls, 0.63x at 8, 0.21x at 40).
OUTLINE_SITES = 8


def grad_all_name(func) -> str:
    """`f__grad_all` for a function or a function's name."""
    return f"{getattr(func, '__name__', func)}__grad_all"


def is_jvp_pair(name: str) -> bool:
    """Whether `name` is generated forward code's recursive helper `f__jvp_all`, which
    returns the pair (value, tangent): reverse mode over it (second order) needs the pair's
    joint gradient, `f__jvp_all__grad_all` (pipeline.py), and links both parts (inline.py).
    A recursive function of the user's may not end its name so (_Linker.recursive)."""
    return name.endswith("__jvp_all")


def _params(args) -> list[str]:
    return [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]


def _defaults(args) -> dict:
    positional = args.posonlyargs + args.args
    found = {a.id: d for a, d in zip(positional[len(positional) - len(args.defaults):],
                                     args.defaults)}
    found.update({a.id: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return found


def _signature_defaults(func, owner: Resolved, call) -> dict:
    """Parameter -> default value as a constant node (defaults are evaluated once, at def)."""
    found = {}
    for name, param in inspect.signature(func).parameters.items():
        if param.default is inspect.Parameter.empty:
            continue
        if not isinstance(param.default, (int, float, bool, str, type(None))):
            raise SrcgradError(
                f"srcgrad cannot inline {func.__qualname__}: the default value of {name!r} is a "
                f"{type(param.default).__name__}; srcgrad inlines numbers, strings and None as "
                "defaults. Pass the value explicitly.", owner.parsed.loc(call))
        found[name] = gast.Constant(value=param.default, kind=None)
    return found


def _call_shape(func, call) -> tuple:
    """() for a function without *args/**kwargs, else what tells its calls' shapes apart."""
    if not func.__code__.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return ()
    return len(call.args), tuple(k.arg for k in call.keywords)


def _plain_argument(arg) -> bool:
    """An argument an outlined call passes: no display, lambda, `*` or non-number constant."""
    if isinstance(arg, gast.Constant):
        return isinstance(arg.value, (int, float)) and not isinstance(arg.value, bool)
    return not isinstance(arg, (gast.List, gast.Tuple, gast.Set, gast.Dict, gast.Lambda,
                                gast.Starred, gast.ListComp, gast.GeneratorExp))


def _called_as(call) -> str:
    """The name a call spells its callee with (`cube` for a lambda bound to `cube`)."""
    func = call.func
    return func.attr if isinstance(func, gast.Attribute) else func.id


def _stores(body) -> set[str]:
    return {n.id for stmt in body for n in walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _calls(body):
    """Call nodes into user code, outermost first."""
    for stmt in body:
        for node in walk(stmt):
            if isinstance(node, gast.Call) and getattr(node, "callee", None) is not None:
                yield node


def _nodes(resolved: Resolved):
    """Every node of a function, its local functions included."""
    for tree in [resolved.tree, *resolved.local_functions.values()]:
        yield from walk(tree)


class _Linker:
    def __init__(self, root: Resolved, outline=None):
        self.root = root
        self.outline = outline  # func -> bool: build f__value and f__vjp (pipeline.py)
        self.done: dict[int, Callee] = {}  # id(function or local def) -> prepared callee
        self.claimed = {name: (id(root.parsed.func.__globals__), name)
                        for name in root.data_globals}  # input name -> what it reads
        self.taken = set(root.params) | _stores(root.tree.body)

    def link(self, body, owner: Resolved, stack: list) -> None:
        sites: dict[int, int] = {}
        for call in _calls(body):
            sites[id(call.callee)] = sites.get(id(call.callee), 0) + 1
        for call in _calls(body):
            target = call.callee
            if isinstance(target, (Callee, Recursive, Outlined)):
                continue
            if isinstance(target, gast.FunctionDef):
                call.callee = self.local(target, owner, stack)
            elif any(target is f for f in stack):
                call.callee = self.recursive(target, owner, call)
            elif sites[id(target)] >= OUTLINE_SITES and self.outlined(target, owner, call):
                call.callee = self.done[("outlined", id(target))]
            else:
                call.callee = self.function(target, owner, call, stack)

    def outlined(self, func, owner: Resolved, call) -> bool:
        """Whether this call of `func` goes through its own `f__value` and `f__vjp`
        (OUTLINE_SITES): `self.outline(func)` builds both once, or returns False where it
        cannot (pipeline._outline: it changes a parameter, reads data from outside, returns
        a tuple...); the call passes no display, string or other non-number constant (such
        a call is inlined)."""
        key = ("outlined", id(func))
        if key not in self.done:
            taken = self.root.callees.get(f"{func.__name__}__value")
            ok = (self.outline is not None and not _call_shape(func, call)
                  and func.__closure__ is None
                  and (getattr(taken, "function", None) is func  # built inside another's f__vjp
                       or taken is None and self.outline(func)))  # (one of the same name: inlined)
            self.done[key] = Outlined(func.__name__, list(inspect.signature(func).parameters),
                                      _signature_defaults(func, owner, call)) if ok else None
            if ok:
                self.root.callees.setdefault(f"{func.__name__}__value", outlined_value(func))
        return self.done[key] is not None and all(
            _plain_argument(a) for a in call.args + [k.value for k in call.keywords])

    def recursive(self, func, owner, call) -> Recursive:
        if _call_shape(func, call):
            raise SrcgradSyntaxError(
                f"srcgrad cannot differentiate the recursive call to {func.__qualname__}: it "
                "takes *args or **kwargs; list its parameters explicitly",
                owner.parsed.loc(call))
        if is_jvp_pair(func.__name__) and not is_generated(func):
            raise SrcgradSyntaxError(
                f"srcgrad cannot differentiate the recursive function {func.__qualname__}: "
                "names ending in __jvp_all are srcgrad's (its generated forward code); "
                "rename the function", owner.parsed.loc(call))
        if not any(func is f for f in self.root.recursive):
            self.root.recursive.append(func)
        name = grad_all_name(func)
        self.root.callees.setdefault(name, generated(name))
        self.root.callees["linked"] = linked
        return Recursive(func.__name__, list(inspect.signature(func).parameters),
                         _signature_defaults(func, owner, call))

    def local(self, fdef, owner: Resolved, stack) -> Callee:
        if id(fdef) in self.done:
            return self.done[id(fdef)]
        if any(fdef is f for f in stack):
            raise SrcgradSyntaxError(
                f"srcgrad cannot differentiate the recursive nested function {fdef.name!r}; "
                "define it at module level (srcgrad differentiates recursive module-level "
                "functions)", self.root.parsed.loc(fdef))
        outer = nonlocal_names(fdef)  # assigned in the definer's scope: not renamed
        fdef.body = [s for s in fdef.body if not isinstance(s, gast.Nonlocal)]
        if not any(isinstance(n, gast.Return) for n in walk(fdef)):  # called for effect
            fdef.body.append(gast.copy_location(gast.Return(value=gast.Constant(
                value=None, kind=None)), fdef.body[-1] if fdef.body else fdef))
        nested = Resolved(self.root.parsed, fdef, _params(fdef.args), [], owner.namespace,
                          owner.callees, owner.local_functions)
        desugar(nested)
        self.link(fdef.body, owner, stack + [fdef])
        callee = Callee(fdef.name, nested.params, _defaults(fdef.args), fdef.body,
                        (set(nested.params) | _stores(fdef.body)) - outer, nested=True)
        self.done[id(fdef)] = callee
        return callee

    def function(self, func, owner: Resolved, call, stack) -> Callee:
        key = (id(func), *_call_shape(func, call))  # *args/**kwargs: a callee per shape
        if key in self.done:
            callee, shape = self.done[key]
            if shape is not None:
                shape.rewrite(call)
            return callee
        try:
            parsed = parse(func)
        except SourceUnavailableError:
            raise MissingRuleError(
                f"srcgrad cannot differentiate the call to {func.__qualname__}: its source is not "
                "available (it was made by exec/eval or typed at an interactive prompt) and it "
                f"has no derivative rule. Give it one with @srcgrad.defvjp({func.__name__}).",
                owner.parsed.loc(call)) from None
        shape = shape_of(parsed.tree, call, {n.id for n in walk(parsed.tree)
                                              if isinstance(n, gast.Name)})
        if shape is not None:
            specialise(parsed.tree, shape, parsed)
            shape.rewrite(call)
        try:
            resolved = desugar(mark_checkpoints(resolve(check(specialise_locals(parsed),
                                                                     callee=True))))
        except SrcgradError as exc:
            if hasattr(exc, "add_note"):  # Python 3.11+: say which call led there
                loc = owner.parsed.loc(call)
                exc.add_note(f"  called from {loc}: {loc.text.strip()}")
            raise
        block = self.root.parsed.adopt(parsed) * LINE_BLOCK
        for node in _nodes(resolved):
            if getattr(node, "lineno", None) is not None:
                node.lineno += block
        self.root.sources.append(parsed.text)
        self.merge(func, resolved)
        self.link(resolved.tree.body, resolved, stack + [func])
        body = resolved.tree.body
        name = func.__name__ if func.__name__.isidentifier() else _called_as(call)
        callee = Callee(name, resolved.params, _signature_defaults(func, owner, call),
                        body, set(resolved.params) | _stores(body),
                        closure_writes=frozenset(closure_writes(resolved)))
        self.done[key] = callee, shape
        return callee

    def merge(self, func, resolved: Resolved) -> None:
        """Make what the callee's code refers to available to the generated module."""
        root = self.root
        for key, objects in (("namespace", resolved.namespace), ("callees", resolved.callees)):
            mine = getattr(root, key)
            for name, obj in objects.items():
                if mine.setdefault(name, obj) is not obj and not is_user_function(obj):
                    raise SrcgradError(
                        f"srcgrad cannot inline {func.__qualname__}: it calls {name!r}, which "
                        f"means a different object in {root.parsed.func.__qualname__}; import "
                        "one of them under another name", resolved.parsed.loc(resolved.tree))
        renames = {}
        for name in resolved.data_globals:
            code = func.__code__
            reads = (id(func), name) if name in code.co_freevars else (id(func.__globals__), name)
            known = [k for k, v in self.claimed.items() if v == reads]
            if known:
                renames[name] = known[0]
                continue
            taken = name in self.claimed or name in self.taken
            new = f"_sg_{func.__name__}_{name}" if taken else name
            self.claimed[new] = reads
            root.data_globals.append(new)
            root.global_sources[new] = (func, name)
            renames[name] = new
        for node in _nodes(resolved):
            if isinstance(node, gast.Name) and node.id in renames:
                node.id = renames[node.id]


def nonlocal_names(fdef) -> set[str]:
    """The names a local function declares `nonlocal` (check allows them at its top)."""
    found = getattr(fdef, "srcgrad_nonlocal", None)
    if found is None:
        found = fdef.srcgrad_nonlocal = {n for s in fdef.body if isinstance(s, gast.Nonlocal)
                                         for n in s.names}
    return found


def closure_writes(resolved: Resolved) -> set[str]:
    """The variables of `resolved`'s function that its local functions assign (`nonlocal`):
    they keep one name throughout, like a variable assigned in a loop (normalize.py)."""
    return {n for fdef in resolved.local_functions.values() for n in nonlocal_names(fdef)}


def rename_closures(body, rename: dict) -> None:
    """Apply an inlined copy's renaming to the local functions its (copied) body calls.

    A local function reads and (`nonlocal`) assigns the variables of the function
    that defines it; where that function is itself inlined as a renamed copy, its
    local functions must use the copy's names. Copying the body copied the
    local functions' prepared `Callee`s along with it, so each copy renames its own.
    """
    seen, todo = set(), [c.callee for c in _calls(body)]
    while todo:
        inner = todo.pop()
        if not (isinstance(inner, Callee) and inner.nested) or id(inner) in seen:
            continue
        seen.add(id(inner))
        free = {old: new for old, new in rename.items() if old not in inner.locals}
        for node in (n for stmt in inner.body for n in walk(stmt)):
            if isinstance(node, gast.Name) and node.id in free:
                node.id = free[node.id]
        todo += [c.callee for c in _calls(inner.body)]


def link(resolved: Resolved, outline=None) -> Resolved:
    """Prepare every call into user code in `resolved` (see the module docstring);
    `outline(func)` builds a function's own gradient for calling it from many places
    (reverse mode; None: every call is inlined)."""
    _Linker(resolved, outline).link(resolved.tree.body, resolved, [resolved.parsed.func])
    return resolved
