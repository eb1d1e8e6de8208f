"""Second names: when a binding gives an array another name, and what it binds then.

`SecondNames` is a part of normalize.py's `_Normalizer`. Guarantee: after
normalize, no two names, list elements or tuple targets hold one array that
either of them writes into, except where NumPy's sharing is visible and
aliasing.py raises at run time. A binding that would share one (`u = new`,
`u, c = new, 1.0`, `a = b = e`, the rows of `a, b = M`, `L = [new]`,
`L[k] = new`) binds a copy (`snapshot`) instead; a swap of names that keep one
name (`u, new = new, u` in a loop) moves the arrays and copies nothing.

Soundness: the backward sweep reads each name's values as the forward sweep
read them. With one array under two names, a write through one after a read
through the other changes what the backward sweep reads (before 2026-12-06:
gradients off by O(1), no error). With a copy, the two runs differ only where
one name sees a write made through the other, which needs both used after
the write: aliasing.py's may-share analysis counts `snapshot` as sharing and
raises there. A swap leaves each array one name; where the backward sweep
needs a rebound name's old value, the recording pass copies it at the
rebinding, before any write through the other name. Refused outright: a loop
over an array the body rebinds and writes into, and a view bound to a name
that is written into (NumPy's write would reach the viewed array).
"""
from __future__ import annotations

import gast

from .trees import is_view, snapshot_of


class SecondNames:

    def element(self, atom):
        """An atom a list keeps: a copy of an array the function writes into."""
        if isinstance(atom, gast.Name) and atom.id in self.mutated and atom.id not in self.lists:
            return self._store(snapshot_of(atom), None)
        return atom

    def kept(self, target, part, copy: bool):
        """`part` as a tuple's name `target` binds it: a copy if `copy`."""
        if copy and isinstance(target, gast.Name):
            return self._store(snapshot_of(part if isinstance(part, gast.Name)
                                           else self._store(part, None)), None)
        return part

    def shared_element(self, target, element) -> bool:
        """Whether tuple target `target` bound to the user's `element` needs a copy: a name
        (needs_copy), or a view bound to a name written into. Other elements are new
        values (`h, ys = 0.1, []`: a copy of the empty list would lose its type in numba)."""
        if not isinstance(target, gast.Name):
            return False
        if isinstance(element, gast.Name):
            return self.needs_copy(target.id, element)
        return target.id in self.mutated and is_view(element)

    def check_sharing(self, name: str, value):
        """Refuse what a copy cannot stand for: a loop over a rebound array, a view written."""
        source = value.id if isinstance(value, gast.Name) and value.id in self.version else None
        if not (name in self.mutated and (source is not None or is_view(value))
                or source is not None and source in self.mutated):
            return
        show, user = self.names.show, self.names.user(name)
        loop = getattr(self.where, "hoisted_loop", None)  # desugar's `_sK = y` for `for v in y`
        if loop is not None:
            self.fail(loop, f"iterating over {show(source)}, which the function writes into, "
                      "in a loop whose body rebinds it",
                      f"iterate over a copy, {self.names.user(source)}.copy()")
        over = getattr(self.where, "element_of_loop", None)  # desugar's `v = seq[_iK]`
        if source is None and over is not None:
            self.fail(over, f"a loop binding {show(name)} to each element of "
                      f"`{self.names.text(getattr(value, 'value', value))}` in a function that writes into "
                      f"{show(name)} elsewhere (srcgrad tells the two apart by name only)",
                      f"give the loop variable a name of its own (for {user}2 in ...)")
        if source is None:  # a view of an array written through another name
            what = self.names.text(value)
            self.fail(self.where, f"writing into {show(name)}, which shares memory with "
                      f"`{what}`", f"make it a copy: {user} = {what}.copy()")

    def needs_copy(self, name: str, atom) -> bool:
        """`name = atom` of one array under two names, one of them written into: bind a copy.

        The backward sweep reads each name's values as they were when the forward
        sweep read them; a write through the other name would change them. The
        copy gives NumPy's numbers wherever the names are not both used after a
        write (aliasing.py raises at run time where they are: `snapshot` counts as
        sharing there).
        """
        return (isinstance(atom, gast.Name) and atom.id != name
                and (name in self.mutated or atom.id in self.mutated))
