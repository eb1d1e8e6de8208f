"""The pipeline: a readable list of passes from a Python function to compiled code.

    frontend/    parse -> varargs -> check -> resolve -> desugar -> calls -> normalize
    analysis/    activity
    transforms/  reverse -> optimize -> record -> immediate -> fuse
    backend/     emit -> cache (a real .py file) -> compile (numba or Python)

Forward mode replaces reverse -> optimize -> record -> immediate -> fuse by one pass,
forward.

Calls into user functions are inlined by normalize (inline.py); each function
called recursively gets its own joint gradient `f__grad_all` in the same module, and
one called from many places of a function (reverse mode) its own `f__vjp` and
`f__value` there (calls.py, OUTLINE_SITES).

`SRCGRAD_DUMP=anf,reverse,final` prints those stages' code to stderr.

`build` first asks the cache index (backend/index.py) whether a process before this
one generated the same module from the same sources; then none of the passes run
(`STATS` counts transformations and index hits, for tests). With `SRCGRAD_DUMP`
set, the passes always run.
"""
from __future__ import annotations

import copy
import functools
import inspect
import os
import sys
from dataclasses import dataclass

import astor
import gast

from .backend import cache, index
from .config import dumped_stages
from .analysis.activity import analyze
from .frontend.calls import grad_all_name, is_jvp_pair, link
from .frontend.checkpoint_marks import mark_checkpoints
from .transforms import checkpoint
from .transforms.checkpoint_drivers import drivers
from .frontend.check import check
from .backend.compile import Compiled
from .frontend.desugar import desugar
from .backend.emit import Emitted, emit
from .transforms.forward import forward, jvp_all_name
from .transforms.fuse import fuse
from .errors import SrcgradError
from .syntax import function_def
from .frontend.normalize import normalize
from .transforms.optimize import optimize
from .frontend.parse import generated_lines, parse
from .frontend.resolve import Resolved, resolve
from .transforms.reverse import reverse
from .transforms.immediate import immediate
from .transforms.record import record
from .frontend.trees import assigned, written_into
from .frontend.trying import helper_trees
from .rules.calls import same_callee
from .frontend.varargs import specialise_locals


STATS = {"transforms": 0, "index_hits": 0}  # in this process


@dataclass
class Program:
    """A generated gradient: its source, where it lives, and how to call it."""

    resolved: Resolved
    emitted: Emitted
    path: object  # pathlib.Path of the cached module
    compiled: Compiled
    mutated_inputs: list  # parameters and globals the function writes into (copied per call)

    @property
    def source(self) -> str:
        return self.emitted.source


def _dump(stage: str, tree) -> None:
    if stage in dumped_stages():
        print(f"# ---- srcgrad stage: {stage}", file=sys.stderr)
        print(astor.to_source(gast.gast_to_ast(tree)), file=sys.stderr)


# What each mode generates: description, name of the function for a recursive callee.
_MODES = {
    "reverse": ("gradient", grad_all_name),
    "vjp": ("vector-Jacobian product", grad_all_name),
    "forward": ("Jacobian-vector product (forward mode)", jvp_all_name),
}


def transform(func, wrt: list[str], mode: str = "reverse", memory_limit: int | None = None):
    """The transformation of `func` with respect to parameter names `wrt`.

    `mode` is "reverse" (`f__grad`), "vjp" (`f__vjp`: reverse mode seeded by an
    extra last parameter, the output's cotangent) or "forward" (`f__jvp`).
    Returns the root's `Resolved` and `Normalized` and the emitted module, which
    also holds `g__grad_all` (`g__jvp_all`) for every function `g` called recursively.
    `memory_limit` (bytes) checkpoints the loops at the top of `func` (checkpoint_marks.py).
    """
    STATS["transforms"] += 1
    what, helper_name = _MODES[mode]
    resolved, norm, tree, *more = _one(func, wrt, mode, memory_limit=memory_limit)
    trees, done, todo = [tree, *more], [], list(resolved.recursive)
    trees += helper_trees(resolved)  # try statements, run as written
    trees += resolved.outlined  # functions called through their own gradient (calls.py)
    if mode == "vjp":  # vjp needs the value before any cotangent is known
        trees.append(value_function(norm, f"{resolved.tree.name}__value"))
    while todo:
        callee = todo.pop(0)
        if any(callee is f for f in done):
            continue
        done.append(callee)
        params = list(inspect.signature(callee).parameters)
        inner, _, inner_tree, *inner_more = _one(
            callee, params, "forward" if mode == "forward" else "reverse",
            helper_name(callee.__name__), pair=mode != "forward" and is_jvp_pair(callee.__name__))
        if inner.data_globals:
            raise SrcgradError(
                f"srcgrad cannot differentiate the recursive function {callee.__qualname__}: it "
                f"reads {', '.join(inner.data_globals)} from outside; pass "
                f"{'it' if len(inner.data_globals) == 1 else 'them'} as arguments instead",
                inner.parsed.loc(inner.tree))
        trees += [inner_tree, *inner_more] + [t for t in helper_trees(inner) if t not in trees]
        trees += inner.outlined
        todo += inner.recursive
        resolved.sources += [inner.parsed.text] + inner.sources
    named = {}  # an outlined function's trees come once per caller that built them
    trees = [named.setdefault(t.name, t) for t in trees if t.name not in named]
    return resolved, norm, emit(trees, resolved.parsed, f"{what} wrt {', '.join(wrt)}")


