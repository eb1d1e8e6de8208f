"""Checkpointed loops: the user's marker and the schedules generated code follows.

`checkpointed(range(n), snapshots=k)` (or `checkpointed(condition, snapshots=k)` as the
test of a `while`) is what users write; run as plain Python it is the range itself (the
condition's truth value), so the function runs unchanged without srcgrad.

A *plan* is an int64 array holding a schedule's whole state, so compiled code can carry
it: the steps whose starting state is kept in a snapshot (a stack of positions, each in
a slot of the snapshot stores), the steps [0, end) still to reverse, and where the live
state is. Two ways to fill it in the forward sweep:

- `revolve_plan(n, s)`: n known on entry. The snapshots of a binomial (Griewank-Walther
  "revolve") reversal: the first at step 0, each next one placed by `binomial_split`.
- `online_plan(s)`: n unknown (a `while`, a loop that breaks). Snapshots every d steps
  in at most half the slots; when those are full every other one is dropped and d
  doubles, so they cover the whole run at any length; the other half is left free.

The backward sweep then asks `next_action` again and again: advance the state by some
steps without recording, keep it in a slot, restore it from a slot, or take one step
with recording and reverse it at once (so the tape never holds more than one step),
until every step is reversed. A segment [a, end) with c snapshots (the one at a among
them) is reversed as a binomial schedule would: advance to a + m, keep that state, reverse
[a + m, end) with c - 1, then [a, a + m) with c again; with c = 1 every step is reached
by advancing from a. Every helper is plain Python that numba compiles where it is called.
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from ..errors import SrcgradError

ADVANCE, KEEP, RESTORE, STEP, DONE = 1, 2, 3, 4, 0  # next_action's kinds

_S, _TOP, _END, _CUR, _D, _CAP, _CURSOR, _ONLINE, _N, _POS = range(10)  # plan fields, then arrays


def checkpointed(loop, snapshots=None):
    """Mark a loop for checkpointing: `for i in srcgrad.checkpointed(range(n), snapshots=20):`
    or `while srcgrad.checkpointed(err > tol, snapshots=20):`.

    srcgrad's gradients keep at most `snapshots` copies of the loop's state and
    recompute the steps between them in the backward sweep (memory bounded by the
    snapshot count, not the trip count). Run as Python it returns `loop` (a range) or
    the condition's truth value, so the function runs unchanged.
    """
    check_snapshots(snapshots)
    if isinstance(loop, range):
        return loop
    if isinstance(loop, (bool, np.bool_)):
        return bool(loop)
    raise TypeError(f"srcgrad.checkpointed takes range(...) (in a for loop) or the condition "
                    f"of a while loop, not {type(loop).__name__}")


def check_snapshots(snapshots) -> None:
    if isinstance(snapshots, (bool, np.bool_)) or not isinstance(snapshots, (int, np.integer)):
        raise TypeError(f"srcgrad.checkpointed: snapshots must be a whole number, "
                        f"not {snapshots!r}")
    if snapshots < 1:
        raise ValueError(f"srcgrad.checkpointed: snapshots must be at least 1, not {snapshots}")


checkpointed.srcgrad_checkpoint = True  # the front end recognizes the marker by this


@register_jitable
def _new_plan(s, online):
    plan = np.zeros(_POS + 3 * s, np.int64)
    plan[_S], plan[_TOP], plan[_CUR], plan[_D] = s, -1, -1, 1
    plan[_CAP] = max(1, s - s // 2) if online else s
    plan[_ONLINE] = 1 if online else 0
    for j in range(s):  # the free slots, popped from the end: slot 0 first
        plan[_POS + 2 * s + j] = s - 1 - j
    return plan


@register_jitable
def _push(plan, position):
    """Keep `position` in a free slot; the slot."""
    s = plan[_S]
    free = plan[_POS + 2 * s: _POS + 3 * s]
    nfree = s - (plan[_TOP] + 1)
    slot = free[nfree - 1]
    plan[_TOP] += 1
    plan[_POS + plan[_TOP]] = position
    plan[_POS + s + plan[_TOP]] = slot
    return slot


@register_jitable
def _pop(plan):
    s = plan[_S]
    nfree = s - (plan[_TOP] + 1)
    plan[_POS + 2 * s + nfree] = plan[_POS + s + plan[_TOP]]
    plan[_TOP] -= 1


@register_jitable
def binomial_split(steps, c):
    """Where to keep the next snapshot in a segment of `steps` steps reversed with c
    snapshots (the one at its start among them): the offset m of the binomial schedule,
    the largest with [0, m) reversible in r - 1 sweeps with c snapshots and [m, steps) in
    r sweeps with c - 1, r the fewest sweeps that reverse `steps` steps with c."""
    r, beta = 0, 1  # beta = C(c + r, c), the most steps c snapshots reverse in r sweeps
    while beta < steps:
        r += 1
        beta = beta * (c + r) // r
    left = beta * r // (c + r)  # C(c + r - 1, c): most steps of [0, m) in r - 1 sweeps
    return max(1, min(left, steps - 1))


@register_jitable
def revolve_plan(n, s):
    """The plan of a loop of n steps with s snapshots: the forward sweep's snapshots."""
    if s < 1:
        raise SrcgradError("srcgrad.checkpointed: snapshots must be at least 1")
    plan = _new_plan(s, False)
    plan[_END] = n
    if n == 0:
        return plan
    a = 0
    _push(plan, 0)
    while s - (plan[_TOP] + 1) >= 1 and n - a >= 3:
        a += binomial_split(n - a, s - plan[_TOP])
        _push(plan, a)
    plan[_CURSOR] = 0
    return plan


