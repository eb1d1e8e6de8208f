"""Regression corpus: loop programs that once got wrong gradients or crashed.

Each class below was a silent wrong gradient or a crash inside generated
code (issue 11), found by hand or by the program fuzzer (tests/fuzz). Every
function is differentiated with and without numba and checked against
central finite differences and, where it can trace the function, autograd
(``gradcheck.check_gradient``). Inputs keep away from branch thresholds.

- Recomputed temporaries: `y = np.sin((y + 1.0) * x)` recomputes `y + 1.0`
  in the backward sweep; it must see the `y` of that iteration, also through
  chains of recomputed temporaries.
- Scratch arrays: an array bound afresh in each iteration and then written
  into in place (by slices, elements, nested loops, branches, helpers) must
  be recorded with its final contents, not as first bound.
- `while` with compound conditions and early exits: the condition of the
  next round is evaluated only when the body did not break.
- Loop counters: the backward loop of a `while` nested in a loop over a
  sequence took the same index name as the outer loop.
- Found by the fuzzer: a temporary assigned in both arms of a branch in a
  loop had its adjoint zeroed before the loop (unbound there); `np.prod`
  with a zero element gave NaN (its rule divided by the element); `x = x`
  made the backward sweep drop every earlier contribution to x; `v[:] = v`
  zeroed the slot's cotangent after passing it on; `v[1:] *= w` read the
  old slice through a view the write then changed; `x if c else x` bound a
  temporary to an array written later (NaN: the max rule saw the new values);
  `if c: x = x` left an empty branch; a helper with an early return inlined
  into a loop that ran no iteration read its unbound `_retval` (the rest of a
  body after `if c: return a` is now that `if`'s else branch); `v = a if c
  else b` then `v[i] = ...` wrote into the taped temporary; `for t in x`
  then `for t in A` gave t's adjoint a row's shape in the first loop;
  `y = np.tanh(y)` then `y[1:] += ...` wrote into the taped tanh value; a
  stack tape held the caller's array by reference (an inlined parameter) and
  a later write into it changed the recorded value; a helper returning from
  inside a nested branch, inlined into a loop that ran no iteration, had
  the adjoint of its return slot zeroed before the loop, where it is unbound.
- Issue 13's recomputation of user names assigned once (`t = -1.0 + ...` read
  in an inner loop only through a recomputed `t ** j`; `v = x[i]` read only
  inside branches) and parameters an inlined copy shares with its caller;
  `x, y = y, x` in a loop was bound in sequence (`x = y; y = x`), found by the
  speed-shapes corpus.
- An integer counter reset from itself, `j = (j + 2) % n`, was recorded on a float
  tape: numba refused `x[j]` in the backward sweep and the gradient ran as Python.
- The index of a write back is read: `y[y < 0.25] = ...` in a loop (y a
  parameter not differentiated) put every element back through the last
  iteration's mask.
- A state starting as an int (or float32) array and updated into float64 was
  recorded on a tape of its first dtype, which truncated (rounded) later states.
"""

import numpy as np
import pytest

from gradcheck import check_corpus, check_gradient


# ---------------------------------------------------------------------------
# recomputed temporaries read carried values of their own iteration
# ---------------------------------------------------------------------------

def carried_sin_affine(x, y):
    for i in range(2):
        y = np.sin((y + 1.0) * x)
    return y


def carried_sin_doubled(x, y):
    for i in range(3):
        y = np.sin((y + y) * x)
    return y


def carried_sin_scaled(x, y):
    for i in range(3):
        y = np.sin((2.0 * y) * x)
    return y


def carried_array_chain(x, y):
    for i in range(3):
        y = np.tanh(((y * x) + 1.0) * x - y)
    return np.sum(y)


def carried_deep_chain(x, y):
    for i in range(4):
        y = np.exp(-((((y - 0.5) * x) + y) * 0.3) ** 2)
    return y * x


def carried_two_values(a, b, x):
    for i in range(3):
        a, b = np.cos((b + 1.0) * x), np.sin((a - b) * x)
    return a + 2.0 * b


def carried_in_nested_loop(x, y):
    for i in range(2):
        for j in range(2):
            y = np.sin((y + 0.5 * j) * x)
    return y


