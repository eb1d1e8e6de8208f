"""The inliner: a call into user code (calls.py) becomes the callee's body, normalized in
place.

`Inliner` is a part of normalize.py's `_Normalizer`. Guarantees:
- Each inlined copy renames the callee's locals `n__f1`, `n__f2`, ... (one
  suffix per copy), and its parameters are bound to the caller's argument atoms,
  evaluated left to right, defaults filled in; a parameter the callee only
  reads, passed a user variable nothing writes into, is that variable in the
  copy (`shared_parameters`); a parameter the callee neither assigns nor writes
  into, passed an element or slice `a[...]`, is bound to that read itself
  (`cam__f1 = cams[i]`, not `_t2 = cams[i]; cam__f1 = _t2`: `bound_to_read`),
  and a name bound to a call's result takes the result's last operation
  (`forget = 1.0 / _t25`, not `_t26 = 1.0 / _t25; forget = _t26`; normalize.py).
- A callee never writes into an array of the caller's: it must rebind the
  parameter to a new array first on every path (`u = u.copy()`), else the call
  is refused; a callee that only reads an array the caller writes into later
  reads a copy.
- A call of a function called from many places (calls.py, OUTLINE_SITES) becomes
  `f__value(args)`, whose backward step calls `f__vjp(args, cotangent)`.
- A recursive call becomes `f__grad_all(args)` (forward mode keeps `f(args)`),
  its value linked to each argument by its partial derivative; a recursive call of
  generated forward code (`f__jvp_all`, second order) gives its pair, each part linked.
"""
from __future__ import annotations

import copy
import re

import gast

from ..syntax import name as _name, walk
from .check import own_returns
from .calls import Outlined, Recursive, grad_all_name, is_jvp_pair, rename_closures
from .trees import assigned, is_view, item, nested_stores, snapshot_of, written_into

_TEMP = re.compile(r"^_t\d+$")


