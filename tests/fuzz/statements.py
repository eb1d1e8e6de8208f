"""The statement generator: `ProgramGen.block(scope, count, depth)` draws statements.

Each statement kind is one method (`new_var`, `reassign`, `aug`, `write`,
`fresh_array`, `view_var`, `for_loop`, `while_loop`, `list_build`, `append`,
`if_stmt`, `jump`, `early_return`) that reads and updates the `Scope`, so
that what it draws is valid NumPy: indices in range, shapes that broadcast,
`np.empty` arrays filled before they are read, no writes into an array while
a view of it is bound to a name (srcgrad's names for slices hold copies), and
second names (`u = x`, `for t in x`) only of arrays that are never written
into, except for a few deliberate ones (srcgrad must reject those or match
NumPy). `programs.py` describes the programs this produces.
"""
from __future__ import annotations

from .exprs import ExprGen, Var, fnum
from .tree import (Assign, Attr, AugAssign, Bin, BoolOp, Break, Call, Compare, Continue, ExprStmt, For,
                   If, Index, ListLit, Method, Name, Num, Return, Slice, TupleLit, Unary, While,
                   alias_bases, fresh, stmt_values, view_bases)


def _dims(shape):
    return Num(shape[0]) if len(shape) == 1 else TupleLit([Num(k) for k in shape])


