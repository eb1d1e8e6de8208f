"""Checks of the compiled form that what is known at their place implies are dropped
(transforms/implied_checks.py), and no other.

The rule is read on small functions written as compiled forms are (its decisions are the
checks left in the text); the end-to-end cases run forms whose checks were dropped and
compare their gradients with the generated function's to the bit (gradcheck)."""
import ast
import textwrap

import gast
import numpy as np
import pytest

from gradcheck import assert_form_agrees, form_code
from srcgrad.analysis import kinds as K
from srcgrad.transforms.implied_checks import implied_checks
from test_hoist_buffers import rk2

A1 = ("arr", 1, "f")


def _left(source: str, **params) -> list:
    """The check statements left in the function `source` after the pass."""
    func = gast.parse(textwrap.dedent(source)).body[0]
    implied_checks(func, K.infer(func, params))
    text = ast.unparse(gast.gast_to_ast(func))
    return [line.strip() for line in text.splitlines()
            if line.strip().startswith(("same_shape(", "index_in("))]


def test_a_check_repeated_through_an_alias_and_a_new_array_goes():
    left = _left("""
        def f(x, y):
            n = x.shape
            same_shape(y, n)
            z = np.empty(n)
            w = y
            same_shape(w, z.shape)
            same_shape(z, (x.shape[0],))
            return w
        """, x=A1, y=A1)
    assert left == ["same_shape(y, n)"]


def test_a_rebinding_between_keeps_the_check():
    left = _left("""
        def f(x, y, m):
            n = x.shape
            same_shape(y, n)
            y = np.empty(m)
            same_shape(y, n)
            return y
        """, x=A1, y=A1, m=K.I)
    assert left == ["same_shape(y, n)", "same_shape(y, n)"]


def test_what_one_arm_of_an_if_checked_does_not_hold_after_it():
    left = _left("""
        def f(x, y, c):
            if c > 0:
                same_shape(y, x.shape)
                index_in(x.shape[0], 3)
            same_shape(y, x.shape)
            index_in(y.shape[0], 3)
            return y
        """, x=A1, y=A1, c=K.I)
    assert left == ["same_shape(y, x.shape)", "index_in(x.shape[0], 3)",
                    "same_shape(y, x.shape)", "index_in(y.shape[0], 3)"]


def test_both_arms_of_an_if_and_an_arm_that_leaves():
    left = _left("""
        def f(x, y, c):
            if c > 0:
                same_shape(y, x.shape)
            else:
                raise ValueError()
            same_shape(x, y.shape)
            return y
        """, x=A1, y=A1, c=K.I)
    assert left == ["same_shape(y, x.shape)"]


def test_a_loop_keeps_what_its_body_preserves():
    """The state `y` keeps x's shape through the loop: the check in the body goes; `t`
    is rebound to an array of another length: its check stays."""
    left = _left("""
        def f(x, s, m):
            y = np.zeros(x.shape[0])
            t = np.zeros(x.shape[0])
            for step in range(s):
                same_shape(y, x.shape)
                same_shape(t, x.shape)
                k = np.empty(y.shape)
                y = k
                t = np.empty(m)
            return y
        """, x=A1, s=K.I, m=K.I)
    assert left == ["same_shape(t, x.shape)"]


def test_a_value_bound_only_in_a_loop_is_checked_after_it():
    """Found by a review: after a loop of no iterations `z` is unbound, and numba reads it
    as an empty array (Python raises); the check of z in a loop over another range stays."""
    left = _left("""
        def f(x, s, t):
            for step in range(s):
                z = np.empty(x.shape)
            for step in range(t):
                same_shape(z, x.shape)
            return x
        """, x=A1, s=K.I, t=K.I)
    assert left == ["same_shape(z, x.shape)"]


@pytest.mark.parametrize("second", ["range(s)", "range(s - 1, -1, -1)"])
def test_a_loop_of_the_same_range_runs_only_if_the_first_ran(second):
    """The backward sweep's loop runs exactly when the forward one ran: what held at the
    end of the forward loop's last iteration holds in it (z is bound, with x's shape)."""
    left = _left(f"""
        def f(x, s):
            for step in range(s):
                z = np.empty(x.shape)
            for step in {second}:
                same_shape(z, x.shape)
            return x
        """, x=A1, s=K.I)
    assert left == []