_OUTLINING: list = []  # functions whose f__vjp is being built (pipeline._outline)


def _outline(root: Resolved, func) -> bool:
    """Add `func`'s own gradient `f__vjp(args, cotangent)` and primal `f__value(args)` to
    `root.outlined`, for calling it from many places (calls.py, OUTLINE_SITES); False where
    a call cannot go through them: `func` changes a parameter (a write into an array the
    caller passed would happen twice), reads data from outside, is recursive or cannot be
    differentiated on its own (it returns a tuple: every call is inlined instead)."""
    if func in _OUTLINING:  # mutual recursion: f's vjp would need g's, which needs f's
        return False
    params = list(inspect.signature(func).parameters)
    _OUTLINING.append(func)
    try:
        body = parse(func).tree.body
        if (assigned(body) | written_into(body)) & set(params):
            return False
        inner, norm, tree, *more = _one(func, params, "vjp", f"{func.__name__}__vjp")
    except SrcgradError:
        return False
    finally:
        _OUTLINING.remove(func)
    if inner.data_globals or inner.recursive or any(
            not same_callee(getattr(root, key).get(n, obj), obj)
            for key in ("namespace", "callees") for n, obj in getattr(inner, key).items()):
        return False  # (a name meaning something else in the caller's module)
    for key in ("namespace", "callees"):  # what f__vjp's code names (a rule, a module alias)
        for n, obj in getattr(inner, key).items():
            getattr(root, key).setdefault(n, obj)
    root.outlined += [tree, value_function(norm, f"{func.__name__}__value"), *more,
                      *helper_trees(inner), *inner.outlined]
    root.sources += [inner.parsed.text] + inner.sources
    return True


def value_function(norm, called: str) -> gast.FunctionDef:
    """The normalized primal as a function of the same inputs."""
    return function_def(called, norm.inputs, copy.deepcopy(norm.body))


def _one(func, wrt: list[str], mode: str, name: str | None = None, memory_limit=None,
         pair: bool = False):
    """`pair`: func is generated forward code's `f__jvp_all` (calls.is_jvp_pair), returning
    (value, tangent); its gradient is the tangent's, returned beside the pair."""
    resolved = desugar(mark_checkpoints(resolve(check(specialise_locals(parse(func)))),
                                        memory_limit))
    link(resolved, None if mode == "forward" else functools.partial(_outline, resolved))
    if pair:
        _tangent_result(resolved.tree)
    norm = normalize(resolved, "forward" if mode == "forward" else "reverse")
    _dump("anf", gast.FunctionDef(name=resolved.tree.name, args=resolved.tree.args, body=norm.body,
                                  decorator_list=[], returns=None, type_comment=None,
                                  type_params=[]))
    if mode == "forward":
        tree = forward(norm, analyze(norm, wrt), wrt).function(name)
        _dump("final", tree)
        return resolved, norm, tree
    seed = "_sg_cotangent" if mode == "vjp" else None
    primal = copy.deepcopy(norm.body)  # the passes below extend the loops' bodies in place
    activity = analyze(norm, wrt)
    more = _checkpointed_loops(norm, activity, name or resolved.tree.name)
    tree = _reversed(norm, activity, wrt, seed,
                     name or (f"{resolved.tree.name}__vjp" if seed else None))
    if pair:
        result = tree.body[-1].value  # (the tangent, its partials)
        result.elts[0] = gast.Tuple(elts=[gast.Name(id=_PAIR_VALUE, ctx=gast.Load(),
                                                    annotation=None, type_comment=None),
                                          result.elts[0]], ctx=gast.Load())
    norm.body = primal
    return (resolved, norm, tree, *more)


_PAIR_VALUE = "_sg_pair_value"


