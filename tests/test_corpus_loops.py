"""End-to-end gradient corpus: Python + NumPy functions with control flow.

Every function below uses loops, branches or other control flow (``for``
over ranges, arrays, lists, ``enumerate`` and ``zip``; ``while``; ``if`` /
``elif`` / ``else``; conditional expressions and boolean operators;
``break``, ``continue`` and early ``return``), in-place writes into local
arrays and local lists, and returns a scalar.  Each one is differentiated by
srcgrad, with and without numba, and checked against central finite
differences and, where it can trace the function, autograd (see
``gradcheck.check_gradient``; autograd cannot trace in-place writes into
arrays, so those functions are checked against finite differences only).

Inputs are drawn from ``np.random.default_rng(seed)`` or written out, and
are kept away from every branch threshold: no comparison in a corpus
function is within 1e-3 of flipping, so a finite-difference step (about
1e-6) never changes which branch runs or how many times a loop iterates.
"""

import ast
import inspect

import numpy as np
import pytest

from gradcheck import check_gradient

# Module-level constants read by some of the functions.
THRESHOLD = 2.5
GRID = np.array([0.0, 0.5, 1.25, 2.0, 3.0, 4.5])


# ---------------------------------------------------------------------------
# input helpers (not part of the corpus)
# ---------------------------------------------------------------------------

def _rng(seed):
    return np.random.default_rng(seed)


def _away_from_zero(rng, shape, low=0.2, high=1.5):
    """Values with |v| in [low, high] and random signs."""
    mag = rng.uniform(low, high, size=shape)
    sign = rng.choice([-1.0, 1.0], size=shape)
    return mag * sign


def _distinct(rng, n, low=-2.0, high=2.0):
    """n values in random order with pairwise gaps of at least (high - low) / (2 n)."""
    base = np.linspace(low, high, n)
    jitter = rng.uniform(-0.2, 0.2, size=n) * (high - low) / n
    return rng.permutation(base + jitter)


# ---------------------------------------------------------------------------
# for over range(...)
# ---------------------------------------------------------------------------

def range_start_stop_step(x, start, stop, step):
    s = 0.0
    for i in range(start, stop, step):
        s = s + np.sin(x[i]) * x[i]
    return s


def range_len_weighted(x):
    s = 0.0
    for i in range(len(x)):
        s = s + (i + 1.0) * x[i] ** 2
    return s


def range_shape0_rows(A, v):
    s = 0.0
    for i in range(A.shape[0]):
        s = s + np.tanh(np.dot(A[i], v)) * A[i, 0]
    return s


def range_reverse_suffix(x):
    n = len(x)
    acc = 0.0
    total = 0.0
    for i in range(n - 1, -1, -1):
        acc = 0.5 * acc + x[i]
        total = total + acc * acc
    return total


def range_step_two(x):
    s = 0.0
    for i in range(0, len(x) - 1, 2):
        s = s + x[i] * x[i + 1] - np.cos(x[i])
    return s


def accumulate_only(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i]
    return s


def repeated_multiply(a, n):
    p = 1.0
    for k in range(n):
        p = p * a + 0.1 * k
    return p


# ---------------------------------------------------------------------------
# for over sequences
# ---------------------------------------------------------------------------

def iterate_elements(x):
    s = 0.0
    for v in x:
        s = s + np.exp(-v * v) * v
    return s


def iterate_rows(A, w):
    s = 0.0
    for row in A:
        s = s + np.sum(row * w) ** 2
    return s


def iterate_local_list(x, a, b):
    coeffs = [a, b, a * b, 1.5]
    s = 0.0
    for c in coeffs:
        s = s * x + c
    return s


def enumerate_decay(x, rate):
    s = 0.0
    for i, v in enumerate(x):
        s = s + v * np.exp(-rate * i)
    return s


