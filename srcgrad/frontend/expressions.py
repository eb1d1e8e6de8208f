"""Expressions in three-address form: each operation of a user expression becomes one
statement assigning a temporary, and its operands atoms (normalize.py lists the forms).

`Expressions` is a part of normalize.py's `_Normalizer`. Guarantees:
- Operands are evaluated left to right, once; `a if c else b`, `a and b`,
  `a or b` and `a < b < c` evaluate only what Python would, as `if` statements
  assigning one target.
- A value read from an array the function writes into later (an element or a
  slice, `.T`, or a view-making call: trees.VIEWS and their methods) is kept as
  a `snapshot` when a name holds it.
- A joining call's first argument (`np.concatenate((a, b))`) stays a tuple
  display of atoms (rules/joining.py).
"""
from __future__ import annotations

import gast

from ..rules.joining import NESTED_DISPLAYS, SEQUENCE_CALLS
from ..syntax import dotted_name, name as _name
from .comprehensions import LIST_READERS
from .trees import VIEWS, chain_root, snapshot_of

_VIEW_METHODS = {"transpose", "reshape", "ravel", "swapaxes", "squeeze", "view"}


def _viewed(node):
    """The array `node` may be a view of (`x` in `x[i]`, `x.T`, `np.reshape(x, s)`,
    `x.ravel()`), else None."""
    if isinstance(node, gast.Subscript):
        return node.value
    if isinstance(node, gast.Attribute) and node.attr == "T":
        return node.value
    if isinstance(node, gast.Call) and dotted_name(node.func) in VIEWS and node.args:
        return node.args[0]
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
            and node.func.attr in _VIEW_METHODS:
        return node.func.value
    return None


