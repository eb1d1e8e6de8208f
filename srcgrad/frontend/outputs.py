"""Calls that write into an array argument, made writes srcgrad differentiates (desugar's
first step).

NumPy functions write into an argument through `out=` (or the `out` position: a ufunc's
outputs follow its inputs, `np.dot(a, b, out)`), `np.copyto`, and the fill and scatter
functions (`np.put`, `np.putmask`, `np.place`, `np.fill_diagonal`, `np.put_along_axis`,
`ufunc.at`). srcgrad's rules see a call's arguments and result only, so without this
pass such a write ran in the forward sweep and was missing from the backward one: a
gradient off by the written values, without an error (before 2026-12-06).

Guarantee: after this pass no call writes into an argument. As a statement, or the
value bound to one name, with its output a name:
- `f(args, out=o)` becomes `o[:] = f(args)`, then `r = o` for `r = f(args, out=o)`
  (NumPy returns the output array itself); with a ufunc's `where=w`, the elements it
  leaves keep their values: `o[:] = np.where(w, f(args), o)`; `out=None` is dropped;
- `np.copyto(d, s)` becomes `d[:] = s`, with `where=w` `d[:] = np.where(w, s, d)`.
The same values land in the same array as in NumPy (the call computes them first, the
write broadcasts them into o: NumPy's rule for an output), and normalize, aliasing and
the reverse pass treat the write as any `o[:] = v`. Refused with SrcgradSyntaxError
naming the call: an output inside a larger expression or not a plain name, several
outputs, and the fill and scatter functions (write the elements by indexing instead).
Not followed: NumPy's refusal to cast a float result into an integer output (the write
casts, as `o[:] = v` does), and a 0-d output (`o[:]` needs an axis).
"""
from __future__ import annotations

import inspect

import gast
import numpy as np

from ..errors import SrcgradSyntaxError
from ..syntax import assign, call, dotted, dotted_name, name, rewrite_blocks, walk

_WRITERS = frozenset({"np.put", "np.putmask", "np.place", "np.fill_diagonal",
                      "np.put_along_axis", "np.random.shuffle"})
_HINT = "compute the values, then write them with an index assignment (`a[:] = v`)"


def lower_outputs(resolved) -> None:
    """Rewrite `resolved.tree` in place as the module docstring says."""
    calls = [n for n in walk(resolved.tree) if isinstance(n, gast.Call)]
    for node in calls:  # `out=None`: a new array, as without it
        node.keywords = [k for k in node.keywords if not (
            k.arg == "out" and isinstance(k.value, gast.Constant) and k.value.value is None)]
    if any(_writes(resolved, n) for n in calls):
        rewrite_blocks(resolved.tree.body, _Lowering(resolved).statement)


def _writes(resolved, call) -> bool:
    """Whether `call` writes into an argument (or, a ufunc given `where=`, leaves a new
    array's other elements undefined); `np.sum(x, where=m)` does neither."""
    if getattr(call, "callee", None) is not None:  # the user's own function: inlined
        return False
    ufunc = isinstance(resolved.callees.get(dotted_name(call.func)), np.ufunc)
    return (any(k.arg == "out" or k.arg == "where" and ufunc for k in call.keywords)
            or _output_position(resolved, call) is not None
            or dotted_name(call.func) in _WRITERS | {"np.copyto"} or _is_at(resolved, call))


def _is_at(resolved, call) -> bool:
    """`np.add.at(a, i, v)`: an unbuffered scatter into a."""
    func = call.func
    if not (isinstance(func, gast.Attribute) and func.attr == "at"):
        return False
    base = dotted_name(func.value) or ""
    obj = resolved.callees.get(base, np if base.startswith("np.") else None)
    for part in base.split(".")[1:] if obj is np else []:
        obj = getattr(obj, part, None)
    return isinstance(obj, np.ufunc)


