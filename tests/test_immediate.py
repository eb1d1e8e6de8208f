"""Sum loops reversed in place (transforms/immediate.py): a loop whose iterations share
only sums, whose sums' adjoint is the seed, runs each iteration's backward statements at
the end of its forward iteration, with no tape and no second loop; every other loop keeps
its backward loop.

Each function's gradient is checked against central differences and autograd, numba on
and off (gradcheck.check_gradient), and `srcgrad.vjp` and `value_and_grad` give the same;
the generated source is read for the backward loop it has or has not."""
import numpy as np
import pytest

import srcgrad
from gradcheck import assert_close, check_gradient
from bench.problems.ba import ba_weighted
from bench.problems.det import det


def per_row(x, w):
    """A scratch array per row, a sum of its elements."""
    total = 0.0
    for i in range(x.shape[0]):
        v = x[i] * w
        total = total + np.sum(np.sin(v) * v)
    return total


def rotations(cams, X):
    """ba's shape: scalar arithmetic per observation, read at constant positions."""
    total = 0.0
    for i in range(X.shape[0]):
        c = np.cos(cams[i, 0])
        r0 = X[i, 0] * c - X[i, 1] * cams[i, 1]
        r2 = X[i, 2] * c + X[i, 0] * cams[i, 2] + 3.0
        total += r0 / r2 + np.exp(-r0 * r0)
    return total


def branched(x):
    """The loop inside the `else` of an early return, as det's is."""
    if x.shape[0] == 1:
        return x[0] * 2.0
    total = 0.0
    for i in range(x.shape[0]):
        total = total + np.tanh(x[i]) * x[(i + 1) % x.shape[0]]
    return total


def in_branch(x):
    """The loop alone in a branch: the backward sweep's branch is left with `pass`."""
    total = 0.0
    if x[0] > 0.0:
        for i in range(x.shape[0]):
            total = total + np.sin(x[i]) * x[i]
    return total


def reads_its_sum(x):
    """The sum is read by its own iterations: the iterations are not independent."""
    total = 1.0
    for i in range(x.shape[0]):
        total = total + x[i] * np.sin(total)
    return total


def squared_sum(x):
    """The sum's adjoint depends on the sum (2 total): not known before the loop."""
    total = 0.0
    for i in range(x.shape[0]):
        total = total + np.sin(x[i])
    return total * total


def writes_out(x):
    """Each iteration writes an element of an array made before the loop."""
    out = np.zeros(x.shape[0])
    total = 0.0
    for i in range(x.shape[0]):
        out[i] = np.sin(x[i])
        total = total + out[i] * x[i]
    return total + np.sum(out)


def rebinds(x):
    """A name bound twice in an iteration."""
    total = 0.0
    for i in range(x.shape[0]):
        t = x[i] * 2.0
        t = np.sin(t) * t
        total = total + t
    return total


def stops(x):
    """A loop that can stop early."""
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 1.4:
            break
        total = total + np.cos(x[i]) * x[i]
    return total


def rotation_branch(rots, pts):
    """ba's rotation: names bound in both branches of an `if` in the iteration."""
    total = 0.0
    for i in range(pts.shape[0]):
        sq = rots[i, 0] * rots[i, 0] + rots[i, 1] * rots[i, 1]
        if pts[i, 2] > 0.0:
            theta = np.sqrt(sq)
            c = np.cos(theta)
            r = pts[i, 0] * c + rots[i, 1] / theta * pts[i, 1]
        else:
            r = pts[i, 0] + rots[i, 1] * pts[i, 1] * sq
        total += r * r
    return total


def one_sided(x):
    """Names bound in one branch only, read only there."""
    total = 0.0
    for i in range(x.shape[0]):
        t = x[i] * 3.0
        if x[i] > 0.0:
            u = np.sin(t)
            t2 = u * u
        else:
            t2 = t * 0.5
        total = total + t2 * x[i]
    return total


def carried_in_branch(x):
    """A name bound in one branch and read after it: an earlier iteration's value."""
    total = 0.0
    u = 1.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            u = np.sin(x[i])
        total = total + u * x[i]
    return total


def bound_after_branch(x):
    """A name bound in a branch and again after it: twice along one path."""
    total = 0.0
    for i in range(x.shape[0]):
        t = x[i]
        if x[i] > 0.0:
            t = np.sin(x[i])
        total = total + t * x[i]
    return total


def _project(cam, pt):
    return pt[0] * np.cos(cam[0]) - pt[1] * cam[1] + cam[2] * pt[0] * pt[1]


def through_calls(cams, X):
    """Rows passed to an inlined call: its adjoint accumulates through a view of a row."""
    total = 0.0
    for i in range(X.shape[0]):
        total += _project(cams[i], X[i])
    return total