@register_jitable
def online_plan(s):
    """The plan of a loop whose trip count is unknown: snapshots are placed as it runs."""
    if s < 1:
        raise SrcgradError("srcgrad.checkpointed: snapshots must be at least 1")
    return _new_plan(s, True)


@register_jitable
def snapshot_due(plan, k):
    """Whether the forward sweep keeps the state before step k."""
    if plan[_ONLINE] == 0:
        c = plan[_CURSOR]
        return c <= plan[_TOP] and plan[_POS + c] == k
    d = plan[_D]
    if k % d != 0:
        return False
    if plan[_TOP] + 1 == plan[_CAP]:  # full: keep every other snapshot, twice as far apart
        _thin(plan)
        return k % (2 * d) == 0
    return True


@register_jitable
def _thin(plan):
    """Keep the snapshots at even stack places (moved down in place: place j goes to j // 2,
    never ahead of a place still to be read), free the others' slots, double d."""
    s, count = plan[_S], plan[_TOP] + 1
    nfree = s - count
    for j in range(count):
        slot = plan[_POS + s + j]
        if j % 2 == 0:
            plan[_POS + j // 2], plan[_POS + s + j // 2] = plan[_POS + j], slot
        else:
            plan[_POS + 2 * s + nfree] = slot
            nfree += 1
    plan[_TOP] = (count + 1) // 2 - 1
    plan[_D] *= 2


@register_jitable
def take_slot(plan, k):
    """The slot that keeps the state before step k (snapshot_due said so)."""
    if plan[_ONLINE] == 0:
        c = plan[_CURSOR]
        plan[_CURSOR] = c + 1
        return plan[_POS + plan[_S] + c]
    return _push(plan, k)


@register_jitable
def finish_plan(plan, steps):
    """After the forward sweep ran `steps` steps: reverse [0, steps); no live state."""
    plan[_END], plan[_N] = steps, steps
    plan[_CUR] = -1


@register_jitable
def next_action(plan):
    """(kind, argument): ADVANCE by n steps, KEEP the state in slot j, RESTORE it from
    slot j, STEP: record and reverse step k, or DONE."""
    s = plan[_S]
    while True:
        end = plan[_END]
        if end <= 0:
            return DONE, 0
        top = plan[_TOP]
        a = plan[_POS + top]
        if a >= end:
            _pop(plan)
            continue
        cur = plan[_CUR]
        if cur == end - 1:
            plan[_CUR], plan[_END] = -1, end - 1
            return STEP, end - 1
        if cur < a or cur >= end:
            plan[_CUR] = a
            return RESTORE, plan[_POS + s + top]
        if cur > a:  # advanced to where a snapshot goes
            return KEEP, _push(plan, cur)
        c = s - top  # snapshots for [a, end): the one at a and the free ones
        if c >= 2 and end - a >= 3:
            m = a + binomial_split(end - a, c)
            if m < end - 1:
                plan[_CUR] = m
                return ADVANCE, m - a
        plan[_CUR] = end - 1
        return ADVANCE, end - 1 - a


@register_jitable
def plan_position(plan):
    """The step whose starting state is live (after RESTORE)."""
    return plan[_CUR]


@register_jitable
def first_slot(plan):
    """The slot holding the state before the loop."""
    return plan[_POS + plan[_S]]


def state_bytes(x):
    """Bytes a snapshot of x takes (8 for a number)."""
    return x.nbytes if isinstance(x, np.ndarray) else 8


@overload(state_bytes)
def _state_bytes(x):
    if isinstance(x, types.Array):
        return lambda x: x.nbytes
    return lambda x: 8


@register_jitable
def budget_snapshots(limit, loops, nbytes, steps, where):
    """The snapshot count a loop gets from a memory_limit of `limit` bytes shared by `loops`
    checkpointed loops: as many states of `nbytes` bytes as its share holds, no more than
    the steps (when known: >= 0); an error naming the loop (`where`) and the least
    memory_limit that works if not even one fits."""
    share = limit // loops
    if nbytes > share:
        raise SrcgradError("srcgrad: memory_limit=" + str(limit) + " bytes cannot be met: "
                           "one snapshot of the state of the checkpointed loop at " + where
                           + " takes " + str(nbytes) + " bytes, more than its share ("
                           + str(share) + " bytes, the limit shared by " + str(loops)
                           + " checkpointed loops); memory_limit must be at least "
                           + str(nbytes * loops) + " bytes")
    fit = share // max(nbytes, 1)
    return max(1, min(fit, steps)) if steps >= 0 else max(1, fit)


@register_jitable
def loop_ran(plan):
    """Whether the loop ran a step (else no snapshot was kept)."""
    return plan[_N] > 0


@register_jitable
def truncate(items, length):
    """Drop the items a list gained after a snapshot kept its length."""
    while len(items) > length:
        items.pop()


def restored(store, slot):
    """A snapshot's value, a copy of its own for an array (the steps may write into it)."""
    value = store[slot]
    return value.copy() if isinstance(value, np.ndarray) else value


@overload(restored)
def _restored(store, slot):
    if isinstance(store, types.Array) and store.ndim > 1:
        return lambda store, slot: store[slot].copy()
    return lambda store, slot: store[slot]


def add_cotangents(total, g):
    """`total + g` for cotangents: item by item for a list's (whose items' cotangents are its
    items; `+` would join the lists), updating `total` in place; else a new sum."""
    if isinstance(total, list):
        for j in range(len(total)):
            total[j] = add_cotangents(total[j], g[j])
        return total
    return total + g


@overload(add_cotangents)
def _add_cotangents(total, g):
    if isinstance(total, types.List):
        def impl(total, g):
            for j in range(len(total)):
                total[j] = add_cotangents(total[j], g[j])
            return total
        return impl
    return lambda total, g: total + g


def cotangent_dot(x, ct):
    """The sum of x * ct: a checkpointed step's output, whose gradient wrt x is ct."""
    return np.sum(x * ct) if isinstance(x, np.ndarray) else x * ct


@overload(cotangent_dot)
def _cotangent_dot(x, ct):
    if isinstance(x, types.Array):
        return lambda x, ct: np.sum(x * ct)
    return lambda x, ct: x * ct