def _tangent_result(tree) -> None:
    """`return (value, tangent)` -> `_sg_pair_value = value; return tangent`."""
    last = tree.body[-1]
    value, tangent = last.value.elts
    keep = gast.Assign(targets=[gast.Name(id=_PAIR_VALUE, ctx=gast.Store(), annotation=None,
                                          type_comment=None)], value=value, type_comment=None)
    tree.body[-1:] = [gast.copy_location(keep, last),
                      gast.copy_location(gast.Return(value=tangent), last)]


def _reversed(norm, activity, wrt, seed, name):
    """reverse -> optimize -> record -> immediate -> fuse: the gradient function `name`."""
    rev = reverse(norm, activity, wrt, seed)
    _dump("reverse", rev.function())
    rev = record(optimize(rev))
    immediate(rev)
    tree = fuse(rev.function(name))
    _dump("final", tree)
    return tree


def _checkpointed_loops(norm, activity, function_name: str) -> list:
    """The functions of each checkpointed loop (transforms/checkpoint.py): its step, the
    step's vjp, and the drivers its gradient calls."""
    trees = []
    for plan in checkpoint.prepare(norm, activity.active, function_name):
        trees += [fuse(checkpoint.step_function(norm, plan))] + drivers(
            plan, norm.resolved.parsed, activity.integers)
        step = plan.step_normalized
        if step is not None:
            wrt = plan.active_state + plan.active_invariants
            trees.append(_reversed(step, analyze(step, wrt), wrt, None, f"{plan.base}_step_vjp"))
    return trees


def build(func, wrt: list[str], jit: bool = True, mode: str = "reverse",
          memory_limit: int | None = None) -> Program:
    """Transform, write to the cache, import, and wrap for numba (compiled on first call);
    or, if the cache index has this transformation, import its module without the passes."""
    indexed = _indexed(mode, memory_limit)
    warm = _from_index(func, wrt, jit, mode, memory_limit)
    if warm is not None:
        return warm
    resolved, norm, emitted = transform(func, wrt, mode, memory_limit)
    parsed = resolved.parsed
    key = cache.cache_key(parsed.text, parsed.filename, func.__qualname__,
                          {"wrt": wrt, "callees": resolved.sources, "mode": indexed})
    path = cache.store(emitted.function, key, emitted.source)
    module = cache.load(path, resolved.namespace)
    generated_lines(path, emitted.line_map)  # parse.py NOTE [generated lines]
    where = f"{os.path.basename(parsed.filename)}:{parsed.first_line}"
    describe = f"{_MODES[mode][0]} of {func.__qualname__} ({where})"
    mutated = sorted(norm.mutated & set(norm.inputs))
    compiled = Compiled(module, emitted.function, emitted.helpers, path, emitted.line_map,
                        describe, jit=jit, form=not mutated)
    if inspect.isfunction(func):
        try:  # for the next process; a function the index cannot describe gets no entry
            index.save(index.lookup_key(func, wrt, indexed),
                       index.entry(func, resolved, emitted, path, mutated, describe))
        except Exception:
            pass
    return Program(resolved, emitted, path, compiled, mutated)


def _indexed(mode: str, memory_limit) -> str:
    """What the cache keys call a transformation: its mode, and a memory_limit if any."""
    return mode if memory_limit is None else f"{mode} memory_limit={memory_limit}"


def _from_index(func, wrt: list[str], jit: bool, mode: str, memory_limit) -> Program | None:
    """The program an earlier process built for the same sources, or None (always when
    SRCGRAD_DUMP asks for stages: they are printed by the passes)."""
    if not inspect.isfunction(func) or any(dumped_stages()):
        return None
    indexed = _indexed(mode, memory_limit)
    try:
        hit = index.find(index.lookup_key(func, wrt, indexed), func)
    except index.Unindexable:
        return None
    if hit is None:
        return None
    record, line_map = hit.record, hit.line_map()
    generated_lines(hit.path, line_map)
    module = cache.load(hit.path, hit.namespace())
    compiled = Compiled(module, record["function"], record["helpers"], hit.path, line_map,
                        record["describe"], jit=jit, form=not record["mutated_inputs"])
    resolved = index.WarmResolved(func, record["data_globals"], hit.global_sources(),
                                  lambda: transform(func, wrt, mode, memory_limit)[0],
                                  record.get("tree_name"))
    emitted = Emitted(hit.source, record["function"], record["helpers"], line_map)
    STATS["index_hits"] += 1
    return Program(resolved, emitted, hit.path, compiled, record["mutated_inputs"])