def pairs(pos, w):
    """A pair loop: the inner loop's iterations, over all (i, j), share only the sum."""
    e = 0.0
    for i in range(pos.shape[0]):
        for j in range(i + 1, pos.shape[0]):
            dx = pos[i, 0] - pos[j, 0]
            dy = pos[i, 1] - pos[j, 1]
            r2 = 1.0 + dx * dx + dy * dy
            e += w[i] * w[j] / r2
    return e


def pairs_outer_numbers(pos, w):
    """The outer iteration binds numbers of its index the inner loop reads."""
    e = 0.0
    for i in range(pos.shape[0]):
        lo = i + 1
        c = 0.5 * i
        for j in range(lo, pos.shape[0]):
            t = np.sin(pos[i, 0] - pos[j, 0]) * c
            if pos[j, 1] > 0.0:
                u = t * w[j]
            else:
                u = t * t
            e = e + u
    return e


def pairs_outer_taped(pos, w):
    """An outer number worth taping: its tape goes with the outer backward loop."""
    e = 0.0
    for i in range(pos.shape[0]):
        o = np.cos(0.3 * i)
        for j in range(i):
            e += pos[j, 0] * o * w[i]
    return e


def pairs_fixed_inner(pos, w):
    """An inner loop of a fixed length, its temporaries taped at `i * 2 + j`."""
    e = 0.0
    for i in range(pos.shape[0]):
        for j in range(2):
            a = np.exp(0.5 * pos[i, j])
            e += np.sin(a) * w[j]
    return e


def pairs_outer_locals(pos, w):
    """The outer iteration binds values of the arguments the inner loop reads: their
    adjoints are work of the outer backward loop, which keeps it (not taken yet)."""
    e = 0.0
    for i in range(pos.shape[0]):
        xi = pos[i, 0] * 2.0
        row = pos[i] * w[i]
        for j in range(pos.shape[0]):
            t = np.sin(xi - pos[j, 0]) * row[1]
            if pos[j, 1] > 0.0:
                e = e + t * w[j]
            else:
                e = e + t * t
    return e


def pairs_outer_sum(pos, w):
    """The outer body adds to the sum after its inner loop: not taken."""
    e = 0.0
    for i in range(pos.shape[0]):
        for j in range(i):
            e += np.cos(pos[i, 0] - pos[j, 0]) * w[j]
        e += w[i] * pos[i, 1]
    return e


def pairs_carried(pos, w):
    """A value carried from one inner iteration to the next: not taken."""
    e = 0.0
    for i in range(pos.shape[0]):
        p = w[i]
        for j in range(pos.shape[0]):
            p = p * 0.5 + pos[j, 0]
            e += p * pos[i, 1]
    return e


def while_around(x):
    """A sum loop inside a `while`: the outer loop is not counted, nothing is taken."""
    total = 0.0
    k = 0
    while k < 2:
        for j in range(x.shape[0]):
            total += np.sin(x[j]) * (k + 1.0)
        k += 1
    return total


def while_inside(x):
    """A `while` inside a counted loop: the inner loop is not counted, nothing is taken."""
    total = 0.0
    for i in range(x.shape[0]):
        k = 0
        while k < 2:
            total += np.sin(x[i]) * (k + 1.0)
            k += 1
    return total


def _pair_args(n=4):
    return rng.uniform(-1, 1, (n, 2)), rng.uniform(0.5, 1.5, n)


def _signed_pair_args():
    return np.c_[rng.uniform(-1, 1, 4), [0.5, -0.4, 0.3, -0.6]], rng.uniform(0.5, 1.5, 4)


def _ba_args():
    cams = rng.uniform(-0.3, 0.3, (4, 11))
    cams[:, 3:6] = rng.uniform(-1, 1, (4, 3))
    cams[:, 6] = 1.0
    X = rng.uniform(-1, 1, (4, 3))
    X[:, 2] += 6.0
    return cams, X, rng.uniform(0.5, 1.5, 4), rng.uniform(-1, 1, (4, 2)), 0.7, 0.4