@pytest.mark.parametrize("between", ["s = m", "z = np.empty(m)", "if m > 0:\n        y = x"])
def test_what_a_loop_ran_with_is_forgotten_where_its_names_change(between):
    """The range's names bound again (the second loop's condition is another), z bound
    again; and the first loop in one arm of an `if` (the next statement may not follow
    it): the check stays."""
    first = "for step in range(s):\n        z = np.empty(x.shape)"
    if between.startswith("if"):
        first, between = "if m > 0:\n        for step in range(s):\n            z = " \
            "np.empty(x.shape)", "pass"
    source = f"def f(x, y, s, m):\n    {first}\n    {between}\n    for step in range(s):\n" \
        "        same_shape(z, x.shape)\n    return x\n"
    assert _left(source, x=A1, y=A1, s=K.I, m=K.I) == ["same_shape(z, x.shape)"]


def test_a_loop_that_may_break_says_nothing_of_its_last_iteration():
    left = _left("""
        def f(x, s, m):
            for step in range(s):
                if step > m:
                    break
                z = np.empty(x.shape)
            for step in range(s):
                same_shape(z, x.shape)
            return x
        """, x=A1, s=K.I, m=K.I)
    assert left == ["same_shape(z, x.shape)"]


def test_nested_loops_reversed_know_what_the_inner_forward_loop_bound():
    """lstm's shape: values bound in the inner forward loop, checked in the inner backward
    one; both conditions hold there."""
    left = _left("""
        def f(x, s, n):
            for t in range(s):
                for k in range(n):
                    z = np.empty(x.shape)
            for t in range(s - 1, -1, -1):
                for k in range(n - 1, -1, -1):
                    same_shape(z, x.shape)
                same_shape(z, x.shape)
            return x
        """, x=A1, s=K.I, n=K.I)
    assert left == ["same_shape(z, x.shape)"]  # the outer loop's: the inner may not have run


def test_facts_of_values_first_bound_in_the_loop_do_not_join_values_before_it():
    """Found while building the pass: `z` is checked against x and then against y in the
    loop, so at the end of the body x and y have one extent; before the loop they need
    not, and `z` is unbound there. The check of y against x at the head stays, and so
    does the index that only z's check implied at the end of the body (index 0 of an
    empty x); z's own index check goes, implied by x's just before it."""
    left = _left("""
        def f(x, y, s):
            for step in range(s):
                same_shape(y, x.shape)
                index_in(x.shape[0], 0)
                z = np.empty(x.shape)
                index_in(z.shape[0], 0)
                same_shape(z, y.shape)
            return x
        """, x=A1, y=A1, s=K.I)
    assert left == ["same_shape(y, x.shape)", "index_in(x.shape[0], 0)"]


def test_a_tape_made_in_the_first_iteration_is_checked_in_the_later_ones():
    """`T`, made at i == 0, is unbound where the later iterations' `if` skips its making,
    as far as the rule sees: its rows' check stays."""
    left = _left("""
        def f(x, s):
            for i in range(s):
                if i == 0:
                    T = tape_like(x, trip_count(0, s, 1))
                r = T[i]
                same_shape(r, x.shape)
            return x
        """, x=A1, s=K.I)
    assert left == ["same_shape(r, x.shape)"]


def test_an_element_read_twice_around_its_store_is_two_values():
    """Found by a review: `p[j]` is not a term (an array's element may change)."""
    left = _left("""
        def f(x, p, k):
            for j in range(p.shape[0]):
                a = p[j]
                index_in(x.shape[0], a)
                p[j] = a + k
                b = p[j]
                index_in(x.shape[0], b)
            return x
        """, x=A1, p=("arr", 1, "i"), k=K.I)
    assert left == ["index_in(x.shape[0], a)", "index_in(x.shape[0], b)"]


@pytest.mark.parametrize("body", [
    """
    for i in range(s):
        if i > m:
            break
    else:
        same_shape(y, x.shape)
    same_shape(y, x.shape)""",
    """
    same_shape(y, x.shape)
    for i in range(s):
        if i > m:
            break
    else:
        y = np.empty(m)
    same_shape(y, x.shape)""",
    """
    for i in range(s):
        y = np.empty(m)
        for j in range(1):
            pass
        else:
            break
    same_shape(y, x.shape)"""], ids=["else-checks", "else-binds", "break-in-inner-else"])
def test_a_break_skips_the_loops_else(body):
    """Found by a review: the `else` of a loop runs only where no `break` left it."""
    source = "def f(x, y, s, m):" + textwrap.indent(textwrap.dedent(body), "    ") + \
        "\n    return y\n"
    assert _left(source, x=A1, y=A1, s=K.I, m=K.I)[-1] == "same_shape(y, x.shape)"


def test_a_tape_of_a_value_that_changes_shape_keeps_the_check():
    left = _left("""
        def f(x, s, m):
            v = x
            for i in range(s):
                if i == 0:
                    T = tape_like(v, trip_count(0, s, 1))
                r = T[i]
                same_shape(r, v.shape)
                v = np.empty(m)
            return x
        """, x=A1, s=K.I, m=K.I)
    assert left == ["same_shape(r, v.shape)"]