class Inliner:

    def call_user(self, call):
        """Inline `call` here; return the callee's result (an atom, or a tuple of atoms)."""
        callee = call.callee
        values = self.arguments(call, callee)
        if isinstance(callee, Recursive):
            return self.call_recursive(callee, values)
        if isinstance(callee, Outlined):  # its own f__value; its backward step calls f__vjp
            return self._store(gast.Call(func=_name(f"{callee.name}__value"), args=values,
                                         keywords=[]), None)
        k = self.copies[callee.name] = self.copies.get(callee.name, 0) + 1
        written = written_into(callee.body)  # the callee's own names
        shared = self.shared_parameters(callee, values, written)
        rename = {n: f"{n}__{callee.name}{k}" for n in callee.locals if n not in shared}
        self.names.inlined.update({new: (n, callee.name) for n, new in rename.items()})
        rename.update(shared)
        body = copy.deepcopy(callee.body)
        renamed = set()  # a node shared by two places in the tree is renamed once
        for node in (n for stmt in body for n in walk(stmt)):
            if isinstance(node, gast.Name) and node.id in rename and id(node) not in renamed:
                renamed.add(id(node))
                if node.id in shared:
                    node.srcgrad_user_name = node.id  # messages spell it as the callee does
                node.id = rename[node.id]
        rename_closures(body, rename)  # its local functions read and assign the copy's names
        nested = len(self.blocks) > 1  # in a loop or branch: no SSA names for this copy
        body_written = written_into(body)  # the copy's names
        self.unversioned |= {rename[n] for n in rename if n not in shared} if nested else (
            nested_stores(body) | body_written)
        self.unversioned |= {rename.get(n, n) for n in callee.closure_writes}  # `nonlocal`
        self.mutated |= body_written
        where = self.where
        bound = assigned(callee.body)
        for param, value in zip(callee.params, values):
            if param in shared or (param not in bound | written
                                   and self.bound_to_read(rename[param], value)):
                continue
            self.bind_parameter(call, param, rename[param], value, param in written)
        for stmt in body[:-1]:
            self.statement(stmt)
        self.where = body[-1]
        result = body[-1].value
        if isinstance(result, gast.Tuple):  # `return a, b` feeds `u, v = f(x)` directly
            result = gast.Tuple(elts=[self.atom(e) for e in result.elts], ctx=gast.Load())
        else:
            result = self.atom(result)
        self.where = where
        return result

    def shared_parameters(self, callee, values, written: set[str]) -> dict[str, str]:
        """Parameters the copy reads as the caller's own name: param -> the caller's name.

        Sound where the copy can only read the parameter: the callee never
        assigns it or writes into it, and the caller's name is a user variable
        (not a list) that nothing writes into, so during the copy's body, and at
        the mirror point of the backward sweep, it holds the argument's value.
        This keeps loop-invariant arguments (`f(x, y)` with x a parameter) off
        the tape and lets the copy's adjoint accumulate into the caller's.
        """
        bound = assigned(callee.body)
        return {param: value.id for param, value in zip(callee.params, values)
                if isinstance(value, gast.Name) and not value.id.startswith("_")
                and param not in bound and param not in written
                and value.id not in self.mutated and value.id not in self.lists}

    def bound_to_read(self, param: str, value) -> bool:
        """Bind `param` by renaming the argument's temporary when that temporary is a read
        `_tK = a[...]` emitted in this block for this call; return whether it did.

        The caller checked that the callee never assigns `param` or writes into it.
        The program is the same (the temporary had no other use: arguments get
        fresh atoms), but the parameter is now a name with one assignment whose
        value is a read, which the backward sweep reads again or recomputes
        under recompute.py's rule, where a copy `cam__f1 = _t2` was recorded once
        per call: a row per iteration for `f(cams[i])` in a loop.
        """
        return self.rename_temporary(value, lambda: self.define(param),
                                     lambda v: isinstance(v, gast.Subscript))

    def rename_temporary(self, atom, new, accept, name: str | None = None) -> bool:
        """Rename the temporary `atom` (`_tK`) to `new()` where this block assigns it, when
        `accept(its value)` and nothing after that assignment mentions it, or `name` (the
        new name, when known: the assignment moves up to there). A parameter's new name
        cannot be mentioned there: it has this copy's own suffix, fixed after the
        arguments were evaluated."""
        if not (isinstance(atom, gast.Name) and _TEMP.match(atom.id)):
            return False
        block = self.blocks[-1]
        for k in range(len(block) - 1, -1, -1):
            stmt = block[k]
            if (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                    and stmt.targets[0].id == atom.id):
                if not accept(stmt.value) or any(
                        isinstance(n, gast.Name) and n.id in (atom.id, name)
                        for later in block[k + 1:] for n in walk(later)):
                    return False
                stmt.targets[0].id = new()
                return True
        return False

    def bind_parameter(self, call, user: str, param: str, value, written: bool):
        """Bind an inlined copy's parameter `param` (the callee's `user`) to the caller's
        argument atom.

        A callee that writes into a caller's array would change it behind the
        caller's back (srcgrad does not differentiate through shared arrays)
        unless it rebinds the parameter to its own array first
        (`u = u.copy()`); a callee that only reads an array the caller writes
        into later gets a copy, so the backward sweep reads what it saw. A
        callee writing into a parameter passed a temporary writes into a copy of
        it: the temporary keeps the value the backward sweep may read.
        """
        caller_array = isinstance(value, gast.Name) and value.id in self.version
        shown = self.names.show(value.id) if caller_array else ""
        shares = written and not _rebound_before_written(call.callee.body, user)
        if caller_array and value.id in self.mutated:  # the callee's name must not see
            value = snapshot_of(value)                   # the caller's later writes
        elif shares and isinstance(value, gast.Name):
            value = snapshot_of(value)  # a temporary (`f(np.tanh(v))`): the backward sweep
            #                             may read its value, which the writes would change
        if caller_array and written:
            if shares:
                name = call.callee.name
                advice = f"copy it first inside {name}(): {user} = {user}.copy()"
                if _returns_none(call.callee):  # its writes are all it does
                    advice += (f", return it, and assign the call's result in the caller: "
                               f"{shown.strip(chr(39))} = {name}(...)")
                self.fail(call, f"{name}() writing into its parameter {user!r}, "
                          f"which is the caller's {shown}", advice)
            self.assign(self.define(param), value)  # rebound before any write: no sharing
            return
        self.bind(_name(param, store=True), value)

    def arguments(self, call, callee) -> list:
        """The atoms bound to each parameter, evaluated left to right as Python does."""
        what = f"the call to {callee.name}()"
        if len(call.args) > len(callee.params):
            self.fail(call, f"{what} with {len(call.args)} positional arguments",
                      f"it takes {len(callee.params)}")
        given = dict(zip(callee.params, call.args))
        for keyword in call.keywords:
            if keyword.arg not in callee.params or keyword.arg in given:
                self.fail(call, f"{what} with the keyword {keyword.arg!r}",
                          f"its parameters are {', '.join(callee.params)}")
            given[keyword.arg] = keyword.value
        atoms = {name: self.atom(value) for name, value in given.items()}
        for name in callee.params:
            if name not in atoms:
                if name not in callee.defaults:
                    self.fail(call, f"{what} without a value for {name!r}",
                              "pass every parameter that has no default")
                atoms[name] = copy.deepcopy(callee.defaults[name])
        return [atoms[name] for name in callee.params]

    def call_recursive(self, callee: Recursive, values):
        """`f__grad_all(args)`, its value linked to each argument by its partial derivative.

        For forward mode the call stays `f(args)` (forward.py calls `f__jvp_all`).
        """
        if self.mode == "forward":
            kept = gast.Call(func=_name(callee.name), args=values, keywords=[])
            kept.callee = callee
            return self._store(kept, None)
        both = self._store(gast.Call(func=_name(grad_all_name(callee.name)), args=values,
                                     keywords=[]), None)
        value = self._store(item(both, 0), None)
        partials = self._store(item(both, 1), None)
        if is_jvp_pair(callee.name):
            return self.linked_pair(value, partials, values)
        for k, arg in enumerate(values):
            if isinstance(arg, gast.Name):
                value = self.linked(value, item(partials, k), arg)
        return value

    def linked(self, value, partial, arg):
        partial = self._store(partial, None)
        return self._store(gast.Call(func=_name("linked"), args=[value, partial, arg],
                                     keywords=[]), None)

    def linked_pair(self, pair, partials, values):
        """A recursive call of generated forward code, `f__jvp_all(xs, ts)` (second order):
        its `__grad_all` returns the pair (value, tangent) and the partials of the tangent
        (calls.py). The tangent J t is linear in t, so its partial by t_k is the value's
        partial by x_k: the value is linked to x_k by that one."""
        value, tangent = (self._store(item(pair, k), None) for k in (0, 1))
        half = len(values) // 2
        for k, arg in enumerate(values):
            if isinstance(arg, gast.Name):
                tangent = self.linked(tangent, item(partials, k), arg)
                if k >= half and isinstance(values[k - half], gast.Name):
                    value = self.linked(value, item(partials, k), values[k - half])
        return gast.Tuple(elts=[value, tangent], ctx=gast.Load())