def carried_in_while(x, y):
    k = 0
    while k < 3:
        y = np.cos((y * 0.5 + 1.0) * x)
        k += 1
    return y


def carried_in_branch(x, y):
    for i in range(4):
        if i % 2 == 0:
            y = np.sin((y + 1.0) * x)
        else:
            y = np.cos((y - 1.0) * x)
    return y


# ---------------------------------------------------------------------------
# scratch arrays bound in a loop, then written into in place
# ---------------------------------------------------------------------------

def scratch_slice_fill(u0, k):
    u = u0
    for s in range(2):
        lap = np.zeros(3)
        lap[0:3] = u
        u = u + k * lap
    return np.sum(u)


def scratch_stencil(u0, r):
    u = u0
    n = u0.shape[0]
    for s in range(3):
        lap = np.zeros(n)
        lap[1:-1] = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u = u + r * lap
    return np.sum(u * u)


def scratch_elementwise(u0, k):
    u = u0
    for s in range(3):
        f = np.empty(u.shape[0])
        for i in range(u.shape[0]):
            f[i] = np.sin(u[i]) * k
        u = u + 0.5 * f
    return np.sum(u ** 2)


def scratch_partly_filled(u0, k):
    u = u0
    for s in range(3):
        g = np.ones(u.shape[0])
        g[0] = k * u[1]
        g[-1] = k * u[0]
        u = u * g
    return np.sum(u)


def scratch_in_branch(u0, k):
    u = u0
    for s in range(4):
        w = np.zeros(u.shape[0])
        if s % 2 == 0:
            w[:] = np.tanh(u) * k
        else:
            w[1:] = u[:-1] * k
        u = u + w
    return np.sum(u * u)


def _filled(u, k):
    out = np.zeros(u.shape[0])
    for i in range(u.shape[0]):
        out[i] = k * u[i] * u[i]
    return out


def scratch_by_helper(u0, k):
    u = u0
    for s in range(3):
        q = _filled(u, k)
        u = u - 0.1 * q
    return np.sum(u)


def scratch_read_before_and_after(u0, k):
    u = u0
    total = 0.0
    for s in range(3):
        v = np.zeros(u.shape[0])
        total = total + np.sum(v * u)
        v[:] = np.sin(u) * k
        total = total + np.sum(v * v)
        u = u + v
    return total


def scratch_written_twice(u0, k):
    u = u0
    for s in range(3):
        v = u * k
        v[0] = np.cos(v[0])
        v[1:] = v[1:] * u[0]
        u = u + 0.3 * v
    return np.sum(u)


def scratch_in_while(u0, k):
    u = u0
    s = 0
    while s < 3:
        lap = np.zeros(u.shape[0])
        lap[:] = np.sin(u)
        u = u + k * lap
        s += 1
    return np.sum(u)


def scratch_matrix(A0, k):
    A = A0
    for s in range(2):
        B = np.zeros(A.shape)
        for i in range(A.shape[0]):
            B[i, :] = A[i, :] * k + np.sin(A[i, 0])
        A = A + 0.5 * B
    return np.sum(A * A)


# ---------------------------------------------------------------------------
# while with compound conditions and early exits
# ---------------------------------------------------------------------------

def while_and_break_at_once(x):
    w = 0.0
    it = 0
    while w < 0.8 and it < 20:
        break
    return np.sum(x)


def while_and_break_on_value(x):
    s = 0.0
    it = 0
    while s < 2.0 and it < 20:
        it += 1
        s = s + 0.3 + x[0] ** 2
        if s > 0.5:
            break
    return s


def while_or_condition(x):
    s = 0.0
    it = 0
    while s < 1.0 or it < 2:
        s = s + x[0] * x[0] + 0.1
        it += 1
        if it > 10:
            break
    return s * x[1]


def while_not_condition(x):
    s = x[0]
    it = 0
    while not (s > 3.0 or it >= 6):
        s = s * 1.5 + x[1]
        it += 1
        if s < -5.0:
            break
    return s