rng = np.random.default_rng(5)
CASES = {
    "per_row": (per_row, lambda: (rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, 3)), (0, 1),
                True),
    "rotations": (rotations, lambda: (rng.uniform(-1, 1, (5, 3)), rng.uniform(-1, 1, (5, 3))),
                  (0, 1), True),
    "branched": (branched, lambda: (rng.uniform(-1, 1, 5),), 0, True),
    "branched_one": (branched, lambda: (rng.uniform(-1, 1, 1),), 0, True),
    "in_branch": (in_branch, lambda: (rng.uniform(0.1, 1, 5),), 0, True),
    "in_branch_not_taken": (in_branch, lambda: (-rng.uniform(0.1, 1, 5),), 0, True),
    "det": (det, lambda: (rng.uniform(-1, 1, (4, 4)),), 0, True),
    "reads_its_sum": (reads_its_sum, lambda: (rng.uniform(-1, 1, 5),), 0, False),
    "squared_sum": (squared_sum, lambda: (rng.uniform(-1, 1, 5),), 0, False),
    "writes_out": (writes_out, lambda: (rng.uniform(-1, 1, 5),), 0, False),
    "rebinds": (rebinds, lambda: (rng.uniform(-1, 1, 5),), 0, False),
    "rotation_branch": (rotation_branch, lambda: (rng.uniform(0.2, 1, (6, 2)), np.c_[
        rng.uniform(-1, 1, (6, 2)), [0.5, -0.5, 0.7, -0.3, 0.2, -0.9]]), (0, 1), True),
    "one_sided": (one_sided, lambda: (np.array([0.3, -0.4, 0.8, -0.1, 0.6]),), 0, True),
    "carried_in_branch": (carried_in_branch, lambda: (np.array([-0.3, 0.4, -0.8, 0.6]),), 0,
                          False),
    "bound_after_branch": (bound_after_branch, lambda: (np.array([-0.3, 0.4, -0.8]),), 0,
                           False),
    "through_calls": (through_calls, lambda: (rng.uniform(-1, 1, (4, 3)),
                                              rng.uniform(-1, 1, (4, 2))), (0, 1), True),
    "ba": (ba_weighted, _ba_args, (0, 1, 2), True),
    "while_around": (while_around, lambda: (rng.uniform(-1, 1, 4),), 0, False),
    "while_inside": (while_inside, lambda: (rng.uniform(-1, 1, 4),), 0, False),
    "pairs": (pairs, lambda: _pair_args(5), (0, 1), True),
    "pairs_outer_numbers": (pairs_outer_numbers, _signed_pair_args, (0, 1), True),
    "pairs_outer_taped": (pairs_outer_taped, _pair_args, (0, 1), True),
    "pairs_fixed_inner": (pairs_fixed_inner, _pair_args, (0, 1), True),
    "pairs_outer_locals": (pairs_outer_locals, _signed_pair_args, (0, 1), False),
    "pairs_outer_sum": (pairs_outer_sum, _pair_args, (0, 1), False),
    "pairs_carried": (pairs_carried, _pair_args, (0, 1), False),
    "stops": (stops, lambda: (np.array([0.3, -0.2, 1.5, 0.4]),), 0, False),
}


@pytest.mark.filterwarnings("ignore:Output seems independent of input")  # autograd, x[0] < 0
@pytest.mark.parametrize("jit", [True, False], ids=["numba", "python"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_gradient_is_right(case, jit):
    func, make, wrt, _ = CASES[case]
    check_gradient(func, make(), wrt, jit=jit)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_sum_loop_has_no_backward_loop(case):
    """The backward sweep's `for ... in range(..., -1, -1)` is gone where the loop was
    reversed in place, and so are its tapes."""
    func, make, wrt, fused = CASES[case]
    g = srcgrad.grad(func, wrt=wrt, jit=False)
    g(*make())
    code = "\n".join(line.split("#")[0] for line in g.source.splitlines())
    reversed_loops = [line for line in code.splitlines() if "-1, -1)" in line and "for " in line]
    assert (not reversed_loops) == fused, code


def test_a_pair_loop_is_one_loop_nest():
    """The inner loop of a pair loop takes the backward statements; the outer loop's
    mirror, left with nothing, goes too."""
    g = srcgrad.grad(pairs, wrt=(0, 1), jit=False)
    g(*CASES["pairs"][1]())
    code = "\n".join(line.split("#")[0] for line in g.source.splitlines())
    assert code.count("for ") == 2 and "-1, -1)" not in code, code


@pytest.mark.parametrize("case", ["pairs_outer_taped", "pairs_fixed_inner"])
def test_a_pair_loop_tapes_nothing(case):
    func, make, wrt, _ = CASES[case]
    g = srcgrad.grad(func, wrt=wrt, jit=False)
    g(*make())
    assert "_tape_" not in g.source and "record_at" not in g.source, g.source


def test_det_tapes_no_children():
    g = srcgrad.grad(det, jit=False)
    g(rng.uniform(-1, 1, (3, 3)))
    assert "_tape__t12" not in g.source and "tape_like" not in g.source, g.source


@pytest.mark.parametrize("case", ["per_row", "branched", "rotations"])
def test_vjp_scales_by_the_cotangent(case):
    """In a vjp the seed is the cotangent parameter: the sum's adjoint before the loop."""
    func, make, wrt, _ = CASES[case]
    args = make()
    value, pullback = srcgrad.vjp(func, *args)
    grads = pullback(2.5)
    expected = srcgrad.grad(func, wrt=tuple(range(len(args))))(*args)
    assert np.isclose(value, func(*args), rtol=1e-12)
    for got, want in zip(grads, expected if isinstance(expected, tuple) else (expected,)):
        assert_close(got, 2.5 * want, rtol=1e-12, atol=1e-14)
