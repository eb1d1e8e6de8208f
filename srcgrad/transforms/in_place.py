"""Elementwise updates a compiled form writes into the array they replace.

The backward sweep adds each stage's contribution into an adjoint by rebinding it,
`_adj_y = _adj_y + _adj_t` (a new array: what NumPy's `+` makes). In the compiled form
that statement is a loop filling a new array; where nothing can read the old array
again, the loop may write each element over the one it was computed from, and the
allocation goes (ode: three per step, about 3.5% of its gradient).

`in_place(window, last)` gives the names T whose LOOP statement `T = E` of the window
(transforms/windows.py, ending with the statement `last`) may do so; loops.py asks only
for windows in a loop's body (once per call, the allocation saved is not worth it:
measured, gmm's form ran 1.05-1.07x slower with its one update after its loops in
place):
- T holds float64 arrays of the loop's rank, E reads T only as an operand (never
  subscripted, sliced, or through an attribute), so the loop reads T element by element
  at its own index and checks that T has the loop's shape, and E mentions no other name
  that may share T's memory (`v = y[::-1]; y = y + v` would read overwritten elements);
- T's roots (analysis/roots.py) are arrays the function made: not a parameter's, not
  unknown;
- no other statement of the window mentions a name that may share T's memory, and none
  of those names but T is live after the window.
Then element k of the old array is read only by the statement computing element k of
the new one, before it is written, and nothing reads the old array afterwards: the
values read are those of the new array made apart. A failed shape check falls back to
the generated function, which starts again from the arguments (never written).
"""
from __future__ import annotations

import gast

from ..analysis import kinds as K
from ..analysis.roots import IN, UNKNOWN
from .window_forms import LOOP
from ..syntax import walk


def in_place(window, last) -> set:
    """The names whose loop may overwrite their own array (module doc)."""
    fn, found = window.fn, set()
    after = fn.live[id(last)]
    for item in window.items:
        node = item.node
        if item.phase != LOOP or not isinstance(node, gast.Assign) \
                or len(node.targets) != 1 or not isinstance(node.targets[0], gast.Name):
            continue
        target = node.targets[0].id
        kind, own = fn.kinds.get(target), fn.roots.get(target)
        if not (K.is_array(kind) and kind[2] == "f" and kind[1] == item.comp.rank) \
                or not own or IN in own or UNKNOWN in own or not _operand(node.value, target):
            continue
        sharing = {n for n, r in fn.roots.items() if r & own or UNKNOWN in r}
        if (sharing - {target}) & after or _mentions(node.value, sharing - {target}) or any(
                other is not item and _mentions(other.node, sharing) for other in window.items):
            continue
        found.add(target)
    return found


def _operand(value, target) -> bool:
    """`value` reads `target`, only as a whole array."""
    held = {id(n.value) for n in walk(value) if isinstance(n, (gast.Subscript,
                                                                    gast.Attribute))}
    reads = [n for n in walk(value) if isinstance(n, gast.Name) and n.id == target]
    return bool(reads) and not any(id(n) in held for n in reads)


def _mentions(node, names) -> bool:
    return any(isinstance(n, gast.Name) and n.id in names for n in walk(node))
