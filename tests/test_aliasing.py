"""`z op= v` on an array something else still holds, writes into shared arrays, complex values.

srcgrad computes `z += v` as `z = z + v` (srcgrad/aliasing.py); NumPy updates
an array z in place. Every function here either gives NumPy's value and a
gradient that matches central finite differences, or raises a clear error
naming this file's line (marked `# MARK:<name>`) and the user's own variable
names, never a generated one (`_s1`, `_t3`, `y__2`, `p__h1`).

Most cases run as plain Python (`jit=False`); a few shared functions also
run compiled by numba, where the checks are typed at compile time.
"""
import os
import re
from pathlib import Path

import numpy as np
import pytest

import srcgrad
from gradcheck import check_gradient

THIS_FILE = Path(__file__).resolve()
BASENAME = os.path.basename(__file__)
_LINES = THIS_FILE.read_text().splitlines()
GENERATED = re.compile(r"\b_(s|t|i|r|n)\d+\b|__\d+\b|\w__\w+\d\b|<caller>")
JIT = [pytest.param(False, id="python"), pytest.param(True, id="numba")]


def marked_line(marker):
    tag = "# MARK:" + marker
    hits = [n for n, text in enumerate(_LINES, 1) if text.rstrip().endswith(tag)]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times"
    return hits[0]


def vec():
    return np.array([0.3, -0.4, 0.8])


def mat():
    return np.array([[0.3, 0.5], [0.1, -0.2]])


# ---------------------------------------------------------------------------
# updates NumPy makes in place, seen through something else: a clear error
# ---------------------------------------------------------------------------

def it_mut(y):
    s = 0.0
    for t in y:  # MARK:it_mut_loop
        y += 1.0  # MARK:it_mut
        s = s + t * t
    return s


def rows(A):
    for row in A:
        row += np.sin(row)  # MARK:rows
    return np.sum(A * A)


def row_index(A):
    row = A[1]
    row += 1.0  # MARK:row_index
    return np.sum(A * A)


def row_slice(A):
    B = A[1:]
    B *= 2.0  # MARK:row_slice
    return np.sum(A * A)


def transposed(A):
    B = A.T
    B += 1.0  # MARK:transposed
    return np.sum(A * np.arange(4.0).reshape(2, 2))


def reshaped(x):
    B = x.reshape(3, 1)
    B -= 1.0  # MARK:reshaped
    return np.sum(x * x)


def list_before(x):
    h = np.tanh(x)
    hs = []
    for t in range(3):
        hs.append(h)
        h += 1.0  # MARK:list_before
    return np.sum(hs[0] * hs[1]) + np.sum(h)


def list_after(x):
    h = np.tanh(x)
    hs = []
    for t in range(3):
        h += 1.0  # MARK:list_after
        hs.append(h)
    return np.sum(hs[0] * hs[-1])


def tuple_holds(x, c):
    d = c * 1.0
    p = (d, 2.0)
    d += 1.0  # MARK:tuple_holds
    return np.sum(x * p[0])


def source_augmented(x):
    y = x
    x += 1.0  # MARK:source_augmented
    return np.sum(x * y)


def second_name(x):
    y = x
    y += 1.0  # MARK:second_name
    return np.sum(x * y)


def alias_after_update(x):
    y = x * 1.0
    z = y * 0.0
    s = 0.0
    for t in range(3):
        y += 1.0  # MARK:alias_after_update
        s = s + np.sum(z * y)
        z = y
    return s


def partner_bound_later(x):
    y = x * 1.0
    s = 0.0
    for i in range(3):
        y += 1.0  # MARK:partner_bound_later
        if i > 0:
            s = s + np.sum(z * x)
        z = y
    return s


def while_alias(y):
    s = 0.0
    i = 0
    v = y
    while i < 3:
        s = s + np.sum(v * y)
        y += 1.0  # MARK:while_alias
        i = i + 1
    return s


def branch_alias(x, c):
    y = x * 1.0
    if c > 0:
        z = y
    else:
        z = y * 2.0
    y += 1.0  # MARK:branch_alias
    return np.sum(z * y)


def ident(v):
    return v


