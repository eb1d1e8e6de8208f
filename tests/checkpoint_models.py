"""Loops checkpointed with srcgrad.checkpointed, for tests/test_checkpoint.py.

Each model has an unbounded twin made by test_checkpoint.py (the same source with the
marker removed), so the checkpointed gradient is compared with the ordinary one.
"""
import numpy as np

import srcgrad

SNAPSHOTS = 3


def stencil(u, n):
    for step in srcgrad.checkpointed(range(n), snapshots=3):
        lap = np.zeros_like(u)
        lap[1:-1] = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u = u + 0.1 * np.sin(lap) + 0.01 * step
    return np.sum(u * u)


def oscillator(x, v, k, n):
    for i in srcgrad.checkpointed(range(1, n, 2), snapshots=SNAPSHOTS):
        a = -k * np.sin(x)
        v = v + 0.1 * a
        x = x + 0.1 * v
    return np.sum(x * x) + np.sum(v) * k


def adaptive(x, rate):
    t = 0.0
    steps = 0
    while srcgrad.checkpointed(t < 1.0, snapshots=4):
        h = 0.05 + 0.02 * np.tanh(np.sum(x))
        x = x - h * rate * np.sin(x)
        t = t + h
        steps += 1
    return np.sum(x ** 2) + 0.0 * steps


def early_exit(x, c):
    k = 0
    s = 0.0
    while srcgrad.checkpointed(k < 40 and s < 3.0, snapshots=2):
        s = s + np.sum(np.sin(x * c)) ** 2 * 0.1
        x = x * 0.95 + 0.01 * c
        if s > 2.5:
            break
        k += 1
    return s + np.sum(x)


def counted_break(x, n):
    total = 0.0
    for i in srcgrad.checkpointed(range(n), snapshots=2):
        x = np.cos(x) + 0.5 * x
        total = total + np.sum(x) * i
        if total > 30.0:
            break
    return total


def trajectory(u, n):
    hist = np.zeros((n, u.shape[0]))
    for i in srcgrad.checkpointed(range(n), snapshots=3):
        u = np.tanh(u) * 1.1
        hist[i] = u
    return np.sum(hist ** 2)


def _rhs(u, w):
    return np.tanh(w * u)


def nested(u, w, n):
    for i in srcgrad.checkpointed(range(n), snapshots=2):
        for j in range(3):
            u = u + 0.1 * _rhs(u, w)
    return np.sum(u * w)


def one_snapshot(x, n):
    s = 0.0
    for i in srcgrad.checkpointed(range(n), snapshots=1):
        x = np.sin(x) + 0.1
        s = s + x * x
    return s


def empty(u, n):
    w = u * 2.0
    for i in srcgrad.checkpointed(range(n), snapshots=2):
        w = np.sin(w)
    return np.sum(w * u)


def rolled(u, n):
    for step in srcgrad.checkpointed(range(n), snapshots=2):
        u = np.sin(u) * 1.01 + 0.1 * u[::-1]
    return u


def calls_checkpointed(u, n):
    return 2.0 * stencil(u, n)


def softclip(x):
    return np.tanh(x)


def _softclip_vjp(g, ans, x):
    return g * (1.0 - ans * ans)


srcgrad.defvjp(softclip, _softclip_vjp)


def with_custom_rule(x, n):
    for i in srcgrad.checkpointed(range(n), snapshots=2):
        x = softclip(x * 1.5) + 0.1
    return np.sum(x)


def bad_zero(x):
    for i in srcgrad.checkpointed(range(3), snapshots=0):
        x = x * 2
    return x


def bad_fraction(x):
    for i in srcgrad.checkpointed(range(3), snapshots=1.5):
        x = x * 2
    return x


def bad_sequence(x):
    for v in srcgrad.checkpointed([1.0, 2.0], snapshots=2):
        x = x * v
    return x


def bad_outside(x):
    r = srcgrad.checkpointed(range(3), snapshots=2)
    return x + len(r)


def bad_list(x):
    hs = [x]
    for i in srcgrad.checkpointed(range(3), snapshots=2):
        x = x * hs[-1]
        hs.append(x)
    return x + hs[0]


def bad_unset(x):
    for i in srcgrad.checkpointed(range(3), snapshots=2):
        if i > 0:
            x = prev * 2
        prev = x
    return x


def bad_nested(x):
    for j in range(2):
        x = stencil(x, 3)
    return x


def two_loops(u, n):
    for step in range(n):
        lap = np.zeros_like(u)
        lap[1:-1] = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u = u + 0.1 * np.sin(lap)
    t = 0.0
    while t < 1.0:
        u = u * 0.99 + 0.01 * np.cos(u)
        t = t + 0.125
    return np.sum(u * u)


def appended(x, n):
    hs = []
    for i in srcgrad.checkpointed(range(n), snapshots=2):
        x = np.sin(x) * 1.1
        hs.append(x * 2.0)
        hs.append(np.cos(x))
    s = 0.0
    for h in hs:
        s = s + np.sum(h * h)
    return s + hs[0][1]


def appended_to_held(x, n):
    hs = [x * 1.0]
    for i in srcgrad.checkpointed(range(n), snapshots=2):
        x = np.sin(x) * 1.1
        hs.append(x * 2.0)
    s = 0.0
    for h in hs:
        s = s + np.sum(h * h)
    return s + hs[1][1]


def bad_variable_after(u, n):
    for i in srcgrad.checkpointed(range(n), snapshots=2):
        u = u * 1.1
    return np.sum(u) * i


def dead_loop(x, n):  # nothing reads what the loop computes: no state (fuzz)
    for i in srcgrad.checkpointed(range(n), snapshots=2):
        s = np.sin(x)
    return np.sum(x * x)


def counter_state(x, n):  # the only state is a counter: no cotangent crosses the loop (fuzz)
    k = 0
    for i in srcgrad.checkpointed(range(n), snapshots=2):
        k = k + 1
    return np.sum(x * x) * k


def reads_a_list(x, n):  # a list from before the loop read in it: its cotangent item by item
    ws = [x * 1.0, np.cos(x)]
    for i in srcgrad.checkpointed(range(n), snapshots=2):
        x = np.sin(x) * ws[i % 2]
    return np.sum(x) + np.sum(ws[1])


def names_reused(x, n):  # i and t assigned again after the loop before any read (fuzz)
    for i in srcgrad.checkpointed(range(n), snapshots=2):
        t = np.sin(x)
        x = x * 0.9 + t
    for i in range(2):
        t = x * 0.5
        x = x + t * i
    return np.sum(x)


def returns_then_loops(x, n):  # the second loop is in desugar's `if not _ret:` (memory_limit)
    for i in range(n):
        x = x * 1.1
    if np.sum(x) > 50.0:
        return np.sum(x)
    for i in range(n):
        x = np.sin(x) + 0.1
    return np.sum(x * x)


def bad_after_return(x, n):
    for i in range(n):
        if np.sum(x) > 50.0:
            return np.sum(x)
    for i in srcgrad.checkpointed(range(n), snapshots=2):
        x = np.sin(x)
    return np.sum(x)


def bad_return(x, n):
    for i in srcgrad.checkpointed(range(n), snapshots=2):
        x = x * 1.5
        if x > 1.0:
            return x * 3.0
    return x * 2.0