def _output_position(resolved, call):
    """The index of the positional output `call` is given, or None."""
    obj = resolved.callees.get(dotted_name(call.func))
    if obj is None:
        return None
    if isinstance(obj, np.ufunc):
        position = obj.nin
    else:
        try:
            params = list(inspect.signature(obj).parameters.values())
        except (TypeError, ValueError):
            return None
        positional = []  # `np.einsum(*operands, out=None)`: out only by keyword
        for p in params:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                break
            positional.append(p.name)
        if "out" not in positional:
            return None
        position = positional.index("out")
    return position if len(call.args) > position else None


class _Lowering:

    def __init__(self, resolved):
        self.resolved = resolved

    def fail(self, node, what):
        parsed = self.resolved.parsed
        raise SrcgradSyntaxError(
            f"srcgrad cannot differentiate {parsed.func.__qualname__}: {what} is not "
            f"supported; {_HINT}", parsed.loc(node))

    def statement(self, stmt) -> list:
        value = getattr(stmt, "value", None)
        top = value if isinstance(value, gast.Call) and (
            isinstance(stmt, gast.Expr) or isinstance(stmt, gast.Assign)
            and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)) else None
        for node in _own_nodes(stmt):
            if isinstance(node, gast.Call) and node is not top and _writes(self.resolved, node):
                self.check_keywords(node)
                self.fail(node, f"`{dotted_name(node.func)}(...)` writing into an argument "
                                "inside a larger expression")
        if top is None or not _writes(self.resolved, top):
            return [stmt]
        written, computed = self.split(top)
        whole = gast.Slice(lower=None, upper=None, step=None)  # `o[:]`: numba reads no `o[...]`
        out = [assign(gast.Subscript(value=name(written), slice=whole, ctx=gast.Store()),
                      computed)]
        if isinstance(stmt, gast.Assign):
            out.append(assign(stmt.targets[0], name(written)))
        return [gast.copy_location(new, stmt) for new in out]

    def check_keywords(self, call) -> None:
        spelled = dotted_name(call.func)
        if spelled in _WRITERS or _is_at(self.resolved, call):
            self.fail(call, f"`{spelled}`, which writes into its argument")

    def split(self, call):
        """(the name written, the expression of the values written)."""
        self.check_keywords(call)
        spelled = dotted_name(call.func)
        keywords = {k.arg: k.value for k in call.keywords}
        if spelled == "np.copyto":
            if len(call.args) != 2 or set(keywords) - {"where"}:
                self.fail(call, "`np.copyto` with `casting=` or other arguments")
            dest, source = call.args
            where = keywords.get("where")
            chosen = source if where is None else self.where(where, source, dest)
            return self.target(call, dest), chosen
        position = _output_position(self.resolved, call)
        outputs = call.args[position:] if position is not None else []
        out = keywords.pop("out", None)
        if position is not None and out is not None or len(outputs) > 1:
            self.fail(call, f"`{spelled}` with several outputs")
        out = outputs[0] if outputs else out
        if isinstance(out, gast.Tuple) and len(out.elts) == 1:
            out = out.elts[0]
        where = keywords.pop("where", None)
        pure = gast.Call(func=call.func, args=call.args[:position] if outputs else call.args,
                         keywords=[gast.keyword(arg=k, value=v) for k, v in keywords.items()])
        if out is None:  # NumPy leaves the other elements of a new array undefined
            self.fail(call, f"`{spelled}(..., where=...)` without an output")
        written = self.target(call, out)
        here = name(written)
        return written, (pure if where is None else self.where(where, pure, here))

    def where(self, test, chosen, kept):
        self.resolved.callees.setdefault("np.where", np.where)
        return call(dotted("np.where"), test, chosen, kept)

    def target(self, call, node) -> str:
        if not isinstance(node, gast.Name):
            self.fail(call, f"`{dotted_name(call.func)}` writing into `{_text(node)}` (only "
                            "into a name)")
        return node.id


def _own_nodes(stmt):
    """The nodes of `stmt` outside its nested statement bodies."""
    fields = [getattr(stmt, f) for f in ("value", "test", "iter", "targets", "target", "msg")
              if getattr(stmt, f, None) is not None]
    for value in fields:
        for part in value if isinstance(value, list) else [value]:
            yield from walk(part)


def _text(node) -> str:
    return gast.unparse(node).strip()
