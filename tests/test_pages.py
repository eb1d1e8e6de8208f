"""Tapes of 32 MiB and more are advised onto huge pages (runtime/pages.py): the advice
changes how the kernel maps the memory, never what it holds."""
import numba
import numpy as np

import srcgrad
from gradcheck import assert_close, gradient_without_forms, numerical_grad
from srcgrad.runtime import tape_like
from srcgrad.runtime.pages import on_huge_pages
from test_compiled_forms import _shifted  # GradBench ode's right-hand side


@numba.njit
def _filled(rows, row):
    tape = tape_like(row, rows)
    for k in range(rows):
        tape[k] = row * k
    return tape


def test_a_large_tape_holds_what_is_written():
    row = np.linspace(0.0, 1.0, 1000)
    tape = _filled(4200, row)  # 33.6 MB: advised
    assert tape.nbytes >= 32 << 20
    np.testing.assert_array_equal(tape, np.arange(4200.0)[:, None] * row)
    small = _filled(3, row)
    np.testing.assert_array_equal(small, np.arange(3.0)[:, None] * row)


def test_advice_on_any_array_is_harmless():
    @numba.njit
    def advised(n):
        a = np.ones(n)
        on_huge_pages(a)
        return a.sum()
    assert advised(5 << 20) == float(5 << 20)
    assert advised(10) == 10.0
    on_huge_pages(np.ones(3))  # in Python: nothing


def steps(x, s):
    y = np.zeros(x.shape[0])
    for step in range(s):
        k1 = _shifted(x, y)
        k2 = _shifted(x, y + 0.01 * k1)
        y = y + 0.005 * (k1 + k2)
    return np.sum(y * y)


def test_a_gradient_whose_tapes_are_advised():
    x = np.random.default_rng(3).uniform(-1, 1, 2100)
    g = srcgrad.grad(steps)
    got = g(x, 2000)  # tapes of 2000 x 2100 numbers: 33.6 MB each
    assert g.backend == "numba"
    np.testing.assert_allclose(got, gradient_without_forms(steps, 0, (x, 2000)),
                               rtol=1e-12, atol=1e-15)
    few = np.random.default_rng(4).uniform(-1, 1, 6)
    assert_close(g(few, 300), numerical_grad(steps, (few, 300), 0), rtol=1e-5, atol=1e-8)
