"""One array under two names, one of them written into: NumPy's numbers and exact gradients.

`u = new`, `u, c = new, 1.0`, `a, b = M`, `lst = [new]` and `a = b = x * 1.0`
give an array a second name (a view, for the rows of M). Where the function
then writes through one name after reading through the other, the backward
sweep must still read what the forward sweep read: srcgrad binds a copy
(frontend/normalize.py, `needs_copy`), and aliasing.py raises at run time
where NumPy's shared memory would be seen (both names used after the write).

Before 2026-12-06 the tuple, unpacking, list display, chained and top-level
swap forms gave gradients off by O(1) without an error (the backward sweep
read values written after the read), and `u = new` was refused outright,
although it is how stencils are written: `new = u.copy(); new[i] = ...; u = new`
(test_corpus_loops.py's heat_equation_steps and test_corpus_speed_shapes.py's
heat_fresh_array and wave_leapfrog check those; test_compiled_forms.py a buffer swap).
"""
import numpy as np
import pytest

import srcgrad
from gradcheck import check_gradient


def tuple_second_name(x):
    new = x * 1.0
    u, c = new, 1.0
    s = np.sum(u * u)
    new[0] = 5.0
    return s + np.sum(new * x) * c


def list_display(x):
    new = x * 1.0
    lst = [new]
    s = np.sum(lst[0] * lst[0])
    new[0] = 5.0
    return s + np.sum(new * x)


def list_element(x):
    new = x * 1.0
    lst = [x, x]
    lst[1] = new
    s = np.sum(lst[1] * lst[1])
    new[0] = 5.0
    return s + np.sum(new * x)


def unpacked_rows(x):
    M = np.outer(x, x)
    a, b, c, d = M
    s = np.sum(a * a) + np.sum(d)
    M[0] = 5.0
    return s + np.sum(M)


def swap_then_write(x):
    a = x * 1.0
    b = x * 2.0
    s = np.sum(a * a)
    a, b = b, a
    b[0] = 5.0
    return s + np.sum(b * x) + np.sum(a)


def chained_assignment(x):
    a = b = x * 1.0
    s = np.sum(b * b)
    a[0] = 5.0
    return s + np.sum(a * x)


def second_name_read_first(x):
    new = x * 1.0
    u = new
    s = np.sum(u * u)
    new[0] = 5.0
    return s + np.sum(new * x)


def written_second_name(x):
    a = x * 1.0
    s = np.sum(a * a)
    b = a
    b[0] = 5.0
    return s + np.sum(b * x)


X = np.array([0.3, -0.4, 0.8, 0.5])
ONE_ARGUMENT = [tuple_second_name, list_display, list_element, unpacked_rows, swap_then_write,
                chained_assignment, second_name_read_first, written_second_name]


@pytest.mark.parametrize("f", ONE_ARGUMENT, ids=lambda f: f.__name__)
def test_second_name_python(f):
    check_gradient(f, (X.copy(),), jit=False)


@pytest.mark.parametrize("f", [tuple_second_name, unpacked_rows, swap_then_write],
                         ids=lambda f: f.__name__)
def test_second_name_numba(f):
    check_gradient(f, (X.copy(),), jit=True)


def seen_through_other_name(x):
    new = x * 2.0
    u = new
    new[0] = 5.0  # NumPy changes u too, and u is read below
    return np.sum(new * x) + np.sum(u)


def written_while_other_read(x):
    u = x * 1.0
    for k in range(3):
        new = u
        s = np.sum(u * u)
        new[k] = s  # u is new: NumPy's next iteration reads the written value
    return np.sum(u * x)


@pytest.mark.parametrize("f, line, partner", [
    (seen_through_other_name, "new[0] = 5.0", "u"),
    (written_while_other_read, "new[k] = s", "u"),
], ids=["after", "loop"])
def test_shared_memory_seen_is_an_error(f, line, partner):
    with pytest.raises(srcgrad.SrcgradError) as info:
        srcgrad.grad(f, jit=False)(X.copy())
    message = str(info.value)
    assert "test_second_names.py" in message and line in message, message
    assert f"shares memory with '{partner}'" in message, message


def loop_name_reused(x):
    fs = []
    for s in range(3):
        f = np.zeros(2)
        f[0] = 1.5 * x[s]
        fs.append(f)
    total = 0.0
    for f in fs:  # f, written above, now names each element of fs
        total = total + np.sum(f * f)
    return total


def test_loop_variable_named_like_an_array_written_elsewhere():
    """The refusal names the user's loop and list, not desugar's `fs[_iK]`, and says what to
    change."""
    with pytest.raises(srcgrad.SrcgradSyntaxError) as info:
        srcgrad.grad(loop_name_reused, jit=False)(X.copy())
    message = str(info.value)
    assert "a loop binding 'f' to each element of `fs`" in message, message
    assert "for f2 in" in message and "for f in fs:" in message and "_i" not in message
