"""Windows of transforms/loops.py: consecutive statements of a block, each given a phase.

A statement joins a window as
- LOOP, if it has a per-element form (window_forms.py) and `_place` finds it a loop
  (*component*): the components whose arrays it reads element by element, or whose
  statements touch the same view, merge into one of its rank, in which it touches no
  memory they touch through another view, unless both only accumulate; two conflicting
  LOOP statements of two components must keep their order; no earlier POST statement may
  conflict with it, and it may not read or bind the number an earlier sum ends in;
- PRE, a simple statement conflicting with no earlier LOOP or POST statement;
- POST, any other simple statement (`Assign`, `AugAssign`, `Expr`) that is not
  elementwise.
Anything else ends the window (`add` returns False): an elementwise statement that fits
no loop of this window then starts the next one, and so does a store into a view of an
array this window makes (`_adj_un[:-2] += g` after `_adj_un = zeros_like(un)`), which no
loop here can take and the next window's can. loops.py's docstring says why the
phases keep the function's meaning.
"""
from __future__ import annotations

import copy

import gast

from ..analysis.kinds import is_array, kind_of
from ..analysis.roots import may_alias
from ..syntax import is_comment, name, walk
from .elementwise import Access, Effects, Element, NotElementwise, dump, effects
from .window_forms import LOOP, POST, PRE, Item, loop_form

class Window:
    def __init__(self, fn, paths=None):
        self.fn, self.items, self.comps = fn, [], []
        self.objects = {}  # name -> the Obj a LOOP statement bound it to, at this point
        self.objs = []  # every Obj made
        # name -> the path of the view it holds (bound before the window or by PRE)
        self.paths = {n: p for n, (p, _) in (paths or {}).items()}
        self.versions = {}  # name -> how many statements of the window bound it
        self.views = {}  # dump of a view LOOP statements use -> (the name bound to it, node)
        self.external = set()  # array names LOOP statements read as made outside the loop
        self.note = None
        self.taken = []  # the statements it holds, comments included

    def add(self, stmt) -> bool:
        if is_comment(stmt):
            self.note = stmt
            self.taken.append(stmt)
            return True
        try:
            item = loop_form(self, stmt)
        except NotElementwise:
            item = None
        if item is not None and self._place(item):
            self.taken.append(stmt)
            return True
        if item is not None or not self.items or self._stores_into_own(stmt) \
                or not isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Expr)):
            return False  # (an elementwise statement that fits no loop here starts the next)
        self._simple(stmt)
        self.taken.append(stmt)
        return True

    def _stores_into_own(self, stmt) -> bool:
        """`stmt` stores into a view of an array this window makes (`_adj_un[:-2] += g`
        after `_adj_un = zeros_like(un)`): no loop of this window can take it, the next
        window's can, where the array is made."""
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            else getattr(stmt, "target", None)
        if not isinstance(target, gast.Subscript) \
                or not is_array(kind_of(target, self.fn.kinds)):
            return False  # (an element store, `b[0] = 5.0`, is no loop's in any window)
        while isinstance(target, gast.Subscript):
            target = target.value
        return isinstance(target, gast.Name) and target.id in self.objects

    def _simple(self, stmt):
        eff = effects(stmt, self.fn.kinds, self.fn.roots)
        written = eff.binds | targets(stmt)
        for n in eff.reads | eff.binds:  # an array a loop made, read or changed after it
            if n in self.objects:
                eff.mem.append(Access(frozenset({self.objects[n].root}), None, n in written))
                self.objects[n].post_reads = True
        late = any(conflict(i.eff, i.mem, eff, eff.mem) for i in self.items if i.phase != PRE)
        item = Item(stmt, len(self.items), POST if late else PRE, eff, self.note)
        path = view_path(stmt.value, self.paths, self.versions) if item.phase == PRE \
            and isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], gast.Name) else None
        self._rebound(eff.binds)
        if path is not None:
            self.paths[stmt.targets[0].id] = path
        self.items.append(item)

    def _rebound(self, names):
        for n in names:
            self.versions[n] = self.versions.get(n, 0) + 1
            self.paths.pop(n, None)

    def finish(self) -> int:
        """Drop trailing statements after the last LOOP one; how many statements it keeps."""
        while self.items and self.items[-1].phase != LOOP:
            self.items.pop()
        if not self.items:
            self.comps = []
            return 0
        last = self.items[-1].node
        return next(k for k, s in enumerate(self.taken) if s is last) + 1

    # --- what the forms need ---------------------------------------------------------

    def element(self, rank) -> Element:
        names = self.fn.indices(rank)

        def index():
            if rank == 1:
                return name(names[0])
            return gast.Tuple(elts=[name(n) for n in names], ctx=gast.Load())
        return Element(self.fn.kinds, rank, self._scalar_of, self.view, index)

    def _scalar_of(self, n):
        obj = self.objects.get(n)
        return None if obj is None else obj.scalar

    def view(self, node) -> str:
        node = copy.deepcopy(node)
        node.ctx = gast.Load()
        key = dump(node)
        if key not in self.views:
            self.views[key] = (self.fn.fresh("_v"), node)
        return self.views[key][0]

    def path(self, node):
        return view_path(node, self.paths, self.versions)

    # --- placing a LOOP statement --------------------------------------------------

    def _place(self, item) -> bool:
        if any(i.phase == POST and conflict(i.eff, i.mem, item.eff, item.mem)
               for i in self.items):
            return False
        summed = {i.reduce[1] for i in self.items if i.reduce is not None}
        if summed & (item.eff.reads | item.eff.binds):
            return False  # a sum is final only after its loop (window_forms.py)
        join = [o.comp for o in item_objects(item)]  # it reads their arrays element-wise
        for other in (i for i in self.items if i.phase == LOOP):
            if memory(other.eff.mem, item.eff.mem) == "aligned":
                join.append(other.comp)
        join = [c for c in self.comps if any(c is j for j in join)]
        if any(c.rank != item.comp.rank for c in join) or any(
                memory(i.eff.mem, item.eff.mem) == "misaligned" for c in join for i in c.items):
            return False
        item.pos = len(self.items)
        layout = [list(c.items) for c in self.comps]
        if join:
            at = [k for k, c in enumerate(self.comps) if c in join]
            merged = sorted([i for k in at for i in layout[k]] + [item], key=lambda i: i.pos)
            layout = [merged if k == at[0] else layer for k, layer in enumerate(layout)
                      if k == at[0] or k not in at]
        else:
            layout.append([item])
        moved = next(layer for layer in layout if any(i is item for i in layer))
        if not _ordered(layout, moved):
            return False
        self._commit(layout, join, item)
        return True

    def _commit(self, layout, join, item):
        comps = []
        for layer in layout:
            comp = next((i.comp for i in layer if i is not item and i.comp not in join),
                        None) or (join[0] if join else item.comp)
            comp.items = layer
            for i in layer:
                i.comp = comp
            comps.append(comp)
        for o in self.objs:
            if o.comp in join:
                o.comp = item.comp
        self.comps = comps
        self.external |= {a.id for a in item.arrays if isinstance(a, gast.Name)}
        if item.bind is not None:
            n, obj = item.bind
            if obj not in self.objs:
                self.objs.append(obj)
            obj.comp = item.comp
            self.objects[n] = obj
        self._rebound(item.eff.binds)
        self.items.append(item)