def test_a_loop_with_break_keeps_only_what_its_body_does_not_bind():
    left = _left("""
        def f(x, y, s, m):
            same_shape(y, x.shape)
            for step in range(s):
                same_shape(y, x.shape)
                if step > m:
                    break
                y = np.empty(m)
            return y
        """, x=A1, y=A1, s=K.I, m=K.I)
    assert left == ["same_shape(y, x.shape)", "same_shape(y, x.shape)"]


def test_extents_of_tape_rows_and_a_shape_of_another_length():
    left = _left("""
        def f(x, s):
            T = tape_like(x, trip_count(0, s, 1))
            U = tape_like(x, trip_count(0, s, 1))
            index_in(T.shape[0], s - 1)
            index_in(U.shape[0], s - 1)
            r = T[s - 1]
            same_shape(r, x.shape)
            same_shape(r, (x.shape[0], 1))
            return r
        """, x=A1, s=K.I)
    assert left == ["index_in(T.shape[0], s - 1)", "same_shape(r, (x.shape[0], 1))"]


def test_an_if_left_empty_by_its_checks_goes():
    left = _left("""
        def f(x, y, n):
            index_in(x.shape[0], n - 1)
            same_shape(y, x.shape)
            if 0 < n:
                index_in(y.shape[0], n - 1)
            return y
        """, x=A1, y=A1, n=K.I)
    assert left == ["index_in(x.shape[0], n - 1)", "same_shape(y, x.shape)"]


def test_ode_steps_drop_the_checks_of_their_stages_and_state():
    """rk2's step: the state, the second stage's argument (a row of its tape) and the
    stages have x's shape by construction, and the backward loop runs only if the forward
    one ran (k2 is then bound). Left: the buffers made before the loops, whose shape is
    only known through their check."""
    code = form_code(rk2, 0, (np.linspace(0.2, 0.9, 6), 3))
    assert "same_shape(y," not in code and "same_shape(y___shifted2" not in code
    assert "same_shape(z___shifted2, (_t15,))" in code and "same_shape(k2, _n" not in code


X = np.linspace(0.2, 0.9, 6)


def stages(x, s):
    """Carried state, stages first bound in the loop, their adjoints: checks dropped."""
    y = np.zeros(x.shape[0]) + 0.3
    for step in range(s):
        k1 = np.sin(y) * x
        k2 = np.cos(y + 0.5 * k1) * x
        y = y + 0.1 * (k1 + k2)
    return np.sum(y * y)


def swap(x, s):
    """Two buffers swapped by name each step."""
    u = x.copy()
    v = x * 0.5
    for step in range(s):
        for i in range(1, x.shape[0] - 1):
            v[i] = u[i] + 0.2 * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        u, v = v, u
    return np.sum(u * u)


@pytest.mark.parametrize("func, args", [(stages, (X, 4)), (stages, (X, 0)), (swap, (X, 3)),
                                        (rk2, (X, 3))],
                         ids=["stages", "stages-0", "swap", "rk2"])
def test_the_form_agrees_to_the_bit(func, args):
    assert_form_agrees(func, args, 0, exact=True, oracle=True)


def unbound_after_no_iterations(x, s, t):
    """Found by a review: z is bound only if the first loop runs; the compiled form read
    it as an empty array of x's length (a crash) once its check was dropped."""
    acc = 0.0
    for i in range(s):
        z = x * 2.0
    for i in range(t):
        acc = acc + np.sum(x * z)
    return acc


def moving_index(w, x, idx, k):
    """Found by a review: p[j] read before and after its store; the second read's index
    check was dropped as the first's."""
    p = idx + 0
    s = 0.0
    for j in range(p.shape[0]):
        s = s + w * x[p[j]]
        p[j] = p[j] + k
        s = s + w * x[p[j]]
    return s


def test_a_name_unbound_after_a_loop_raises_as_python_does():
    import srcgrad
    g = srcgrad.grad(unbound_after_no_iterations)
    assert np.allclose(g(X, 2, 2), 8.0 * X)
    with pytest.raises((NameError, UnboundLocalError, ValueError)):
        g(X, 0, 2)


def test_an_index_read_after_its_store_raises_as_numpy_does():
    import srcgrad
    g = srcgrad.grad(moving_index)
    assert np.isfinite(g(0.7, X, np.array([0, 1]), 1))
    with pytest.raises(IndexError):
        g(0.7, X, np.array([0, 1]), 10 ** 12)
