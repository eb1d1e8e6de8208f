"""Element indices the compiled form checks itself (transforms/bounds.py), compiled
without numba's boundscheck. Each function runs its compiled form (SRCGRAD_LOOPS=strict,
conftest.py), checked against the gradient of the generated function itself (to the last
bit: the checks only read) and against central differences; an index out of bounds is
still NumPy's IndexError."""

import itertools

import numba
import numpy as np
import pytest

from gradcheck import assert_form_agrees, form_code
from srcgrad.runtime import span_in
from bench.problems.det import det
from bench.problems.ode import ode_last


def shifted(x):
    """Reads y[i - 1] and z[i]: a range from 1, a name bound to i - 1."""
    n = x.shape[0]
    y = np.sin(x)
    z = np.empty(n)
    z[0] = x[0]
    for i in range(1, n):
        j = i - 1
        z[i] = x[i] * y[j]
    return np.sum(z * z)


def wraps(x):
    """x[i - 1] at i = 0 is x[-1], as NumPy reads it."""
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * x[i - 1]
    return total


def stops_early(x, m):
    """The loop breaks before its range would leave x: no check may be made before it."""
    total = 0.0
    for i in range(m):
        if i >= x.shape[0]:
            break
        total += x[i] ** 2
    return total


def nested(a, w):
    """An outer loop's index in an inner loop, a counter index, a 2-d array."""
    total = 0.0
    for i in range(a.shape[0]):
        k = 0
        for j in range(i, a.shape[1]):
            total += a[i, j] * w[k]
            k += 1
    return total


def past_the_end(x):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i + 1] * x[i]
    return total


def gathers(x, idx):
    """An array of indices: the function keeps numba's boundscheck. (An index read from
    memory in a loop, `y[idx[i]]`, is a name after normalization: checked by the code.)"""
    y = np.sin(x) * x
    return np.sum(y[idx] ** 2)


def own_bounds(func, wrt, args):
    for line in form_code(func, wrt, args).splitlines():
        if line.startswith("OWN_BOUNDS = "):
            return eval(line.split("=", 1)[1])
    raise AssertionError("no OWN_BOUNDS line")


@pytest.mark.parametrize("func, args", [
    (shifted, (np.linspace(0.1, 1.3, 7),)),
    (wraps, (np.linspace(0.1, 1.3, 6),)),
    (stops_early, (np.linspace(0.1, 1.3, 5), 9)),
    (stops_early, (np.linspace(0.1, 1.3, 5), 3)),
    (stops_early, (np.linspace(0.1, 1.3, 5), 0)),
    (shifted, (np.array([0.7]),)),
    (nested, (np.arange(12.0).reshape(3, 4) / 7, np.linspace(0.5, 1.5, 4))),
], ids=["shifted", "wraps", "stops_early", "stops_early_inside", "no_iteration",
        "one_element", "nested"])
def test_checked_forms_agree(func, args):
    assert own_bounds(func, 0, args) == (f"{func.__name__}__grad",)
    assert_form_agrees(func, args, exact=True)


def assert_no_check_inside(code, loop_start):
    lines = code.splitlines()
    assert any(line.strip().startswith(loop_start) for line in lines)
    for k, line in enumerate(lines):
        if line.strip().startswith(loop_start):
            body = []
            for inner in lines[k + 1:]:
                if inner.strip() and \
                        len(inner) - len(inner.lstrip()) <= len(line) - len(line.lstrip()):
                    break
                body.append(inner)
            assert not any("index_in" in b or "span_in" in b for b in body), body


def test_ode_checks_once_per_loop():
    x = np.linspace(0.1, 0.9, 6)
    code = form_code(ode_last, 0, (x, 3))
    assert "OWN_BOUNDS = ('ode_last__grad',)" in code
    assert_form_agrees(ode_last, (x, 3), exact=True)
    assert_no_check_inside(code, "for i__ode_fun")  # the loops over the elements


def test_slices_bounded_by_names_need_no_check():
    """det's minors: `minor[:, j:] = A[1:, j + 1:]` read as `A[1 + _k, slice_at(_t7,
    A.shape[1]) + _j]` runs over max(0, A.shape[1] - slice_at(_t7, A.shape[1]))."""
    a = np.arange(16.0).reshape(4, 4) / 10 + np.eye(4)
    code = form_code(det, 0, (a,))
    assert "OWN_BOUNDS = ('det__grad', 'det__grad_all')" in code
    assert "slice_at(_t7, A.shape[1]) + _j" in code
    assert_no_check_inside(code, "for _j in")
    assert_form_agrees(det, (a,))


def test_out_of_bounds_is_numpys_index_error():
    import srcgrad
    with pytest.raises(IndexError):
        srcgrad.grad(past_the_end)(np.linspace(0.1, 1.0, 4))


def test_gathers_keep_numbas_boundscheck():
    x, idx = np.linspace(0.1, 1.0, 5), np.array([4, 0, 2, 2])
    assert own_bounds(gathers, 0, (x, idx)) == ()
    assert_form_agrees(gathers, (x, idx))


def test_span_in_is_ranges_rule():
    compiled = numba.njit(lambda *a: span_in(*a))
    for extent, start, stop, step, coef, offset in itertools.product(
            (0, 1, 3), (-2, 0, 2), (-1, 0, 3), (-2, -1, 1, 2), (0, 1), (-3, -1, 0, 2)):
        values = [coef * v + offset for v in range(start, stop, step)]
        ok = all(-extent <= v < extent for v in values)
        for run in (span_in, compiled):
            if ok:
                run(extent, start, stop, step, coef, offset)
            else:
                with pytest.raises(IndexError):
                    run(extent, start, stop, step, coef, offset)


def element_read_in_an_empty_loop(x, y, m):
    """`z[3]` read in a loop of m iterations: with m = 0 nothing reads it (x has 3
    elements), and the sum its cotangent gathers across the loop (elements.py's `_acc`)
    must not be added into `_adj_z[3]` either. Found by `tests.fuzz.indices --seed 31`."""
    z = np.sin(x) * 1.5 + x
    total = 0.0
    for i in range(m):
        total += z[3] * y[i]
    return total + np.sum(y * y)


@pytest.mark.parametrize("m", [0, 2])
def test_a_sum_across_a_loop_that_did_not_run_touches_nothing(m):
    x, y = np.linspace(0.1, 0.7, 3 if m == 0 else 5), np.linspace(0.2, 0.9, 4)
    assert_form_agrees(element_read_in_an_empty_loop, (x, y, m), exact=True)


def view_bound_in_a_loop(x, y):
    """The loop only binds a view (unused): its index check moves before the loop, which
    is left with its line comment; the form keeps a `pass` there (fuzz seed 530)."""
    if np.max(y[-1]) >= 1.5:
        for i in range(3):
            v1 = y[-1]  # noqa: F841
    elif abs(y[0, 2]) <= 2.0:
        y = np.sin((y + 0.5) * (x + x))
    return np.sum(y) + -0.25 * x


@pytest.mark.parametrize("shift", [0.0, 2.0])
def test_a_loop_left_with_comments_only_compiles(shift):
    y = np.linspace(-0.8, 1.1, 10).reshape(2, 5) + shift
    assert_form_agrees(view_bound_in_a_loop, (-0.52, y), wrt=1)