def while_tolerance_iteration(x, c):
    err = 1.0
    it = 0
    y = x
    while err > 1e-10 and it < 50:
        new = 0.5 * (y + c / y)
        err = abs(new - y)
        y = new
        it += 1
        if it > 40:
            break
    return y * x


def while_continue_and_break(x):
    s = 0.0
    i = 0
    while i < 6 and s < 10.0:
        i += 1
        if i % 2 == 0:
            continue
        s = s + np.sin(x[i % 3]) + 1.1
        if s > 4.0:
            break
    return s


def while_return_inside(x):
    s = 0.0
    it = 0
    while it < 8 and s < 5.0:
        s = s + x[0] * x[0] + 0.2
        it += 1
        if s > 2.0:
            return s * x[1]
    return s


def return_in_while_in_for(x):
    s = 0.0
    for t in x:
        i = 0
        while i < 2:
            s = s + t * t
            if s > 2.0:
                return s
            i += 1
    return s


def zip_nested_while_return(x):
    s = 0.0
    for t1, t2 in zip(x, x[::-1]):
        t1 -= 0.5 * t2
        i = 0
        while i < 2:
            j = 0
            while j < 2:
                s = s + t1 * t2
                if s > 2.0:
                    return s
                j += 1
            i += 1
    return s


# ---------------------------------------------------------------------------
# found by the program fuzzer (tests/fuzz)
# ---------------------------------------------------------------------------

def temp_in_both_arms_of_while_branch(n, x, y):
    it = 0
    w1 = 1.0
    while (w1 < 1.0 and np.sin(np.mean(y)) >= 0.25) and it < 4:
        it += 1
        w1 = w1 + 0.3 * np.cos(y[2, n - 1] * 1.0)
        w1 -= x if np.exp(np.max(y)) < 3.0 else 0.1
    v1 = w1 + np.zeros(4) if w1 < 0.5 else np.abs(y[2, :])
    return np.mean(v1)


def prod_with_a_zero(x):
    z = np.zeros(3)  # written into, so autograd (whose rule gives NaN here too) stays out
    z[0] = x - x
    z[1] = x
    z[2] = 2.0 * x
    return np.sin(x * np.prod(np.tanh(z)) + x)


def prod_of_zeros_matrix(x):
    x = x + (np.outer(0.7 + np.zeros(3), x[0]) - np.min(x))
    m1 = np.zeros((3, 2))
    m1 += (m1 * x[0, 0]) ** 3
    s1 = np.prod(np.outer(1.0 * np.ones(3), x[1]) * m1)
    return s1 + -1.0 * np.max(m1)


def self_assignment_then_branch(x):
    x = x
    v1 = np.zeros(3)
    v1[:2] = np.min(x * np.ones(3))
    if v1[2] < x:
        x -= np.mean(v1 / (1.0 + x ** 2))
    return np.sum(v1)


def self_write_whole(y):
    v1 = y.copy()
    v1[:] = v1
    return np.sum(np.sin(v1))


def slice_times_equals_in_loop(x, y):
    v1 = np.zeros(2)
    v1[:] = y
    for t in range(2):
        v1[1:] *= x[1:]
    return np.max(v1)


def rows_updated_from_each_other(x, y):
    A = np.zeros((2, 2))
    A[0, :] = x
    A[1, :] = y * x
    for i in range(2):
        A[i] *= A[1 - i]
        A[:, i] += np.sin(A[i])
    return np.sum(A)


def max_of_conditional_then_write(x):
    s1 = np.max(x if x[0] > 2.0 else x)
    x[1] = 1.0
    return s1 + np.sum(x)


def conditional_in_zero_trip_loop(x, y):
    for i in range(0):
        x = np.tanh(x * ((y if np.sqrt((-3.0) ** 2 + 0.25) <= 0.7 else 0.7) * y))
    return y + x


def self_assignment_alone_in_branch(x):
    if x > 0.5:
        x = x
    return x * x


def _early_return_helper(p):
    if p > 2.0:
        return p
    return 2.0 * p


def helper_with_early_return_in_zero_trip_loop(x, n):
    s = x
    for i in range(n):
        s = _early_return_helper(x) + s
    return s