def returned_argument(x):
    y = ident(x)
    x += 1.0  # MARK:returned_argument
    return np.sum(x * y)


def bump(p):
    p += 1.0  # MARK:bump
    return np.sum(p)


def parameter_update(x):
    s = bump(x)
    return s + np.sum(x * x)


def parameter_update_in_loop(x):
    s = 0.0
    for k in range(2):
        s = s + bump(x)
    return s


def recursive_update(x, n):
    if n == 0:
        return np.sum(x)
    x += 1.0  # MARK:recursive_update
    return recursive_update(x, n - 1) + np.sum(x)


UPDATES = [
    (it_mut, vec, "it_mut", ["'y'", "the loop `for t in y`", f"{BASENAME}:"
                             f"{marked_line('it_mut_loop')}"]),
    (rows, mat, "rows", ["'row'", "'A'", "for row in A"]),
    (row_index, mat, "row_index", ["'row'", "'A'", "row = A[1]"]),
    (row_slice, mat, "row_slice", ["'B'", "'A'", "B = A[1:]"]),
    (transposed, mat, "transposed", ["'B'", "'A'", "B = A.T"]),
    (reshaped, vec, "reshaped", ["'B'", "'x'", "x.reshape(3, 1)"]),
    (list_before, vec, "list_before", ["'h'", "the list 'hs'", "hs.append(h)"]),
    (list_after, vec, "list_after", ["'h'", "the list 'hs'", "hs.append(h)"]),
    (source_augmented, vec, "source_augmented", ["'x'", "'y'", "y = x"]),
    (second_name, vec, "second_name", ["'y'", "'x'", "y = x"]),
    (alias_after_update, vec, "alias_after_update", ["'y'", "'z'", "z = y"]),
    (partner_bound_later, vec, "partner_bound_later", ["'y'", "'z'"]),
    (while_alias, vec, "while_alias", ["'y'", "'v'", "v = y"]),
    (returned_argument, vec, "returned_argument", ["'x'", "'y'", "y = ident(x)"]),
    (parameter_update, vec, "bump", ["'p' (in bump())", "'x'", "s = bump(x)"]),
    (parameter_update_in_loop, vec, "bump", ["'p' (in bump())", "'x'"]),
]


def _expect_error(func, args, marker, fragments, jit):
    g = srcgrad.value_and_grad(func, jit=jit)
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(srcgrad.SrcgradError) as info:
        g(*args)
    message = str(info.value)
    assert f"{BASENAME}:{marked_line(marker)}" in message, message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert not GENERATED.search(message), message
    for arg, old in zip(args, before):
        np.testing.assert_array_equal(arg, old)  # the caller's arrays are never modified
    if jit:
        assert g.backend == "numba"
    return message


@pytest.mark.parametrize("func, make, marker, fragments", UPDATES,
                         ids=[u[0].__name__ for u in UPDATES])
def test_shared_update_is_an_error(func, make, marker, fragments):
    message = _expect_error(func, (make(),), marker, fragments, jit=False)
    assert "in place" in message


@pytest.mark.parametrize("jit", JIT)
@pytest.mark.parametrize("func, make, marker", [
    (it_mut, vec, "it_mut"), (rows, mat, "rows"), (list_after, vec, "list_after"),
    (parameter_update, vec, "bump")], ids=["it_mut", "rows", "list_after", "parameter"])
def test_shared_update_is_an_error_compiled_too(func, make, marker, jit):
    _expect_error(func, (make(),), marker, [], jit=jit)


def test_shared_update_in_a_branch():
    _expect_error(branch_alias, (vec(), 1.0), "branch_alias", ["'y'", "'z'"], jit=False)


def test_tuple_holding_the_array():
    _expect_error(tuple_holds, (vec(), vec()), "tuple_holds", ["'d'", "'p'"], jit=False)


def test_recursive_function_updating_its_parameter():
    message = _expect_error(recursive_update, (vec(), 2), "recursive_update", ["'x'"],
                            jit=False)
    assert "calls itself" in message


# ---------------------------------------------------------------------------
# writes into an array something else still holds
# ---------------------------------------------------------------------------

