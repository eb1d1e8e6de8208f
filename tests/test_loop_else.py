"""`for ... else` and `while ... else` (frontend/loop_else.py): the else block runs when
the loop ends without `break`, as in Python; refused before 2026-12-06.

Each function runs both ways (the else block run and skipped) on inputs kept clear of
the branch thresholds, so central differences see one branch; gradients are checked
against them as Python and compiled by numba.
"""
import numpy as np
import pytest

import srcgrad
from gradcheck import numerical_grad


def first_above(x, t):
    """The classic search: the first element above t, else the sum of all."""
    for i in range(x.shape[0]):
        if x[i] > t:
            s = x[i] ** 2
            break
    else:
        s = np.sum(x)
    return s * t


def while_else(x, t):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        s = s + np.sin(x[i])
        if s > t:
            break
        i += 1
    else:
        s = s * 3.0
    return s


def nested_break(x, t):
    """Leaving two loops at once: the inner else continues the outer loop."""
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[0]):
            s = s + x[i] * x[j]
            if s > t:
                break
        else:
            continue
        break
    return s


def else_with_return(x, t):
    for v in x:
        if v > t:
            return v * t
    else:
        r = np.sum(x * x)
    return r + t


def no_break(x, t):
    s = 0.0
    for v in x:
        s = s + v * t
    else:
        s = s * 2.0
    return s


X = np.array([0.3, -0.5, 0.9, 0.1])
CASES = [(f, t) for f in (first_above, while_else, nested_break, else_with_return, no_break)
         for t in (0.5, 2.0)]  # 0.5: a break (return) happens; 2.0: the else block runs


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("f, t", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_loop_else(f, t, jit):
    vg = srcgrad.value_and_grad(f, wrt=(0, 1), jit=jit)
    value, (gx, gt) = vg(X.copy(), t)
    assert vg.backend == ("numba" if jit else "python"), getattr(vg, "fallback_reason", "")
    assert np.isclose(value, f(X.copy(), t), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(gx, numerical_grad(f, (X.copy(), t), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gt, numerical_grad(f, (X.copy(), t), 1), rtol=1e-6, atol=1e-8)


def _structured(p, t):
    s = 0.0
    w = p["w"]
    for k in range(w.shape[0]):
        if w[k] > t:
            s = w[k] * p["b"]
            break
    else:
        s = np.sum(w) * p["b"]
    for name in p:  # unrolled over the dict's entries; no break: the else block runs
        s = s + np.sum(p[name])
    else:
        s = s * 2.0
    return s


@pytest.mark.parametrize("t", [0.5, 2.0])
def test_loop_else_with_a_structured_argument(t):
    p = {"w": np.array([0.3, 0.8, -0.2]), "b": 1.5}
    got = srcgrad.grad(_structured, jit=False)(p, t)
    w = lambda v: _structured({"w": v, "b": p["b"]}, t)  # noqa: E731
    b = lambda v: _structured({"w": p["w"], "b": v}, t)  # noqa: E731
    np.testing.assert_allclose(got["w"], numerical_grad(w, (p["w"],), 0), rtol=1e-6)
    assert np.isclose(got["b"], numerical_grad(b, (p["b"],), 0), rtol=1e-6)