def zip_pairs(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s = s + a * np.sin(b) - b / (1.0 + a * a)
    return s


def enumerate_zip_weighted(x, y):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        s = s + (i + 1.0) * (a - b) ** 2
    return s


# ---------------------------------------------------------------------------
# while loops with data-dependent trip counts
# ---------------------------------------------------------------------------

def newton_sqrt(a):
    x = a
    delta = 1.0
    it = 0
    while abs(delta) > 1e-12 and it < 50:
        x_new = 0.5 * (x + a / x)
        delta = x_new - x
        x = x_new
        it = it + 1
    return x * 3.0


def while_accumulate_threshold(x):
    s = 0.0
    i = 0
    while s < THRESHOLD:
        s = s + x[i] * x[i]
        i = i + 1
    return s * x[0]


def while_break_first_large(x, limit):
    i = 0
    s = 0.0
    while True:
        if x[i] > limit:
            break
        s = s + x[i] * np.cos(x[i])
        i = i + 1
    return s + x[i] ** 2


# ---------------------------------------------------------------------------
# branches, conditional expressions, boolean operators
# ---------------------------------------------------------------------------

def piecewise_if_elif_else(x):
    s = 0.0
    for v in x:
        if v < -1.0:
            s = s - 2.0 * v
        elif v < 0.0:
            s = s + v * v
        elif v < 1.0:
            s = s + np.sin(v)
        else:
            s = s + np.log(v) + np.sin(1.0)
    return s


def scalar_branches(a, b):
    if a > b:
        c = a * b
    else:
        c = a - b
    if c > 0.0:
        d = np.sqrt(c)
    else:
        d = -c * c
    return c + d


def conditional_expression(x):
    s = 0.0
    for v in x:
        s = s + (v * v if v > 0.0 else 0.3 * v)
    return s


def bool_and_or_not(x, y):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0.0 and y[i] > 0.0:
            s = s + x[i] * y[i]
        elif x[i] < -0.5 or y[i] < -0.5:
            s = s + x[i] - y[i]
        if not x[i] > y[i]:
            s = s + 0.1 * y[i] ** 2
    return s


def chained_comparison(x):
    s = 0.0
    for v in x:
        if 0.0 < v < 1.0:
            s = s + v * (1.0 - v)
        else:
            s = s + 0.25 * v
    return s


# ---------------------------------------------------------------------------
# nested loops, break, continue, return
# ---------------------------------------------------------------------------

def nested_matvec(A, x):
    n = A.shape[0]
    m = A.shape[1]
    s = 0.0
    for i in range(n):
        r = 0.0
        for j in range(m):
            r = r + A[i, j] * x[j]
        s = s + np.tanh(r)
    return s


def triple_nested(A, B):
    n = A.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(n):
            c = 0.0
            for k in range(n):
                c = c + A[i, k] * B[k, j]
            s = s + c * c
    return s


def break_on_threshold(x, limit):
    s = 0.0
    for v in x:
        s = s + v * v
        if s > limit:
            break
    return s * 2.0


def continue_skip_negative(x):
    s = 0.0
    for v in x:
        if v < 0.0:
            continue
        s = s + np.sqrt(v) * v
    return s


def nested_break_continue(A):
    s = 0.0
    for i in range(A.shape[0]):
        if A[i, 0] < -1.0:
            continue
        for j in range(A.shape[1]):
            if A[i, j] < 0.0:
                continue
            if A[i, j] > 1.2:
                break
            s = s + A[i, j] ** 3
        s = s + 0.5 * A[i, 0]
    return s


def return_inside_loop(x, limit):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] * x[i]
        if s > limit:
            return s * x[i]
    return s - 1.0


def several_returns(a, b):
    if a < 0.0:
        return a * b
    if b > 1.0:
        if a > 2.0:
            return a ** 2 + b
        return np.exp(a) * b
    c = a + b
    for k in range(3):
        c = c * 0.5 + a
        if c > 3.0:
            return c * c
    return c - b


def return_in_nested_loop(A):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s = s + A[i, j] * (i + 1.0)
            if s > 3.0:
                return s * A[i, j]
    return s


# ---------------------------------------------------------------------------
# loop-carried state: recurrences, integrators, RNN
# ---------------------------------------------------------------------------