def row_kept(A):
    row = A[0]
    A[0] = A[1] * 2.0  # MARK:row_kept
    return np.sum(row * A[1])


def swap_rows(A):
    B = A * 1.0
    t = B[0]
    B[0] = B[1]  # MARK:swap_rows
    B[1] = t
    return np.sum(B * np.arange(4.0).reshape(2, 2))


def list_written(x):
    y = x * 1.0
    hs = [y]
    y[0] = 5.0  # MARK:list_written
    return np.sum(hs[0] * x)


def doubles_first(u):
    u[0] = u[0] * 2.0  # MARK:doubles_first
    return np.sum(u)


def caller_reads_after(x):
    y = x * 1.0
    y = y * 3.0
    s = doubles_first(y)
    return s + np.sum(y * x)


@pytest.mark.parametrize("func, make, marker, fragments", [
    (row_kept, mat, "row_kept", ["'A'", "'row'", "row = A[0]"]),
    (swap_rows, mat, "swap_rows", ["'B'", "'t'", "t = B[0]"]),
    (list_written, vec, "list_written", ["'y'", "the list 'hs'"]),
    (caller_reads_after, vec, "doubles_first", ["'u' (in doubles_first())", "'y'"]),
], ids=["row_kept", "swap_rows", "list_written", "caller_reads_after"])
def test_write_into_shared_array_is_an_error(func, make, marker, fragments):
    message = _expect_error(func, (make(),), marker, fragments, jit=False)
    assert "writes into" in message


# ---------------------------------------------------------------------------
# the same forms where nothing observes the old array: NumPy's numbers
# ---------------------------------------------------------------------------

def alias_unused(x):
    y = x
    y += 1.0
    return np.sum(y * y)


def scalar_element_kept(x):
    t = x[0]
    x += 1.0
    return t * np.sum(x)


def scalar_partner_in_loop(y):
    s = 0.0
    for i in range(3):
        t = y[1]
        y += 0.5
        s = s + t * np.sum(y)
    return s


