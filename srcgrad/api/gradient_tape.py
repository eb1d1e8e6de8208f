"""`srcgrad.GradientTape`: TensorFlow's tape idiom, backed by source transformation.

Nothing is recorded while the `with` block runs. Entering the tape finds the
`with` statement in the caller's source (a file, or an IPython cell through
`linecache`) and snapshots the values its body reads. `gradient(target,
sources)` then finds, by identity, which names of the block the target and
the sources are, turns the block's body into a function of the values it
reads (`Block.function`), and differentiates that with the same pipeline as
`srcgrad.grad`: calls into your functions are inlined, loops and branches
are differentiated as code, and the gradient is compiled with numba. The
generated gradient is cached per code location and choice of target and
sources, so a tape in a training loop compiles once; what the block's source
says (its `with` node, reads, assignments, dependencies) is found once per code
location too (tape_facts.py), so a step costs little more than its gradient.

Semantics follow TensorFlow's: trainable `Variable`s read in the block are
watched (unless `watch_accessed_variables=False`), other values only after
`tape.watch(x)`; a source the target does not depend on gets None (or zeros
with `unconnected_gradients="zero"`); a non-scalar target is summed unless
`output_gradients` weighs it; a non-persistent tape computes one set of
gradients. Which assignments count as connections is decided by the lines
that ran (NOTE [executed lines]), so a Variable read only in a branch that
did not run gets None, as in TensorFlow.
"""
from __future__ import annotations

import sys

import gast
import numpy as np

from ..frontend.calls import link
from ..frontend.check import check
from ..frontend.desugar import desugar
from ..pipeline import build
from ..errors import SrcgradError
from ..frontend.parse import parse
from ..frontend.resolve import resolve
from .tape_blocks import Block, BlockGradient, leaves, rebuild
from .tape_random import Draws, refuse_global_draws
from .tape_facts import (FrameValues, check_cut, facts, fresh, held_inside, is_float,
                         name_assigned, name_read,
                         plain, read_data, refresh, straight, with_site)
from .executed_lines import start_line_events, stop_line_events
from .variables import Variable

_NOT_PERSISTENT = ("A non-persistent GradientTape can only be used to compute one set of "
                   "gradients (or jacobians)")
_BLOCKS: dict = {}  # (file, text hash, with line, start line) -> Block
_NESTED: dict = {}  # an inner tape's gradient call -> (its `BlockGradient`, name)