def targets(stmt) -> set:
    """The names whose arrays `stmt` writes into (`x[i] = ...`, `x += ...`)."""
    found = set()
    for target in getattr(stmt, "targets", None) or [getattr(stmt, "target", None)]:
        while isinstance(target, gast.Subscript):
            target = target.value
            if isinstance(target, gast.Name):
                found.add(target.id)
        if isinstance(stmt, gast.AugAssign) and isinstance(target, gast.Name):
            found.add(target.id)
    return found


def item_objects(item):
    """The Objs a LOOP item reads, updates or aliases."""
    return item.objs


def _ordered(layout, moved) -> bool:
    """Whether every LOOP statement of the component `moved` (the one that changed) keeps
    its order with the conflicting LOOP statements of the others (which already did)."""
    where = next(k for k, layer in enumerate(layout) if layer is moved)
    for k, layer in enumerate(layout):
        if k == where:
            continue
        for x in layer:
            for y in moved:
                if (x.pos > y.pos) == (k < where) and (names_conflict(x.eff, y.eff) or memory(
                        x.eff.mem, y.eff.mem) in ("aligned", "misaligned")):
                    return False
    return True


def names_conflict(a: Effects, b: Effects) -> bool:
    return bool(a.binds & (b.reads | b.binds) or b.binds & a.reads)


def memory(a, b) -> str:
    """How two statements' memory accesses relate: "none", "commuting" (accumulations
    only), "aligned" (through the same views) or "misaligned"."""
    relation = "none"
    for x in a:
        for y in b:
            if not (x.write or y.write) or not may_alias(x.roots, y.roots):
                continue
            if x.accumulate and y.accumulate:
                relation = "commuting" if relation == "none" else relation
            elif x.path is not None and x.path == y.path:
                relation = "aligned"
            else:
                return "misaligned"
    return relation


def conflict(a: Effects, a_mem, b: Effects, b_mem) -> bool:
    return names_conflict(a, b) or any((x.write or y.write) and may_alias(x.roots, y.roots)
                                       for x in a_mem for y in b_mem)


def view_path(value, paths, versions=None):
    """The path naming the memory of the view `value` (a name, or subscripts of one): its
    base array and each index, names in it tagged with how often the window rebound them
    (`versions`), so two paths are equal only where they name the same elements."""
    versions = versions or {}
    if isinstance(value, gast.Name):
        return paths.get(value.id, (f"{value.id}#{versions.get(value.id, 0)}",))
    if isinstance(value, gast.Subscript):
        base = view_path(value.value, paths, versions)
        if base is None:
            return None
        index = copy.deepcopy(value.slice)
        for node in walk(index):
            if isinstance(node, gast.Name):
                node.id = f"{node.id}#{versions.get(node.id, 0)}"
        return base + (dump(index),)
    return None