class ProgramGen(ExprGen):
    # ------------------------------------------------------------------ blocks
    def block(self, sc, count, depth):
        body = []
        for _ in range(count):
            body += self.stmt(sc, depth)
            if isinstance(body[-1], (Return, Break, Continue)):
                break
        return body

    def stmt(self, sc, depth):
        loops_ok = sc.loops < sc.max_loops
        jump = sc.jumps_ok and sc.loops > 0
        nest = [4, 2, 1, 0][min(depth, 3)]  # compound statements get rarer with depth
        opts = [(6, self.new_var), (5 if sc.floats() else 0, self.reassign), (3, self.aug),
                (4 if any(sc.writable(v) for v in sc.arrays()) else 0, self.write),
                (3, self.fresh_array), (1 if sc.arrays() else 0, self.view_var),
                (nest + 1 if loops_ok else 0, self.for_loop), (nest // 2 if loops_ok else 0, self.while_loop),
                (nest, self.if_stmt), (1 if loops_ok and depth < 2 else 0, self.list_build),
                (1 if sc.lists() else 0, self.append), (2 if jump else 0, self.jump),
                (1 if sc.jumps_ok and depth > 0 else 0, self.early_return)]
        return self.draw.weighted(opts)(sc, depth)

    def new_name(self, sc, shape):
        return sc.namer({0: "s", 1: "v", 2: "m"}[len(shape)])

    def pick_shape(self, sc):
        shapes = self.array_shapes(sc)
        return self.draw.weighted([(9, ())] + [(6 if s == (self.N,) else 2, s) for s in shapes])

    # ------------------------------------------------------------ assignments
    def new_var(self, sc, depth):
        shape = self.pick_shape(sc)
        value = self.expr(sc, shape, self.draw.integer(1, 3))
        if isinstance(value, Name) and self.draw.chance(60):  # fewer plain second names
            value = self.expr(sc, shape, 2)
        name = self.new_name(sc, shape)
        bases, aliases = view_bases(value), alias_bases(value)
        if aliases and self.draw.chance(3):
            # A second name that the generator does not protect: srcgrad must reject writes
            # into the array or match NumPy, which updates both names.
            bases = tuple(b for b in bases if b not in aliases)
        elif not sc.alias(aliases):
            value = Method(value, "copy", shape=shape)
            bases = ()
        sc.add(Var(name, "float", shape, owned=not view_bases(value), view_of=bases, deps=sc.deps(value)))
        return [Assign(Name(name, shape=shape), value)]

    def reassign(self, sc, depth):
        v = self.draw.choice(sc.floats())
        me = Name(v.name, shape=v.shape)
        kind = self.draw.integer(0, 3)
        if kind == 0:
            value = self.expr(sc, v.shape, self.draw.integer(1, 3))
        elif kind == 1:
            op = self.draw.choice(["+", "*", "-"])
            value = Bin(op, me, self.expr(sc, self.draw.choice([v.shape, ()]), 2), shape=v.shape)
        elif kind == 2:
            inner = Bin(self.draw.choice(["+", "*"]), me, self.expr(sc, v.shape, 1), shape=v.shape)
            value = Call(self.draw.choice(["np.sin", "np.tanh", "np.cos"]), [inner], shape=v.shape)
        else:  # the y = np.sin((y + 1.0) * x)
            inner = Bin("+", me, fnum(self.draw.choice([1.0, 0.5])), shape=v.shape)
            arg = Bin("*", inner, self.expr(sc, self.draw.choice([v.shape, ()]), 1), shape=v.shape)
            value = Call(self.draw.choice(["np.sin", "np.tanh"]), [arg], shape=v.shape)
        value = fresh(value)
        v.deps = sc.deps(value) | (v.deps if sc.loops else frozenset())
        if v.shape and not v.view_of:
            v.owned = True
        return [Assign(me, value)]

    def aug(self, sc, depth):
        targets = sc.floats(()) + [v for v in sc.arrays() if sc.writable(v)]
        if not targets:
            return self.new_var(sc, depth)
        v = self.draw.choice(targets)
        v.written = v.written or bool(v.shape)
        op = self.draw.weighted([(4, "+"), (2, "-"), (2, "*")])
        value = self.expr(sc, self.draw.choice([v.shape, ()]), self.draw.integer(1, 2))
        v.deps = v.deps | sc.deps(value)
        return [AugAssign(Name(v.name, shape=v.shape), op, value)]

    def write(self, sc, depth, target=None):
        v = target or self.draw.choice([v for v in sc.arrays() if sc.writable(v)])
        v.written = True
        a = Name(v.name)
        if len(v.shape) == 1:
            L = v.shape[0]
            kind = self.draw.weighted([(4, "elem"), (3, "elem_aug"), (2, "slice"), (1, "slice_aug"),
                                       (1, "all"), (1, "mask")])
            if kind in ("elem", "elem_aug"):
                tgt, shape = Index(a, [self.index(sc, L)], shape=()), ()
            elif kind in ("slice", "slice_aug"):
                k = self.draw.integer(1, L)
                tgt, shape = Index(a, [self.slice(L, k)], shape=(k,)), self.draw.choice([(k,), ()])
            elif kind == "all":
                tgt, shape = Index(a, [Slice()], shape=v.shape), v.shape
            else:
                mask = Compare(self.draw.choice([">", "<"]), Name(v.name), self.const())
                tgt, shape = Index(a, [mask], shape=None), ()
        else:
            M, N = v.shape
            kind = self.draw.weighted([(3, "elem"), (2, "elem_aug"), (2, "row"), (1, "col")])
            if kind in ("elem", "elem_aug"):
                tgt, shape = Index(a, [self.index(sc, M), self.index(sc, N)], shape=()), ()
            elif kind == "row":
                items = [self.index(sc, M)] + ([Slice()] if self.draw.chance(50) else [])
                tgt, shape = Index(a, items, shape=(N,)), self.draw.choice([(N,), ()])
            else:
                tgt, shape = Index(a, [Slice(), self.index(sc, N)], shape=(M,)), (M,)
        value = self.expr(sc, shape, self.draw.integer(1, 2))
        v.deps = v.deps | sc.deps(value)
        if kind.endswith("_aug") or (kind == "row" and self.draw.chance(25)):
            return [AugAssign(tgt, self.draw.weighted([(3, "+"), (1, "-"), (1, "*")]), value)]
        return [Assign(tgt, value)]

    def fresh_array(self, sc, depth):
        shapes = self.array_shapes(sc)
        shape = self.draw.weighted([(5 if s == (self.N,) else 2, s) for s in shapes])
        name = self.new_name(sc, shape)
        same = sc.floats(shape)
        kind = self.draw.weighted([(4, "zeros"), (2, "ones"), (2 if same else 0, "copy"), (3, "empty"),
                                   (1 if same else 0, "zeros_like")])
        if kind == "copy":
            value = Method(Name(self.draw.choice(same).name), "copy", shape=shape)
        elif kind == "zeros_like":
            value = Call("np.zeros_like", [Name(self.draw.choice(same).name)], shape=shape)
        else:
            value = Call("np." + kind, [_dims(shape)], shape=shape)
        var = Var(name, "float", shape, owned=True, written=kind == "empty")
        out = [Assign(Name(name, shape=shape), value)]
        var.deps = sc.deps(value)
        if kind == "empty":  # filled by expressions that cannot read it yet
            out += self.fill(sc, var, depth)
            var.deps = sc.deps(*[stmt_values(st) for st in out])
            sc.add(var)
            return out
        sc.add(var)
        for _ in range(self.draw.integer(0, 2)):
            out += self.write(sc, depth, var)
        return out

    def fill(self, sc, var, depth):
        """Statements that write every element of the fresh np.empty array `var`."""
        a, shape = Name(var.name), var.shape
        L = shape[0]
        kind = self.draw.integer(0, 2)
        if kind == 0:  # a loop over the first axis
            inner = sc.child(L)
            i = "ijk"[sc.loops] if sc.loops < 3 else sc.namer("i")
            inner.add(Var(i, "int", lo=0, hi=L - 1))
            items = [Name(i)] + ([Slice()] if len(shape) == 2 else [])
            body = [Assign(Index(a, items, shape=shape[1:]), self.expr(inner, shape[1:], 2))]
            sc.merge(inner)
            return [For([i], Call("range", [Call("len", [a])]), body, L, [("index", None)])]
        if kind == 1 or L == 1:
            items = [Slice()] * len(shape)
            return [Assign(Index(a, items, shape=shape), self.expr(sc, shape, 2))]
        k = self.draw.integer(1, L - 1)
        first = Assign(Index(a, [Slice(None, Num(k))], shape=(k,) + shape[1:]),
                       self.expr(sc, self.draw.choice([(k,) + shape[1:], ()]), 2))
        second = Assign(Index(a, [Slice(Num(k), None)], shape=(L - k,) + shape[1:]),
                        self.expr(sc, (L - k,) + shape[1:] if len(shape) == 1 else (), 2))
        return [first, second]

    def view_var(self, sc, depth):
        v = self.draw.choice(sc.arrays())
        kind = self.draw.integer(0, 2)
        if kind == 0 or (kind == 1 and len(v.shape) == 2):
            shape = v.shape
            value = Name(v.name, shape=shape)
        elif len(v.shape) == 2:
            shape = v.shape[1:]
            value = Index(Name(v.name), [self.index(sc, v.shape[0])], shape=shape)
        else:
            k = self.draw.integer(1, v.shape[0])
            shape = (k,)
            value = Index(Name(v.name), [self.slice(v.shape[0], k)], shape=shape)
        name = self.new_name(sc, shape)
        sc.add(Var(name, "float", shape, owned=False, view_of=(v.name,), deps=v.deps))
        return [Assign(Name(name, shape=shape), value)]

    # ------------------------------------------------------------------ loops
    def loop_body(self, sc, inner, depth, extra=()):
        body = list(extra) + self.block(inner, self.draw.integer(1, 3), depth + 1)
        sc.merge(inner)
        return body

    def for_loop(self, sc, depth):
        seqs = [v for v in sc.arrays() if not v.view_of]
        lists = [v for v in sc.lists() if v.hi > 0]
        n = sc.vars.get("n")
        kind = self.draw.weighted([(4, "range"), (2 if n else 0, "range_n"), (2 if sc.arrays() else 0, "range_len"),
                                   (1 if sc.arrays() else 0, "range_1"), (3 if seqs else 0, "array"), (1 if seqs else 0, "enum"),
                                   (1 if seqs else 0, "zip"), (1 if lists else 0, "list")])
        i = "ijk"[sc.loops]
        t = "t" if sc.loops == 0 else f"t{sc.loops + 1}"
        if kind.startswith("range"):
            if kind == "range":
                trips = self.draw.integer(0, 4)
                it, lo, hi = Call("range", [Num(trips)]), 0, trips - 1
            elif kind == "range_n":
                trips = n.hi
                it, lo, hi = Call("range", [Name("n")]), 0, n.hi - 1
            else:
                v = self.draw.choice(sc.arrays())
                L = v.shape[0]
                ln = Call("len", [Name(v.name)]) if self.draw.chance(70) else \
                    Index(Attr(Name(v.name), "shape"), [Num(0)])
                start = 1 if kind == "range_1" else 0
                it = Call("range", ([Num(1)] if start else []) + [ln])
                trips, lo, hi = L - start, start, L - 1
            inner = sc.child(trips)
            inner.add(Var(i, "int", lo=lo, hi=hi))
            return [For([i], it, self.loop_body(sc, inner, depth), trips, [("index", None)])]
        if kind == "list":
            v = self.draw.choice(lists)
            inner = sc.child(v.hi)
            inner.iterated = sc.iterated | {v.name}  # appending to it would never end
            inner.add(Var(t, "float", v.shape, owned=False, view_of=(v.name,) if v.shape else (), deps=v.deps))
            src = Index(Name(v.name), [Num(0)], shape=v.shape)
            return [For([t], Name(v.name), self.loop_body(sc, inner, depth), v.hi, [("element", src)])]
        v = self.draw.choice(seqs)
        L, eshape = v.shape[0], v.shape[1:]
        if not eshape and not self.draw.chance(8) and not sc.alias([v.name]):
            kind = "range_len_of"  # iterating over an array the function writes into: index it
        if kind == "range_len_of":
            inner = sc.child(L)
            inner.add(Var(i, "int", lo=0, hi=L - 1))
            return [For([i], Call("range", [Call("len", [Name(v.name)])]), self.loop_body(sc, inner, depth),
                         L, [("index", None)])]
        inner = sc.child(L)
        elem = Index(Name(v.name), [Num(0)], shape=eshape)
        inner.add(Var(t, "float", eshape, owned=False, view_of=(v.name,) if eshape else (), deps=v.deps))
        if kind == "array":
            targets, it, binds = [t], Name(v.name), [("element", elem)]
        elif kind == "enum":
            inner.add(Var(i, "int", lo=0, hi=L - 1))
            targets, it, binds = [i, t], Call("enumerate", [Name(v.name)]), [("index", None), ("element", elem)]
        else:
            w = self.draw.choice([u for u in sc.arrays() if u.shape[0] == L])
            if not w.shape[1:] and not sc.alias([w.name]):
                w = v
            u = "u" if sc.loops == 0 else f"u{sc.loops + 1}"
            inner.add(Var(u, "float", w.shape[1:], owned=False, view_of=(w.name,) if w.shape[1:] else (),
                          deps=w.deps))
            targets, it = [t, u], Call("zip", [Name(v.name), Name(w.name)])
            binds = [("element", elem), ("element", Index(Name(w.name), [Num(0)], shape=w.shape[1:]))]
        return [For(targets, it, self.loop_body(sc, inner, depth), L, binds)]

    def while_loop(self, sc, depth):
        cap = self.draw.integer(1, 6)
        it = "it" if sc.loops == 0 else f"it{sc.loops + 1}"
        out = [Assign(Name(it), Num(0))]
        scalars = sc.floats(())
        if scalars and self.draw.chance(50):
            w = self.draw.choice(scalars).name
        else:
            w = sc.namer("w")
            out.append(Assign(Name(w, shape=()), fnum(self.draw.choice([0.0, 0.5, 1.0]))))
            sc.add(Var(w, "float", ()))
        sc.add(Var(it, "int", lo=0, hi=cap, counter=True))
        test = Compare(self.draw.choice(["<", "<="]), Name(w), fnum(self.draw.choice([1.0, 0.8, 2.0, 1.5])))
        shape = self.draw.integer(0, 4)
        if shape == 1:
            test = BoolOp("or", [test, self.cond(sc, 0)])
        elif shape == 2:
            test = BoolOp("and", [test, self.cond(sc, 0)])
        elif shape == 3:
            test = Unary("not", Compare(">", Name(w), fnum(self.draw.choice([1.0, 2.0]))))
        test = BoolOp("and", [test, Compare("<", Name(it), Num(cap))])
        inner = sc.child(cap)
        upd = self.draw.integer(0, 3)
        e = self.expr(inner, (), 1)
        wn = Name(w, shape=())
        update = [AugAssign(wn, "+", Bin("**", e, Num(2), shape=())),
                  Assign(wn, Bin("+", wn, Bin("*", fnum(0.3), Call("np.cos", [e], shape=()), shape=()),
                                 shape=())),
                  AugAssign(wn, "+", Bin("+", Num(0.2), Call("np.abs", [e], shape=()), shape=())),
                  Assign(wn, Call("np.tanh", [Bin("+", wn, e, shape=())], shape=()))][upd]
        body = self.block(inner, self.draw.integer(0, 2), depth + 1)
        pos = self.draw.integer(0, len(body) - (1 if body and isinstance(body[-1], (Break, Continue, Return)) else 0))
        body.insert(pos, update)
        inner.vars[w].deps = inner.vars[w].deps | inner.deps(e)
        sc.merge(inner)
        return out + [While(test, [AugAssign(Name(it), "+", Num(1))] + body, cap)]

    def list_build(self, sc, depth):
        shape = self.draw.choice([(), (self.N,)])
        name = sc.namer("lst")
        init = [] if self.draw.chance(70) else [fresh(self.expr(sc, shape, 1))]
        trips = self.draw.integer(1, 4)
        out = [Assign(Name(name), ListLit(init))]
        inner = sc.child(trips)
        inner.jumps_ok = False
        i = "ijk"[sc.loops]
        inner.add(Var(i, "int", lo=0, hi=trips - 1))
        body = self.block(inner, self.draw.integer(0, 2), depth + 1)
        item = fresh(self.expr(inner, shape, 2))
        body.append(ExprStmt(Method(Name(name), "append", [item])))
        sc.merge(inner)
        sc.add(Var(name, "list", shape, lo=len(init) + trips, hi=len(init) + trips * sc.trips,
                   deps=sc.deps(*init) | inner.deps(item)))
        return out + [For([i], Call("range", [Num(trips)]), body, trips, [("index", None)])]

    def append(self, sc, depth):
        lists = [v for v in sc.lists() if v.name not in sc.iterated]
        if not lists:
            return self.new_var(sc, depth)
        v = self.draw.choice(lists)
        item = fresh(self.expr(sc, v.shape, 2))
        stmt = ExprStmt(Method(Name(v.name), "append", [item]))
        v.deps = v.deps | sc.deps(item)
        v.lo += 1 if sc.definite else 0
        v.hi += sc.trips
        return [stmt]

    # --------------------------------------------------------------- branches
    def if_stmt(self, sc, depth):
        test = self.cond(sc)
        a = sc.child()
        body = self.block(a, self.draw.integer(1, 2), depth + 1)
        sc.merge(a)  # the other branch sees what this one writes into and aliases
        kind = self.draw.integer(0, 2)
        b = sc.child()
        if kind == 0:
            orelse = []
        elif kind == 1:
            orelse = self.block(b, self.draw.integer(1, 2), depth + 1)
        else:
            orelse = [If(self.cond(b), self.block(b, self.draw.integer(1, 2), depth + 1))]
        sc.merge(b)
        return [If(test, body, orelse)]

    def jump(self, sc, depth):
        kind = self.draw.weighted([(3, Break), (3, Continue), (1, "bare_break"), (1, "bare_continue")])
        if isinstance(kind, str):
            return [Break() if kind == "bare_break" else Continue()]
        return [If(self.cond(sc), [kind()])]

    def early_return(self, sc, depth):
        return [If(self.cond(sc), [Return(self.expr(sc, sc.ret_shape, 2))])]

    def result(self, sc, shape):
        """The final returned value: the most recent values combined (reduced for `f`)."""
        if shape != ():
            return self.expr(sc, shape, 2)
        recent = [v for v in sc.vars.values() if v.kind in ("float", "list") and (v.kind != "list" or v.lo)]
        recent = recent[::-1]
        chosen = recent[:self.draw.integer(1, 3)]
        if not any(v.deps & sc.wrt for v in chosen):  # make the result depend on wrt
            chosen += [v for v in recent if v.deps & sc.wrt][:1]
        terms = []
        for v in chosen:
            if v.kind == "list":
                if v.lo < 1:
                    continue
                e = Index(Name(v.name), [self.list_index(v)], shape=v.shape)
            else:
                e = Name(v.name, shape=v.shape)
            if e.shape:
                e = Call(self.draw.choice(["np.sum", "np.sum", "np.mean", "np.max"]), [e], shape=())
            if terms and self.draw.chance(40):
                e = Bin("*", self.const(), e, shape=())
            terms.append(e)
        out = terms[0] if terms else self.expr(sc, (), 2)
        for t in terms[1:]:
            out = Bin("+", out, t, shape=())
        return out