class UnconnectedGradients:
    """What `gradient` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


# ---- the tape -------------------------------------------------------------------------------

class GradientTape:
    """Records nothing; differentiates the source of its `with` block when asked."""

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._recording = False
        self._frame = None
        self._block = None
        self._used = False
        self._executed = None  # NOTE [executed lines]
    # ---- recording ------------------------------------------------------------------------

    def __enter__(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter "
                             "an already-active tape.")
        self._start(sys._getframe(1), whole=True)
        self._recording = True
        start_line_events(self, needed=not straight(self._block))
        self._used = False
        return self

    def __exit__(self, kind, exc, trace):
        self._recording = False
        stop_line_events(self, trace)
        return False

    def _start(self, frame, whole: bool):
        """Find the block and snapshot what it reads (from the top, or after a reset())."""
        if whole or self._block is None:
            text, node = with_site(frame)  # found once per code location
        else:
            text, node = self._block.text, self._block.node
        start = node.lineno if whole else frame.f_lineno + 1
        key = (frame.f_code.co_filename, hash(text), node.lineno, start)
        block = _BLOCKS.get(key)
        if block is None:  # one per code location: a tape in a loop compiles once
            block = _BLOCKS[key] = Block(frame.f_code.co_filename, text, node, start, 10 ** 9,
                                         {})
            refresh(block, frame)
        block.stop = 10 ** 9
        self._frame = frame
        self._block = block
        known = facts(block)
        self._snapshot = known.snapshot(frame)
        self._copies = {n: [plain(e) for e in v] if n in known.appended  # stay lists
                        and isinstance(v, list) else plain(v) for n, v in self._snapshot.items()}
        self._draws = Draws(known.reads, FrameValues(frame))  # what the block drew
        self._watched: dict = {}  # id -> watched object (watch() and accessed variables)

    def watch(self, tensor):
        """Differentiate with respect to `tensor` (a value or Variable read by the block)."""
        for leaf in leaves(tensor):
            if is_float(leaf):
                self._watched[id(leaf)] = leaf

    def reset(self):
        """Forget what was recorded: the block starts again after this statement."""
        if not self._recording:
            raise ValueError("Tape is not recording.")
        self._start(sys._getframe(1), whole=False)

    def stop_recording(self):
        """A context: values computed inside it carry no gradient."""
        if not self._recording:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        return _NoOp()

    def watched_variables(self):
        """The Variables this tape watches, in the order the block reads them."""
        found = []
        refresh(self._block, self._frame)
        by_calls = self._read_by_calls()
        read = list(self._snapshot.values()) + [v for v in self._block.namespace.values()
                                                if id(v) in by_calls]
        for value in read:
            if isinstance(value, Variable) and self._is_watched(value):
                if not any(value is v for v in found):
                    found.append(value)
        return tuple(found)

    def _is_watched(self, value) -> bool:
        if id(value) in self._watched:
            return True
        return (isinstance(value, Variable) and value.trainable
                and self.watch_accessed_variables)

    @property
    def source(self) -> str:
        """The generated code of the last gradient this tape computed."""
        programs = list(self._block.programs.values()) if self._block else []
        if not programs:
            raise ValueError("the tape has not computed a gradient yet; call tape.gradient")
        return programs[-1].source
    # ---- differentiation ----------------------------------------------------------------

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """Gradients of (the sum of) `target` with respect to `sources`, in their structure."""
        if target is None:
            raise TypeError("Argument `target` should be a list or nested structure of Tensors, "
                            "Variables or CompositeTensors to be differentiated, but received "
                            "None.")
        zero = _unconnected(unconnected_gradients)
        self._use()
        caller = sys._getframe(1)
        if self._recording and caller is self._frame:
            self._block.stop = caller.f_lineno  # called inside: the body up to here ran
        targets = leaves(target)
        seeds = leaves(output_gradients) if output_gradients is not None else None
        if seeds is not None and len(seeds) != len(targets):
            raise ValueError("output_gradients must have one entry per target")
        wanted = leaves(sources)
        grads = self._gradients(targets, seeds, wanted, zero)
        return rebuild(sources, iter(grads))

    def jacobian(self, target, sources, unconnected_gradients="none"):
        """d target / d source for each source: shape `target.shape + source.shape`."""
        if target is None:
            raise TypeError("Argument `target` should be a Tensor, but received None.")
        zero = _unconnected(unconnected_gradients)
        self._use()
        wanted = leaves(sources)
        shape = np.shape(plain(target))
        rows = []
        for k in range(int(np.prod(shape))):
            seed = np.zeros(int(np.prod(shape)))
            seed[k] = 1.0
            rows.append(self._gradients([target], [seed.reshape(shape)], wanted, zero))
        out = []
        for j, leaf in enumerate(wanted):
            if any(r[j] is None for r in rows):
                out.append(None)
                continue
            stacked = np.array([np.asarray(r[j], dtype=np.float64) for r in rows])
            out.append(stacked.reshape(shape + np.shape(plain(leaf))))
        return rebuild(sources, iter(out))

    def batch_jacobian(self, target, source, unconnected_gradients="none"):
        """Per-example Jacobian: result[b] = d target[b] / d source[b]."""
        was, self._used = self._used, False
        full = self.jacobian(target, source, unconnected_gradients)
        self._used = was or not self.persistent
        if full is None:
            return None
        batch = np.shape(plain(target))[0]
        tshape = np.shape(plain(target))[1:]
        return np.array([full[(b,) + (slice(None),) * len(tshape) + (b,)] for b in range(batch)])

    def _use(self):
        if self._block is None:
            raise RuntimeError("GradientTape.gradient was called before the tape recorded "
                               "anything; use it in a `with srcgrad.GradientTape() as tape:` "
                               "block first")
        if self._used and not self.persistent:
            raise RuntimeError(_NOT_PERSISTENT)
        self._used = True

    def _gradients(self, targets, seeds, leaves, zero) -> list:
        now = FrameValues(self._frame)
        known = facts(self._block)
        assigned = known.assigned
        deps = known.dependencies(self._executed)
        snapshot = self._snapshot
        watched_inputs = frozenset(n for n, v in snapshot.items() if self._is_watched(v))
        target_names = [name_assigned(now, assigned, t) or name_read(snapshot, t)
                        for t in targets]
        read_by_calls = self._read_by_calls(now)
        kinds = []  # per source leaf: [(name, "input"/"cut"/"global"), ...]
        inside = held_inside(known.reads, now)
        for leaf in leaves:
            self._refuse_held_inside(inside.get(id(leaf)), leaf)
            # every name the block read it from (tied weights: `W_dec = W`), else the
            # name the block assigned it to
            names = [n for n, v in snapshot.items() if v is leaf] or [
                name_assigned(now, assigned, leaf)]
            found = []
            for name in names if is_float(leaf) else ():
                kind = None
                if name is not None and snapshot.get(name) is leaf:
                    kind = (name, "input") if name in watched_inputs else None
                elif name is not None and (name in known.reached(deps, watched_inputs) or (
                        isinstance(leaf, Variable) and self._is_watched(leaf))):
                    kind = (name, "cut")  # (a trainable Variable made in the block: watched)
                if kind is not None and any(
                        t is not None and (t == kind[0] or t in known.reached(deps, {kind[0]}))
                        for t in target_names):
                    found.append(kind)
            if id(leaf) in read_by_calls and self._is_watched(leaf):
                found.append((read_by_calls[id(leaf)], "global"))  # read inside a call too
            kinds.append(found)
        chosen = dict(k for found in kinds for k in found)  # name -> its kind
        wrt = list(chosen)
        cut = [n for n in wrt if chosen[n] == "cut"]
        results = dict.fromkeys(wrt)
        if wrt:
            results = self._run(target_names, seeds, wrt, cut, now)
        out = []
        for leaf, found in zip(leaves, kinds):
            parts = [results[n] for n, _ in found if results[n] is not None]
            if parts:  # a Variable read under several names: the sum of their gradients
                out.append(sum(parts[1:], parts[0]))
            elif found:
                out.append(None)
            else:
                out.append(np.zeros(np.shape(plain(leaf))) if zero and is_float(leaf)
                           else None)
        return out

    def _refuse_held_inside(self, inside, leaf) -> None:
        """A watched value the block reads inside a list, dict or object (`inside`:
        `variables[0]`, `layer.w`) is not an input of the block's function: its gradient
        would miss what is computed from there, so it is an error, not a wrong number."""
        if inside is None or not self._is_watched(leaf):
            return
        what = f"the Variable {leaf.name!r}" if isinstance(leaf, Variable) else "a watched array"
        raise SrcgradError(
            f"srcgrad.GradientTape cannot differentiate by {what}: the block at "
            f"{self._block.filename}:{self._block.start} reads it inside `{inside}` (a list, "
            "tuple or dict, or an object's attribute), and its gradient would miss what is "
            "computed from there. Hand it to the code by a name of its own (name the Variable "
            "in the block and pass it: `model(x, w)` rather than `layer(x)` reading "
            "`layer.w`), or differentiate a function of it with srcgrad.grad.")

    def _read_by_calls(self, now=None) -> dict:
        """id(value) -> its name in generated code, for the Variables (and watched arrays) the
        functions the block calls read from their modules (watched like the block's own)."""
        inputs = tuple(self._snapshot)
        key = (inputs, self._block.start, self._block.stop)
        resolved = self._block.resolved.get(key)
        now = now or FrameValues(self._frame)
        if resolved is None:
            refresh(self._block, self._frame)
            func = self._block.function(list(inputs), [], "0.0", "tape_block_globals",
                                        inner=lambda call: self._inner(call, now))
            resolved = self._block.resolved[key] = link(desugar(resolve(check(parse(func)))))
        return {id(v): n for n, v in zip(resolved.data_globals,
                                         read_data(self._block, resolved, now))
                if isinstance(v, Variable) or id(v) in self._watched}

    def _run(self, target_names, seeds, wrt, cut, now) -> dict:
        if any(t is None for t in target_names):
            missing = [i for i, t in enumerate(target_names) if t is None]
            raise SrcgradError(
                f"srcgrad.GradientTape: target {missing[0]} is not a value the `with` block "
                "computed or read; pass the variable the block assigned (for example "
                "tape.gradient(loss, w))")
        inputs = [n for n in self._snapshot if n not in cut]
        key = (tuple(inputs), tuple(cut), tuple(wrt), tuple(target_names), bool(seeds),
               self._block.start, self._block.stop)
        program = self._block.programs.get(key)
        if program is None:
            refuse_global_draws(self._block)
            program = self._block.programs[key] = self._build(target_names, seeds, wrt, cut,
                                                              inputs, now)
        written, copies = program.mutated_inputs, self._copies  # copy what the code writes into
        values = [fresh(copies[n]) if n in written else copies[n] for n in inputs]
        values += [] if seeds is None else [plain(np.asarray(s, dtype=np.float64)
                                                   if np.ndim(s) else float(s)) for s in seeds]
        values += [plain(now[n]) for n in cut]
        data = {n: fresh(plain(v, copy=False)) if n in written else plain(v, copy=False)
                for n, v in zip(program.resolved.data_globals,
                                read_data(self._block, program.resolved, now))}
        values += data.values()
        _, grads = self._draws.replay(lambda: program.compiled(*values))
        out = {}
        for n, g in zip(wrt, grads):  # each gradient has its value's shape
            like = data[n] if n in data else copies[n] if n in copies else plain(now[n])
            shape = like.shape if type(like) is np.ndarray else np.shape(like)
            if shape == ():
                out[n] = float(g)
            else:
                out[n] = g if type(g) is np.ndarray and g.shape == shape else \
                    np.asarray(g).reshape(shape)
        return out

    def _build(self, target_names, seeds, wrt, cut, inputs, now):
        """The block's gradient program for this choice of target, sources and cuts."""
        terms = [f"np.sum({t})" if seeds is None else f"np.sum({t} * sg_seed{k})"
                 for k, t in enumerate(target_names)]
        seed_names = [] if seeds is None else [f"sg_seed{k}" for k in range(len(seeds))]
        refresh(self._block, self._frame)
        check_cut(self._block.statements, cut)
        name = f"tape_block_{self._block.node.lineno}"
        func = self._block.function(inputs + seed_names, cut, " + ".join(terms), name,
                                    inner=lambda call: self._inner(call, now))
        self._block.namespace.setdefault("np", np)
        self._block.namespace.setdefault("srcgrad", sys.modules["srcgrad"])
        return build(func, wrt, jit=True)

    def _inner(self, call, now):
        """`t1.gradient(y, x)` inside this block, t1 an inner tape: a call of its gradient."""
        holder = call.func.value
        tape = now.get(holder.id) if isinstance(holder, gast.Name) else None
        if not isinstance(tape, GradientTape) or tape is self:
            return None
        if (len(call.args) != 2 or call.keywords
                or not all(isinstance(a, gast.Name) for a in call.args)):
            raise SrcgradError("srcgrad.GradientTape: inside an outer tape, an inner tape's "
                               "gradient must be written tape.gradient(y, x) with two names")
        target, source = call.args[0].id, call.args[1].id
        block, inputs = tape._block, list(tape._snapshot)
        if source not in inputs:
            raise SrcgradError(f"srcgrad.GradientTape: nested tapes differentiate with respect "
                               f"to values the inner block reads; {source!r} is not one")
        key = (id(block), block.start, block.stop, tuple(inputs), target, source)
        if key not in _NESTED:  # named once: each inner gradient call keeps its own name
            func = block.function(inputs, [], f"np.sum({target})",
                                  f"tape_block_{block.node.lineno}")
            _NESTED[key] = (BlockGradient(func, source),
                            f"tape_gradient_{len(_NESTED) + 1}_{block.node.lineno}")
        gradient, name = _NESTED[key]
        self._block.namespace[name] = gradient
        callee = gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
        args = [gast.Name(id=n, ctx=gast.Load(), annotation=None, type_comment=None)
                for n in inputs]
        return gast.copy_location(gast.Call(func=callee, args=args, keywords=[]), call)

class _NoOp:

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

def _unconnected(value) -> bool:
    if value not in ("none", "zero"):
        raise ValueError(f"{value!r} is not a valid UnconnectedGradients")
    return value == "zero"