def scalar_sums(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    m = x[0]
    m *= 3.0
    return s + m


def own_copy(u0):
    u = u0.copy()
    for k in range(3):
        u += 0.1 * np.sin(u)
    return np.sum(u * u0)


def accumulator(x):
    acc = np.zeros(3)
    for k in range(3):
        acc += x * (k + 1.0)
    return np.sum(acc * x)


def update_after_loop(y):
    s = 0.0
    for t in y:
        s += t * t
    y += 1.0
    return s + np.sum(y * y)


def rebinding_in_loop(y):
    s = 0.0
    for t in y:
        y = y + 1.0
        s = s + t * np.sum(y)
    return s


def parameter_update_unused(x):
    y = x * 2.0
    return bump(y) + np.sum(x)


def appended_then_rebound(x):
    h = np.tanh(x)
    hs = []
    for t in range(3):
        hs.append(h)
        h = h + 1.0
    return np.sum(hs[0] * hs[2]) + np.sum(h)


def scalars_in_a_list(x):
    vals = []
    v = x[0]
    for i in range(3):
        vals.append(v)
        v += x[1]
    return vals[0] * vals[2] + v


def list_of_elements(x):
    h = x * 1.0
    vals = []
    for i in range(3):
        vals.append(h[0])
        h += 1.0
    return vals[0] * vals[2] + np.sum(h * x)


def swap_elements(x):
    y = x * 1.0
    t = y[0]
    y[0] = y[1]
    y[1] = t
    return np.sum(y * np.arange(3.0))


def rows_own_copies(A):
    s = 0.0
    for row in A:
        r = row.copy()
        r += np.sin(r)
        s = s + np.sum(r * row)
    return s


def view_unused_after(A):
    B = A[1:]
    B *= 2.0
    return np.sum(B * B)


FINE = [alias_unused, scalar_element_kept, scalar_partner_in_loop, scalar_sums, own_copy,
        accumulator, update_after_loop, rebinding_in_loop, parameter_update_unused,
        appended_then_rebound, scalars_in_a_list, list_of_elements, swap_elements, rows_own_copies,
        view_unused_after]
_ARGS = {rows_own_copies: mat, view_unused_after: mat}


@pytest.mark.parametrize("func", FINE, ids=[f.__name__ for f in FINE])
def test_unobserved_updates_follow_numpy(func):
    check_gradient(func, (_ARGS.get(func, vec)(),), 0, jit=False)


@pytest.mark.parametrize("func", [scalar_partner_in_loop, own_copy, update_after_loop,
                                  list_of_elements, swap_elements, rows_own_copies],
                         ids=lambda f: f.__name__)
def test_unobserved_updates_follow_numpy_compiled(func):
    check_gradient(func, (_ARGS.get(func, vec)(),), 0, jit=True)


# ---------------------------------------------------------------------------
# messages name the user's variables, never generated ones
# ---------------------------------------------------------------------------

def loop_over_written(y3):
    y3 = y3 * 1.0
    s = 0.0
    for v in y3:  # MARK:loop_over_written
        y3 = y3 * 2.0
        s = s + v
    y3[0] = 1.0
    return s + np.sum(y3)


def writes_through_view(p0):
    w = p0[1:]  # MARK:writes_through_view
    w[0] = 2.0
    return np.sum(w)


def calls_view_writer(x):
    y = x * 1.0
    return writes_through_view(y) + writes_through_view(y)


def list_as_value(q):
    hs = [q]
    return hs * 2.0  # MARK:list_as_value


def calls_list_user(x):
    return list_as_value(x)


@pytest.mark.parametrize("func, marker, fragments", [
    (loop_over_written, "loop_over_written", ["'y3'", "y3.copy()"]),
    (calls_view_writer, "writes_through_view", ["'w' (in writes_through_view())", "`p0[1:]`",
                                                "w = p0[1:].copy()"]),
    (calls_list_user, "list_as_value", ["the list 'hs' (in list_as_value())"]),
], ids=["hoisted", "inlined_view", "inlined_list"])
def test_syntax_errors_name_user_variables(func, marker, fragments):
    with pytest.raises(srcgrad.SrcgradSyntaxError) as info:
        srcgrad.grad(func, jit=False)
    message = str(info.value)
    assert f"{BASENAME}:{marked_line(marker)}" in message, message
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert not GENERATED.search(message.split("\n")[0]), message


# ---------------------------------------------------------------------------
# complex values: not supported yet, a clear error before any number is made
# ---------------------------------------------------------------------------

COMPLEX_C = 1.0 + 2.0j


def complex_literal(x):
    return np.abs(x * (1 + 2j)) ** 2  # MARK:complex_literal


def complex_made(x):
    return np.abs(x * complex(1.0, 2.0)) ** 2  # MARK:complex_made


def complex_argument(x, c):
    return np.abs(x * c) ** 2


def complex_global(x):
    return np.abs(x * COMPLEX_C) ** 2


@pytest.mark.parametrize("func, marker, token", [
    (complex_literal, "complex_literal", "2j"), (complex_made, "complex_made", "complex(")])
def test_complex_in_the_source_is_rejected(func, marker, token):
    with pytest.raises(srcgrad.SrcgradSyntaxError, match="complex") as info:
        srcgrad.grad(func, jit=False)
    assert info.value.lineno == marked_line(marker)
    assert info.value.offset == _LINES[marked_line(marker) - 1].index(token) + 1


@pytest.mark.parametrize("jit", JIT)
def test_complex_argument_is_rejected(jit):
    g = srcgrad.grad(complex_argument, jit=jit)
    with pytest.raises(TypeError, match=r"argument 'c' is complex"):
        g(0.7, 1.0 + 2.0j)
    with pytest.raises(TypeError, match=r"argument 'c' is complex .*complex128"):
        g(0.7, np.array([1.0 + 2.0j]))
    with pytest.raises(TypeError, match=r"argument 'x'"):
        g(0.7 + 0.0j, 1.0)
    assert g(0.7, 2.0) == pytest.approx(2 * 0.7 * 4.0)


def test_complex_global_is_rejected():
    with pytest.raises(TypeError, match=r"the global 'COMPLEX_C' is complex"):
        srcgrad.grad(complex_global, jit=False)(0.7)