class Expressions:

    def atom(self, node, target: str | None = None):
        """Emit statements computing `node`; return an atom holding its value.

        With `target`, the final operation is assigned straight to that name.
        """
        if isinstance(node, gast.UnaryOp) and isinstance(node.operand, gast.Constant) \
                and isinstance(node.op, (gast.USub, gast.UAdd)):
            sign = -1 if isinstance(node.op, gast.USub) else 1
            node = gast.Constant(value=sign * node.operand.value, kind=None)  # x[-1]
        if isinstance(node, gast.Constant):
            return self._store(node, target) if target else node
        if isinstance(node, gast.Name):
            current = _name(self.version.get(node.id, node.id))
            if target and node.id in self.mutated:  # `x if c else ...` of an array
                current = snapshot_of(current)         # written later
            return self._store(current, target) if target else current
        if isinstance(node, gast.Attribute) and chain_root(node) not in self.version:
            return self._store(node, target) if target else node  # static, e.g. np.pi
        if isinstance(node, gast.IfExp):
            return self.if_expression(node, target or self.fresh_temp())
        if isinstance(node, gast.BoolOp):
            return self.bool_operation(node, target or self.fresh_temp())
        if isinstance(node, gast.Compare) and len(node.ops) > 1:
            return self.chained_comparison(node, target or self.fresh_temp())
        if getattr(node, "callee", None) is not None:
            result = self.call_user(node)
            return self._store(result, target) if target else result
        if chain_root(_viewed(node)) in self.mutated:
            # x[0], x.T, np.reshape(x, s) of an array written later may be a view: keep
            # the values read now (the backward sweep reads them after the writes)
            view = self._store(self.operation(node), None)
            return self._store(snapshot_of(view), target)
        return self._store(self.operation(node), target)

    def _store(self, value, target):
        name = target or self.fresh_temp()
        self.assign(name, value)
        return _name(name)

    def operation(self, node):
        """`node` with every operand replaced by an atom (one operation left)."""
        if getattr(node, "callee", None) is not None:
            return self.call_user(node)
        if isinstance(node, gast.BinOp):
            return gast.BinOp(left=self.value(node.left), op=node.op, right=self.value(node.right))
        if isinstance(node, gast.UnaryOp):
            return gast.UnaryOp(op=node.op, operand=self.value(node.operand))
        if isinstance(node, gast.Compare):
            return gast.Compare(left=self.value(node.left), ops=node.ops,
                                comparators=[self.value(node.comparators[0])])
        if isinstance(node, gast.Call):
            use = self.atom if dotted_name(node.func) in LIST_READERS else self.value
            args = [self.call_argument(node, k, a, use) for k, a in enumerate(node.args)]
            return gast.Call(func=node.func, args=args,
                             keywords=[gast.keyword(arg=k.arg, value=self.value(k.value))
                                       for k in node.keywords])
        if isinstance(node, gast.Attribute):
            return gast.Attribute(value=self.atom(node.value), attr=node.attr, ctx=gast.Load())
        if isinstance(node, gast.Subscript):
            return gast.Subscript(value=self.atom(node.value), slice=self.index(node.slice),
                                  ctx=gast.Load())
        if isinstance(node, (gast.Tuple, gast.List)):
            return type(node)(elts=[self.value(e) for e in node.elts], ctx=gast.Load())
        if isinstance(node, (gast.IfExp, gast.BoolOp)):
            return self.atom(node)
        raise AssertionError(f"check() let {type(node).__name__} through")

    def value(self, node):
        """An atom used as a value: a list may only be indexed, appended to, iterated, len()-ed.

        (Adjoints of lists are lists; `+` on them would concatenate.)
        """
        atom = self.atom(node)
        if isinstance(atom, gast.Name) and atom.id in self.lists:
            self.fail(self.where, f"using the list {self.names.show(atom.id)} as a value",
                      "index it, append to it, iterate over it or take len(); for arithmetic "
                      "build an array instead")
        return atom

    def index(self, node):
        if isinstance(node, gast.Slice):
            return gast.Slice(*(None if part is None else self.atom(part)
                                for part in (node.lower, node.upper, node.step)))
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.index(e) for e in node.elts], ctx=gast.Load())
        return self.atom(node)

    def if_expression(self, node, target):
        """`a if c else b`: only the branch taken is evaluated, as in Python."""
        test = self.atom(node.test)
        body = self.nested_expression(node.body, target)
        orelse = self.nested_expression(node.orelse, target)
        self.emit_if(test, body, orelse)
        return _name(target)

    def nested_expression(self, expr, target):
        self.blocks.append([])
        self.atom(expr, target=target)
        return self.blocks.pop()

    def bool_operation(self, node, target):
        """`a and b` is a if a is falsy, else b (b evaluated only then); `or` likewise."""
        self.atom(node.values[0], target=target)
        for value in node.values[1:]:
            test = _name(target)
            if isinstance(node.op, gast.Or):
                test = self.atom(gast.UnaryOp(op=gast.Not(), operand=_name(target)))
            self.emit_if(test, self.nested_expression(value, target), [])
        return _name(target)

    def chained_comparison(self, node, target):
        """`a < b < c` is `a < b and b < c`, with b evaluated once."""
        left = self.atom(node.left)
        rights = [self.atom(c) for c in node.comparators]
        pairs = list(zip([left] + rights[:-1], node.ops, rights))
        first, rest = pairs[0], pairs[1:]
        self._store(gast.Compare(left=first[0], ops=[first[1]], comparators=[first[2]]), target)
        for lhs, op, rhs in rest:
            self.blocks.append([])
            self._store(gast.Compare(left=lhs, ops=[op], comparators=[rhs]), target)
            self.emit_if(_name(target), self.blocks.pop(), [])
        return _name(target)
    # ---- sequence arguments (rules/joining.py) -----------------------------------

    def call_argument(self, call, k, arg, use):
        """Argument k of `call` as an atom; a joining call's first argument stays a display."""
        spelled = dotted_name(call.func)
        if k != 0 or spelled not in SEQUENCE_CALLS:
            return use(arg)
        if isinstance(arg, (gast.List, gast.Tuple)):
            return self.display(arg, spelled, spelled in NESTED_DISPLAYS)
        if isinstance(arg, gast.Name) and self.version.get(arg.id, arg.id) in self.lists:
            self.fail(self.where, f"passing the list variable {self.names.show(arg.id)} to "
                      f"{spelled}()",
                      f"write its elements out in a display, {spelled}([a, b, ...])")
        return use(arg)

    def display(self, node, spelled: str, nested: bool):
        """A list or tuple display as a tuple display of atoms (numba joins tuples, not lists)."""
        elts = []
        for elt in node.elts:
            if not isinstance(elt, (gast.List, gast.Tuple)):
                elts.append(self.value(elt))
            elif nested:
                elts.append(self.display(elt, spelled, nested))
            else:
                self.fail(self.where, f"a nested list or tuple display inside {spelled}()",
                          "build the inner array first, e.g. with np.array([...])")
        return gast.Tuple(elts=elts, ctx=gast.Load())