def _rebound_before_written(body, name: str) -> bool:
    """Whether every path through `body` rebinds `name` to a new array before writing into it
    (a branch counts where each arm does; desugar puts the rest of a body after an
    early `return` into a branch)."""
    return _first_event(body, name) != "written"


def _first_event(body, name: str) -> str | None:
    """"written", "rebound" (to a new array) or None: what `body` does to `name` first."""
    for stmt in body:
        if isinstance(stmt, gast.If):
            arms = (_first_event(stmt.body, name), _first_event(stmt.orelse, name))
            if "written" in arms:
                return "written"
            if arms == ("rebound", "rebound"):
                return "rebound"
            continue  # rebound on some paths at most: a later write may reach the caller
        if name in written_into([stmt]):
            return "written"
        if (isinstance(stmt, gast.Assign) and any(isinstance(t, gast.Name) and t.id == name
                                                   for t in stmt.targets)):
            value = stmt.value
            fresh = not (isinstance(value, gast.Name) or is_view(value))
            return "rebound" if fresh else "written"
    return None


def _returns_none(callee) -> bool:
    """Whether every return of `callee` (not of functions nested in it) returns None: it
    works by its writes."""
    return all(isinstance(r.value, gast.Constant) and r.value.value is None
               for r in own_returns(callee))
