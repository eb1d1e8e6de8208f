"""Spellings whose meaning srcgrad's later passes would get wrong, rewritten to the same
meaning (desugar's first steps). Guarantees: after `respell`,
- no integer literal is a negative exponent: `n ** -2` is `n ** -2.0`. Python makes a
  float of an int to a negative power, numba makes 0; for floats and float arrays the two
  spellings give the same numbers;
- no `np.array(u, copy=False)` or `copy=None`: it is `np.asarray(u)`, which NumPy also
  returns u itself for, so aliasing.py sees a view (writes into it reach u), not a copy.
"""
from __future__ import annotations

import gast

from ..syntax import const, dotted_name, walk


def respell(tree) -> None:
    """Rewrite, in place, the spellings of the module docstring."""
    _float_negative_powers(tree)
    _arrays_without_copies(tree)


def _float_negative_powers(tree) -> None:
    """`n ** -2` as `n ** -2.0`: Python makes a float of an int to a negative power; numba
    makes 0 (the same number for floats and float arrays)."""
    for node in walk(tree):
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Pow):
            exponent = node.right
            if isinstance(exponent, gast.UnaryOp) and isinstance(exponent.op, gast.USub) \
                    and isinstance(exponent.operand, gast.Constant):
                exponent = const(-exponent.operand.value) if type(
                    exponent.operand.value) is int else exponent
            if isinstance(exponent, gast.Constant) and type(exponent.value) is int \
                    and exponent.value < 0:
                node.right = gast.copy_location(const(float(exponent.value)), node.right)


def _arrays_without_copies(tree) -> None:
    """`np.array(u, copy=False)` (or copy=None) as `np.asarray(u)`: NumPy returns u itself,
    so writes into the result reach u (aliasing.py sees a view, not a copy)."""
    for node in walk(tree):
        if isinstance(node, gast.Call) and dotted_name(node.func) in ("np.array", "numpy.array"):
            copy_arg = [k for k in node.keywords if k.arg == "copy"]
            if copy_arg and isinstance(copy_arg[0].value, gast.Constant) \
                    and copy_arg[0].value.value in (False, None):
                node.keywords = [k for k in node.keywords if k.arg != "copy"]
                node.func.attr = "asarray"
