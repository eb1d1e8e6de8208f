"""Stack tapes that keep only a loop's exit value in the compiled form
(transforms/exit_tapes.py). Each function runs its compiled form (SRCGRAD_LOOPS=strict,
conftest.py), checked against the gradient numba computes from the generated function
itself (to the last bit: the same values are read) and against central differences."""

import ast

import numpy as np
import pytest

from gradcheck import assert_form_agrees, form_code
from test_corpus_regressions import outer_value_read_in_inner_loop as residuals  # llsq's loop


def triangle(x):
    """The inner loop runs no iteration for i = 0."""
    total = 0.0
    for i in range(x.shape[0]):
        s = x[i]
        for j in range(i):
            s = s + x[j] * x[i]
        total += np.sin(s)
    return total


def products(x):
    """The backward loop reads p (the derivative of p * x[j]): the pushes stay."""
    total = 0.0
    for i in range(3):
        p = x[i]
        for j in range(x.shape[0]):
            p = p * x[j]
        total += p
    return total


def countdown(x):
    total = 0.0
    for i in range(x.shape[0]):
        s = x[i]
        k = 0
        while k < i:
            s = s - 0.5 * x[k]
            k += 1
        total += s * s
    return total


def two_loops(x):
    """Two assignments per inner iteration, and a second loop updating r after the first:
    the tape's pushes sit in two loops, which the rule does not take (values as before)."""
    total = 0.0
    for i in range(x.shape[0]):
        r = x[i]
        for j in range(i):
            r = r + x[j] * 0.5
            r = r - np.sin(x[j])
        for j in range(2):
            r = r + x[j] * 0.25
        total += r * r
    return total


rng = np.random.default_rng(5)
X = rng.uniform(-0.9, 0.9, 6)
CASES = [(residuals, (X, 9)), (triangle, (X,)), (products, (X,)), (countdown, (X,)),
         (two_loops, (X,))]


@pytest.mark.parametrize("func, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_the_form_agrees(func, args):
    assert_form_agrees(func, args, exact=True)


def _inner(code):
    """The source of each loop over j: the inner forward loop, then the backward one."""
    tree = ast.parse(code)
    return [ast.unparse(n) for n in ast.walk(tree)
            if isinstance(n, ast.For) and isinstance(n.target, ast.Name) and n.target.id == "j"]


def test_one_push_per_outer_iteration():
    code = form_code(residuals, 0, (X, 9))
    lines = [line.strip() for line in code.splitlines()]
    assert lines.count("_tape_r.append(r)") == 2 and lines.count("r = restore(_tape_r, r)") == 2
    loops = _inner(code)
    assert len(loops) == 2 and all("_tape_r" not in loop for loop in loops)


def test_a_value_the_backward_loop_reads_keeps_its_pushes():
    forward, backward = _inner(form_code(products, 0, (X,)))
    assert "_tape_p.append(p)" in forward and "p = restore(_tape_p, p)" in backward