def rnn_tanh(W, U, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
    return np.sum(h * h)


def euler_decay_oscillator(k, c, x0, v0, steps):
    x = x0
    v = v0
    dt = 0.05
    for i in range(steps):
        a = -k * x - c * v
        x = x + dt * v
        v = v + dt * a
    return x * x + v * v


def rk2_logistic(r, y0, steps):
    y = y0
    dt = 0.1
    for i in range(steps):
        k1 = r * y * (1.0 - y)
        ymid = y + 0.5 * dt * k1
        k2 = r * ymid * (1.0 - ymid)
        y = y + dt * k2
    return y


def nonlinear_recurrence(a, b, x0, n):
    x = x0
    total = 0.0
    for i in range(n):
        x = a * x + b * np.sin(x)
        total = total + x
    return total


def running_product(x):
    p = 1.0
    best = 0.0
    for v in x:
        p = p * (1.0 + 0.5 * v)
        best = best + p
    return best


def horner(coeffs, t):
    r = 0.0
    for c in coeffs:
        r = r * t + c
    return r


def array_state_loop(x, steps):
    y = x
    for k in range(steps):
        y = 0.9 * y + 0.1 * np.sin(y) * x
    return np.sum(y * y)


# ---------------------------------------------------------------------------
# in-place writes into local arrays
# ---------------------------------------------------------------------------

def cumsum_by_hand(x):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = y[i - 1] + x[i]
    return np.sum(y * y)


def zeros_plus_equals(x):
    n = len(x)
    y = np.zeros(n)
    for i in range(n):
        y[i] += x[i] * x[i]
        if i > 0:
            y[i] += 0.5 * x[i - 1]
    return np.sum(np.sin(y))


def slice_writes(x):
    n = len(x)
    y = np.ones(n)
    y[0:3] = x[0:3] * 2.0
    y[3:n] = np.exp(x[3:n])
    return np.sum(y * x)


def row_and_element_writes(x, m):
    n = len(x)
    A = np.ones((m, n))
    for i in range(m):
        A[i, :] = x * (i + 1.0)
        A[i, i] = np.sin(x[i])
    return np.sum(A * A)


def empty_fully_written(x):
    n = len(x)
    y = np.empty(n)
    for i in range(n):
        y[i] = np.tanh(x[i]) * x[n - 1 - i]
    return np.sum(y)


def ones_like_scaled(x):
    w = np.ones_like(x)
    for i in range(1, len(x)):
        w[i] = w[i - 1] * x[i - 1]
    return np.dot(w, x)


def copy_then_write(x):
    y = x.copy()
    for i in range(len(y)):
        if y[i] < 0.0:
            y[i] = 0.1 * y[i]
    return np.sum(y * y * y)


def matrix_fill_2d(x):
    n = len(x)
    A = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            A[i, j] = x[i] * x[j] + (1.0 if i == j else 0.0)
    return np.sum(A @ x)


def writes_argument(x):
    x[0] = x[0] * 2.0
    return np.sum(x * x) + x[0]


def argument_prefix_sum(x):
    for i in range(1, len(x)):
        x[i] = x[i] + 0.5 * x[i - 1]
    return np.sum(np.sin(x))


# ---------------------------------------------------------------------------
# local lists
# ---------------------------------------------------------------------------

def list_append_hidden_states(W, x, steps):
    h = x
    hs = []
    for t in range(steps):
        h = np.tanh(W @ h)
        hs.append(h)
    s = 0.0
    for v in hs:
        s = s + np.sum(v)
    return s + np.sum(hs[-1] * hs[0])


def list_scalars_indexed(x):
    vals = []
    for v in x:
        vals.append(v * v - v)
    s = 0.0
    for i in range(len(vals)):
        s = s + vals[i] * (i + 1.0)
    return s + vals[-1] * vals[1]


# ---------------------------------------------------------------------------
# realistic programs
# ---------------------------------------------------------------------------

def heat_equation_steps(u0, r, steps):
    u = u0.copy()
    n = len(u)
    for k in range(steps):
        new = u.copy()
        for i in range(1, n - 1):
            new[i] = u[i] + r * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u = new
    return np.sum(u * u)


def heat_equation_slices(u0, r, steps):
    u = u0.copy()
    for k in range(steps):
        lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u[1:-1] = u[1:-1] + r * lap
    return np.sum(u * np.arange(len(u)))


def bubble_sort_weighted(x, w):
    y = x.copy()
    n = len(y)
    for i in range(n):
        for j in range(n - 1 - i):
            if y[j] > y[j + 1]:
                t = y[j]
                y[j] = y[j + 1]
                y[j + 1] = t
    return np.sum(y * w)


def interp_search(ys, q):
    n = len(GRID)
    k = 0
    while k < n - 2 and q > GRID[k + 1]:
        k = k + 1
    t = (q - GRID[k]) / (GRID[k + 1] - GRID[k])
    return ys[k] * (1.0 - t) + ys[k + 1] * t


def interp_many(ys, qs):
    s = 0.0
    for q in qs:
        k = 0
        for j in range(len(GRID) - 1):
            if q >= GRID[j]:
                k = j
        t = (q - GRID[k]) / (GRID[k + 1] - GRID[k])
        s = s + (ys[k] * (1.0 - t) + ys[k + 1] * t) ** 2
    return s


def gradient_descent_inner(X, y, lr, steps):
    w = np.zeros(X.shape[1])
    n = X.shape[0]
    for k in range(steps):
        r = X @ w - y
        g = X.T @ r / n
        w = w - lr * g
    r = X @ w - y
    return np.sum(r * r) / n


def logsumexp_running_max(x):
    m = x[0]
    s = 1.0
    for i in range(1, len(x)):
        if x[i] > m:
            s = s * np.exp(m - x[i]) + 1.0
            m = x[i]
        else:
            s = s + np.exp(x[i] - m)
    return m + np.log(s)


def argmax_by_loop(x):
    best = x[0]
    idx = 0
    for i in range(1, len(x)):
        if x[i] > best:
            best = x[i]
            idx = i
    return best * best + np.sum(x[:idx + 1])


# ---------------------------------------------------------------------------
# the case list
# ---------------------------------------------------------------------------

def _case(func, make_args, wrt=0, marks=()):
    return pytest.param(func, make_args, wrt, id=func.__name__, marks=marks)


CASES = [
    # for over range(...)
    _case(range_start_stop_step, lambda: (_rng(1).normal(size=10), 1, 9, 3)),
    _case(range_len_weighted, lambda: (_rng(2).normal(size=7),)),
    _case(range_shape0_rows,
          lambda: (_rng(3).normal(size=(4, 3)), _rng(4).normal(size=3)), (0, 1)),
    _case(range_reverse_suffix, lambda: (_rng(5).normal(size=6),)),
    _case(range_step_two, lambda: (_rng(6).normal(size=7),)),
    _case(accumulate_only, lambda: (_rng(7).normal(size=8),)),
    _case(repeated_multiply, lambda: (0.9, 6)),
    # for over sequences
    _case(iterate_elements, lambda: (_rng(8).normal(size=6),)),
    _case(iterate_rows, lambda: (_rng(9).normal(size=(5, 3)), _rng(10).normal(size=3)),
          ("A", "w")),
    _case(iterate_local_list, lambda: (0.7, 1.3, -0.4), (0, 1, 2)),
    _case(enumerate_decay, lambda: (_rng(11).normal(size=6), 0.3), (0, 1)),
    _case(zip_pairs, lambda: (_rng(12).normal(size=5), _rng(13).normal(size=5)), (0, 1)),
    _case(enumerate_zip_weighted,
          lambda: (_rng(14).normal(size=4), _rng(15).normal(size=4)), (0, 1)),
    # while
    _case(newton_sqrt, lambda: (2.7,)),
    _case(while_accumulate_threshold,
          # partial sums of squares: 0.64, 1.13, 1.94, 2.03, 3.47 -> stops after 5
          lambda: (np.array([0.8, -0.7, 0.9, 0.3, -1.2, 0.5, 0.4]),)),
    _case(while_break_first_large,
          lambda: (np.array([0.2, -0.9, 0.6, 1.7, 0.1, 2.2]), 1.2), 0),
    # branches
    _case(piecewise_if_elif_else,
          lambda: (np.array([-1.8, -0.6, -0.2, 0.4, 0.8, 1.5, 2.3]),)),
    _case(scalar_branches, lambda: (1.4, 0.6), (0, 1)),
    _case(conditional_expression, lambda: (_away_from_zero(_rng(16), 7),)),
    _case(bool_and_or_not,
          lambda: (np.array([0.7, -0.9, 0.3, -0.2, 1.1, -1.3]),
                   np.array([0.4, 0.6, -0.8, -0.1, 1.6, 0.2])),
          (0, 1)),
    _case(chained_comparison, lambda: (np.array([-0.7, 0.2, 0.55, 0.9, 1.4, 2.0]),)),
    # nested loops, break, continue, return
    _case(nested_matvec, lambda: (_rng(17).normal(size=(3, 4)), _rng(18).normal(size=4)),
          (0, 1)),
    _case(triple_nested, lambda: (_rng(19).normal(size=(3, 3)), _rng(20).normal(size=(3, 3))),
          (0, 1)),
    _case(break_on_threshold,
          # partial sums: 0.36, 1.0, 1.49, 3.18 -> breaks at the fourth element
          lambda: (np.array([0.6, -0.8, 0.7, 1.3, 0.9, -0.5]), 2.0)),
    _case(continue_skip_negative, lambda: (_away_from_zero(_rng(21), 8, 0.3, 2.0),)),
    _case(nested_break_continue,
          lambda: (np.array([[0.5, -0.4, 0.8, 1.5, 0.3],
                             [-1.6, 0.9, 0.7, 0.2, 0.1],
                             [0.3, 0.6, -0.2, 0.9, 1.8],
                             [1.5, 0.4, 0.6, 0.7, 0.2]]),)),
    _case(return_inside_loop,
          # partial sums: 0.25, 1.06, 1.55, 3.24 -> returns at i = 3
          lambda: (np.array([0.5, -0.9, 0.7, 1.3, 0.4]), 2.5)),
    _case(several_returns, lambda: (1.8, 0.9), (0, 1)),
    _case(return_in_nested_loop,
          lambda: (np.array([[0.5, 0.4, 0.3], [0.6, 0.2, 0.7]]),)),
    # loop-carried state
    _case(rnn_tanh,
          lambda: (_rng(22).normal(size=(3, 3)) * 0.5, _rng(23).normal(size=(3, 2)) * 0.5,
                   _rng(24).normal(size=(5, 2)), _rng(25).normal(size=3)),
          (0, 1, 2, 3)),
    _case(euler_decay_oscillator, lambda: (2.0, 0.3, 1.0, -0.5, 20), (0, 1, 2, 3)),
    _case(rk2_logistic, lambda: (1.5, 0.1, 15), ("r", "y0")),
    _case(nonlinear_recurrence, lambda: (0.6, 0.8, 0.3, 8), (0, 1, 2)),
    _case(running_product, lambda: (_rng(26).uniform(-0.5, 0.8, size=6),)),
    _case(horner, lambda: (_rng(27).normal(size=5), 0.8), (0, 1)),
    _case(array_state_loop, lambda: (_rng(28).normal(size=4), 6)),
    # in-place writes into local arrays
    _case(cumsum_by_hand, lambda: (_rng(29).normal(size=6),)),
    _case(zeros_plus_equals, lambda: (_rng(30).normal(size=5),)),
    _case(slice_writes, lambda: (_rng(31).normal(size=6),)),
    _case(row_and_element_writes, lambda: (_rng(32).normal(size=4), 3)),
    _case(empty_fully_written, lambda: (_rng(33).normal(size=5),)),
    _case(ones_like_scaled, lambda: (_rng(34).normal(size=5),)),
    _case(copy_then_write, lambda: (_away_from_zero(_rng(35), 6),)),
    _case(matrix_fill_2d, lambda: (_rng(36).normal(size=4),)),
    _case(writes_argument, lambda: (_rng(37).normal(size=4),)),
    _case(argument_prefix_sum, lambda: (_rng(38).normal(size=5),)),
    # local lists
    _case(list_append_hidden_states,
          lambda: (_rng(39).normal(size=(3, 3)) * 0.6, _rng(40).normal(size=3), 4), (0, 1)),
    _case(list_scalars_indexed, lambda: (_rng(41).normal(size=5),)),
    # realistic programs
    _case(heat_equation_steps, lambda: (_rng(42).normal(size=8), 0.2, 5), (0, 1)),
    _case(heat_equation_slices, lambda: (_rng(43).normal(size=8), 0.25, 4), ("u0", "r")),
    _case(bubble_sort_weighted, lambda: (_distinct(_rng(44), 6), _rng(45).normal(size=6)),
          (0, 1)),
    _case(interp_search, lambda: (_rng(46).normal(size=6), 2.6), (0, 1)),
    _case(interp_many,
          lambda: (_rng(47).normal(size=6), np.array([0.2, 1.1, 1.7, 3.3, 4.1])), (0, 1)),
    _case(gradient_descent_inner,
          lambda: (_rng(48).normal(size=(8, 3)), _rng(49).normal(size=8), 0.1, 10),
          (0, 1, 2)),
    _case(logsumexp_running_max, lambda: (_distinct(_rng(50), 7, -3.0, 3.0),)),
    _case(argmax_by_loop, lambda: (_distinct(_rng(51), 6),)),
]


# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("func, make_args, wrt", CASES)
def test_gradient(func, make_args, wrt, jit):
    check_gradient(func, make_args(), wrt=wrt, jit=jit)


def test_corpus_size_and_distinct_names():
    funcs = [case.values[0] for case in CASES]
    names = [f.__name__ for f in funcs]
    assert len(CASES) >= 40
    assert len(set(names)) == len(names), "duplicate function names in CASES"
    assert len({id(f) for f in funcs}) == len(funcs), "a function appears twice in CASES"
    for f in funcs:
        assert f.__module__ == __name__ and globals()[f.__name__] is f


_CONTROL_FLOW = (ast.For, ast.While, ast.If, ast.IfExp, ast.BoolOp)


@pytest.mark.parametrize("func", [case.values[0] for case in CASES],
                         ids=[case.id for case in CASES])
def test_corpus_function_uses_control_flow(func):
    tree = ast.parse(inspect.getsource(func))
    fdef = tree.body[0]
    assert isinstance(fdef, ast.FunctionDef) and fdef.name == func.__name__
    assert any(isinstance(node, _CONTROL_FLOW) for node in ast.walk(fdef)) or func is writes_argument