def conditional_bound_then_written(x):
    for t in x:
        v1 = np.tanh(x) if t >= np.min(x) else x * x
        x = x + v1
        v1[1:2] += 1.5
    return np.sum(x)


def loop_variable_reused_for_rows(x, y):
    for i, t in enumerate(x):
        if t > 5.0:
            return t
        x = np.tanh(x * t)
    for t in y:
        v2 = y[0]
    return np.sum(x)


def loop_variable_reused_then_read(x, y):
    s = 0.0
    for t in x:
        s = s + t * t
    for t in y:
        s = s + np.sum(t * x)
    return s + t[0]


def _filled_with_early_return(p):
    p = p.copy()
    p[0] = 2.0 * p[2]
    if p[1] > 5.0:
        return p
    return p * 2.0


def helper_returns_written_array_early(x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(_filled_with_early_return(x * (i + 1.0)) * x)
    return s


def early_return_of_written_array(x):
    p = x.copy()
    for i in range(3):
        p[i] = p[i] * x[i]
        if p[i] > 0.5:
            return np.sum(p * x)
    return np.sum(p)


def rebound_through_itself_then_written(x, y):
    for i in range(3):
        y = np.tanh(y)
        if i == 1:
            break
        y[1:] += -y[:2]
    return np.sum(y) + 0.25 * x


def _rescaled_in_place(p):
    p = np.tanh(p * np.sum(np.minimum(p, p[3])))
    for i in range(1):
        p[i % 4] -= p[i % 4]
    return 1.5 * np.mean(p)


def caller_array_written_after_helper(x):
    v1 = x * x
    v1[2] = _rescaled_in_place(v1)
    return np.sum(v1)


def _nested_early_return(p):
    if p - p < 0.7:
        v1 = np.ones(2)
        v1[1] *= np.mean(v1)
        if np.exp(p) <= 0.7:
            return p * v1[1] + p
    if p * p > 0.5:
        p = np.tanh(p + 0.25)
    return 3.0 * p


def helper_nested_return_in_zero_trip_while(x, y):
    s1 = np.tanh(_nested_early_return(y)) ** 3
    it = 0
    w1 = 1.0
    while w1 < 1.0 and it < 3:
        it += 1
        w1 = w1 + 0.3 * np.cos(_nested_early_return(x[0]))
    return w1 + s1


def _written_in_while(p):
    w1 = 0.0
    while w1 <= 1.0:
        w1 = w1 + 0.3 * np.cos(np.max(p))
        if max(p[0], p[3]) >= 1.5:
            w1 = w1 + 0.1
        else:
            p = np.sin(p * p)
        p[3] = np.tanh(p[3] + (w1 + (w1 + np.sum(p))))
    return np.min(p)


def helper_writes_before_rebinding_in_loop(x, y):
    s = 0.0
    for i in range(2):
        s = s + _written_in_while(y + np.zeros(4) if y > x else x * np.ones(4))
    return s


def loop_variable_in_two_branches(x, y):
    s = 0.0
    if x[0] > 5.0:
        for i, t in enumerate(y):
            s = s + np.mean(t) * x[i]
    elif x[1] > 5.0:
        for t in y:
            s = s + t[1] * x[0]
    return s + np.sum(x * x)


def _rebinds_after_early_return(p, q):
    if np.max(p) * q >= 2.0:
        return q * np.prod(p[::-1])
    p = np.tanh(p + p)
    p[3] -= p[-1]
    return np.sin(q + p[3])


def helper_rebinds_after_early_return(x):
    v1 = np.zeros(5)
    v1[3] = _rebinds_after_early_return(v1, x) + v1[4]
    v1 = np.sin(v1 + np.sqrt(v1 ** 2 + 0.25))
    return np.mean(v1) + -3.0 * x


# --- issue 13: recomputation of user names, parameters shared with the caller ----------

def outer_value_read_in_inner_loop(x, n):
    """`t` (one assignment per outer iteration) is recomputed for the backward sweep; the
    inner loop reads it only through `t ** j`, itself recomputed there."""
    total = 0.0
    for i in range(n):
        t = -1.0 + i * 2.0 / (n - 1)
        r = np.sign(t)
        for j in range(x.shape[0]):
            r -= x[j] * t ** j
        total += r * r
    return total / 2.0


def single_assignment_read_in_branch(x):
    """`v = x[i]` recomputed: its backward readers sit inside the branches only."""
    s = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        if v > 0.0:
            s = s + v * v
        else:
            s = s - np.sin(v)
    return s


def single_assignment_then_written(x):
    """`y = x * 1.0` has one assignment but is written into: it must be recorded."""
    y = x * 1.0
    y[0] = np.sum(y) * 3.0
    return np.sum(y * y)


def _rate(x, y):
    n = x.shape[0]
    z = np.empty(n)
    for i in range(n):
        z[i] = x[i] * y[i - 1]
    return z


def shared_parameter_in_rk2(x, s):
    """`x` is only read by `_rate`: each inlined copy reads the caller's x."""
    y = np.ones(x.shape[0])
    for step in range(s):
        k1 = _rate(x, y)
        k2 = _rate(x, y + 0.1 * k1)
        y = y + 0.05 * (k1 + k2)
    return np.sum(y * y)


def _shift(v, c):
    return v + c


def shared_parameter_returned(x):
    """A helper returning its (shared) parameter plus a constant, in a loop."""
    s = x * 1.0
    for k in range(3):
        s = np.tanh(_shift(s, 0.1 * k)) * x
    return np.sum(s)


def swap_in_loop(x, y):
    """`x, y = y, x` in a loop (names not versioned there): both read before either is bound."""
    s = 0.0
    for i in range(3):
        x, y = y, x
        s = s + x * (i + 1.0)
    return s


def counter_reset_from_itself(x):
    """`j = (j + 2) % n`: j's tape held floats, so `x[j]` in the backward sweep made numba
    refuse the gradient (it ran as Python); an int counter now keeps an int tape."""
    n = x.shape[0]
    j = 0
    s = 0.0
    for k in range(5):
        s = s + x[j] * x[j] * (k + 1.0)
        j = (j + 2) % n
    return s


def unpack_into_itself(x):
    """`a, b = a` unpacks the old a (the second item is read before a is rebound).

    Without numba only: `a` holds an array, then a number, which numba's typed tapes
    do not allow."""
    s = 0.0
    for i in range(2):
        a = x * (i + 1.0)
        a, b = a
        s = s + a * b
    return s


def _case(func, make_args, wrt=0, marks=()):
    return pytest.param(func, make_args, wrt, id=func.__name__, marks=marks)


def _vec(*values):
    return np.array(values, dtype=float)


def int_state_becomes_float(x, s):
    """Found by a review (2026-12-07): a state starting as `np.arange(n)` holds floats from
    its first update on; its tape took int64 from the first state and truncated the
    later ones (numba refuses the changing type, so it ran as Python): every row but the
    first was wrong."""
    y = np.arange(x.shape[0])
    for step in range(s):
        y = y + 0.2 * np.sin(y) * x
    return np.sum(y * y)


def float32_state_becomes_float64(x, s):
    """The same with a float32 state: its tape rounded the float64 ones."""
    y = np.zeros(x.shape[0], dtype=np.float32) + 0.5
    for step in range(s):
        y = y + 0.2 * np.sin(y) * x
    return np.sum(y * y)


def mask_write_in_loop(x, y):
    """Found by the fuzzer (seed 33): the mask of `y[y < 0.25] = ...` in a loop (y a
    parameter not differentiated, written in place) was read by the write back only,
    so it was not recorded: every backward iteration put back through the last
    iteration's mask, and the backward sweep read the new y."""
    x = x - x * y
    for j in range(1, 3):
        y[y < 0.25] = np.tanh(np.min(y) - 0.7) ** 2
    return np.mean(y) + np.sum(x)


CASES = [
    _case(carried_sin_affine, lambda: (0.3, 0.7), (0, 1)),
    _case(carried_sin_doubled, lambda: (0.4, 0.6), (0, 1)),
    _case(carried_sin_scaled, lambda: (0.35, 0.8), (0, 1)),
    _case(carried_array_chain, lambda: (_vec(0.3, -0.5, 0.8), _vec(0.2, 0.9, -0.4)), (0, 1)),
    _case(carried_deep_chain, lambda: (0.7, 0.4), (0, 1)),
    _case(carried_two_values, lambda: (0.3, 0.6, 0.9), (0, 1, 2)),
    _case(carried_in_nested_loop, lambda: (0.6, 0.2), (0, 1)),
    _case(carried_in_while, lambda: (0.8, 0.3), (0, 1)),
    _case(carried_in_branch, lambda: (0.5, 0.4), (0, 1)),
    _case(scratch_slice_fill, lambda: (_vec(1.0, 2.0, 3.0), 0.5), (0, 1)),
    _case(scratch_stencil, lambda: (_vec(0.3, 1.2, -0.4, 0.8, 0.1, 0.5), 0.2), (0, 1)),
    _case(scratch_elementwise, lambda: (_vec(0.3, -0.7, 1.1), 0.6), (0, 1)),
    _case(scratch_partly_filled, lambda: (_vec(0.9, 1.1, 0.7, 1.2), 0.8), (0, 1)),
    _case(scratch_in_branch, lambda: (_vec(0.3, -0.2, 0.5), 0.7), (0, 1)),
    _case(scratch_by_helper, lambda: (_vec(0.5, -0.6, 0.9), 0.4), (0, 1)),
    _case(scratch_read_before_and_after, lambda: (_vec(0.2, 0.6, -0.3), 0.9), (0, 1)),
    _case(scratch_written_twice, lambda: (_vec(0.4, -0.3, 0.6), 0.7), (0, 1)),
    _case(scratch_in_while, lambda: (_vec(0.1, 0.8, -0.5), 0.6), (0, 1)),
    _case(scratch_matrix, lambda: (np.array([[0.3, -0.2], [0.5, 0.1], [-0.4, 0.7]]), 0.6),
          (0, 1)),
    _case(while_and_break_at_once, lambda: (_vec(1.0, 2.0),)),
    _case(while_and_break_on_value, lambda: (_vec(0.4, 1.0, 2.0),)),
    _case(while_or_condition, lambda: (_vec(0.45, 1.3),)),
    _case(while_not_condition, lambda: (_vec(0.4, 0.7),)),
    _case(while_tolerance_iteration, lambda: (1.3, 2.0), (0, 1)),
    _case(while_continue_and_break, lambda: (_vec(0.3, 0.8, -0.4),)),
    _case(while_return_inside, lambda: (_vec(0.7, 1.4),)),
    _case(return_in_while_in_for, lambda: (_vec(0.3, 0.9, -0.4, 0.7, 1.1),)),
    _case(zip_nested_while_return, lambda: (_vec(0.3, 0.9, -0.4, 0.7, 1.1),)),
    _case(temp_in_both_arms_of_while_branch,
          lambda: (3, -0.375, np.array([[-0.03, 0.73, -1.06, -0.45], [-1.07, -0.07, 0.01, -0.98],
                                        [-0.81, -0.48, 0.09, 1.38]])), (1, 2)),
    _case(prod_with_a_zero, lambda: (1.035,)),
    _case(prod_of_zeros_matrix,
          lambda: (np.array([[1.49, 1.46], [1.11, -0.62], [0.96, 0.76]]),)),
    _case(self_assignment_then_branch, lambda: (0.188,)),
    _case(self_write_whole, lambda: (_vec(0.3, 0.5, 0.7),)),
    _case(slice_times_equals_in_loop, lambda: (_vec(0.61, 0.55), -0.78), (0, 1)),
    _case(rows_updated_from_each_other, lambda: (_vec(0.61, 0.55), -0.78), (0, 1)),
    _case(max_of_conditional_then_write, lambda: (_vec(-0.51, 0.86),)),
    _case(conditional_in_zero_trip_loop, lambda: (0.3, 0.5), (0, 1)),
    _case(self_assignment_alone_in_branch, lambda: (0.8,)),
    _case(helper_with_early_return_in_zero_trip_loop, lambda: (0.3, 0)),
    _case(conditional_bound_then_written, lambda: (_vec(1.36, 0.2, -1.05),)),
    _case(loop_variable_reused_for_rows,
          lambda: (_vec(-0.58, 0.91, 0.93), np.arange(6.0).reshape(2, 3) / 7), (0, 1)),
    _case(helper_returns_written_array_early, lambda: (_vec(0.3, 0.9, 1.2),)),
    _case(early_return_of_written_array, lambda: (_vec(0.3, 0.9, 1.2),)),
    _case(rebound_through_itself_then_written, lambda: (0.3, _vec(0.3, 0.9, 1.2)), (0, 1)),
    _case(caller_array_written_after_helper, lambda: (_vec(-0.15, -1.19, 0.76, 0.9),)),
    _case(helper_nested_return_in_zero_trip_while, lambda: (_vec(0.4, 0.2), -0.9), (0, 1)),
    _case(helper_writes_before_rebinding_in_loop, lambda: (0.88, 1.0765), (0, 1)),
    _case(loop_variable_in_two_branches,
          lambda: (_vec(0.3, 0.9, -0.4), np.arange(6.0).reshape(2, 3) / 7), (0, 1)),
    _case(helper_rebinds_after_early_return, lambda: (0.4,)),
    _case(loop_variable_reused_then_read,
          lambda: (_vec(-0.58, 0.91, 0.93), np.arange(6.0).reshape(2, 3) / 7), (0, 1)),
    _case(outer_value_read_in_inner_loop, lambda: (_vec(0.3, -0.2, 0.5, 0.1), 7)),
    _case(single_assignment_read_in_branch, lambda: (_vec(0.3, -0.7, 1.1, -0.2),)),
    _case(single_assignment_then_written, lambda: (_vec(0.3, -0.7, 1.1),)),
    _case(shared_parameter_in_rk2, lambda: (_vec(0.3, -0.7, 1.1, 0.4), 4)),
    _case(shared_parameter_returned, lambda: (_vec(0.3, -0.7, 1.1),)),
    _case(swap_in_loop, lambda: (1.0, 3.0), (0, 1)),
    _case(counter_reset_from_itself, lambda: (_vec(0.3, -0.7, 1.1),)),
]


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func, make_args, wrt", CASES)
def test_gradient(func, make_args, wrt, jit):
    check_gradient(func, make_args(), wrt=wrt, jit=jit)


def test_corpus_size_and_distinct_names():
    check_corpus(CASES, globals(), minimum=20)


def test_unpack_into_itself():
    check_gradient(unpack_into_itself, (_vec(0.3, -0.7),), wrt=0, jit=False)


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
def test_mask_write_in_loop(jit):
    """Finite differences on fresh copies: the function writes into its argument y."""
    import srcgrad

    x, y, h = _vec(-0.61, -0.69, 0.28), _vec(0.5, -0.66, 0.56), 1e-6
    fd = [(mask_write_in_loop(x + h * e, y.copy()) - mask_write_in_loop(x - h * e, y.copy()))
          / (2 * h) for e in np.eye(3)]
    y_given = y.copy()
    got = srcgrad.grad(mask_write_in_loop, wrt=0, jit=jit)(x, y_given)
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, 1.0 - y, rtol=1e-12)  # d/dx of sum(x - x * y)


def test_a_float32_state_that_becomes_float64():
    """As Python only: numba types `float32 array + 0.5` as float64 where NumPy 2 keeps
    float32, so its state is float64 from the start and its gradient differs from
    NumPy's in float32's last bits (numba's promotion, not the tape)."""
    check_gradient(float32_state_becomes_float64, (_vec(0.2, 0.5, 0.9), 3), jit=False)


def test_an_int_state_that_becomes_float():
    """numba cannot type a name holding int64 then float64 arrays: with jit it says so
    and runs as Python, with the same gradient."""
    import srcgrad
    from gradcheck import assert_close, numerical_grad
    func, args = int_state_becomes_float, (_vec(0.2, 0.34, 0.48, 0.62, 0.76, 0.9), 3)
    check_gradient(func, args, jit=False)
    with pytest.warns(srcgrad.SrcgradWarning, match="could not compile"):
        got = srcgrad.grad(func)(*args)
    assert_close(got, numerical_grad(func, args, 0), rtol=1e-5, atol=1e-7)
