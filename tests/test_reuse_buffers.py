"""Scratch arrays of nested loops, and small vectors of single loops, made once, not at
every iteration (transforms/reuse_buffers.py): where no second reference to an
iteration's array can outlive it, the compiled form keeps one buffer per allocation; where
one can (the array is carried to the next iteration, kept as a view), it allocates as
before. A large array of a single loop gets a buffer made before the loop instead
(transforms/hoist_buffers.py).

Each function's gradient from its compiled form is checked against the one numba computes
from the generated function, central differences and autograd, and the form is read for
the buffers it has."""
import numpy as np
import pytest

from gradcheck import assert_form_agrees


def mixture(x, mu, q, l):
    """gmm's shape: per point and component, a centred point and its image under a
    triangular matrix, built element by element."""
    total = 0.0
    d = x.shape[1]
    for i in range(x.shape[0]):
        for k in range(mu.shape[0]):
            xc = x[i] - mu[k]
            qx = q[k] * xc
            for j in range(1, d):
                qx[j] += l[k, j] * xc[j - 1]
            total = total + np.sum(qx * qx) + np.sum(np.sin(xc))
    return total


def zeroed(x, w):
    """An accumulator array made with np.zeros inside two loops: zeroed at every reuse."""
    total = 0.0
    d = w.shape[0]
    for i in range(x.shape[0]):
        for k in range(2):
            acc = np.zeros(d)
            for j in range(d):
                acc[j] += w[j] * x[i, j] * (k + 1.0)
            total = total + np.sum(acc * acc)
    return total


def carried(x, r):
    """Each inner iteration's array becomes the next one's input: it outlives its
    iteration, so it is allocated afresh (a shared buffer would read itself)."""
    total = 0.0
    for s in range(2):
        prev = x * 1.0
        for i in range(3):
            new = prev * r + np.cos(prev)
            prev = new
        total = total + np.sum(prev * prev)
    return total


def viewed(x):
    """A view of the array is read at the next iteration: allocated afresh."""
    total = 0.0
    for s in range(2):
        keep = x[1:] * 1.0
        for i in range(3):
            y = x * (i + 1.0) + s
            total = total + np.sum(keep * y[:-1])
            keep = y[1:]
    return total


def rotate(rot, pt):
    """ba's shape: a three-element rotation of a point, read at constant positions."""
    c = np.cos(rot[0])
    return pt[0] * c - pt[1] * rot[1], pt[1] * c + pt[2] * rot[2], pt[2] * c + pt[0] * rot[1]


def observations(cams, X):
    """One loop; its scratch vectors (the centred point and, in the backward statements the
    loop runs after each forward iteration (transforms/immediate.py), its recomputation
    and its adjoint) are small vectors: buffers."""
    total = 0.0
    for i in range(X.shape[0]):
        xo = X[i] - cams[i, 3:6]
        r0, r1, r2 = rotate(cams[i, 0:3], xo)
        total += r0 / r2 + r1 * r1
    return total


def stepped(x, h):
    """A state vector updated in one loop, never read at a constant position: its arrays
    (and their adjoints) are left to np.empty (module doc)."""
    y = x * 1.0
    for s in range(4):
        k = np.sin(y) * x
        y = y + h * k
    return np.sum(y * y)


rng = np.random.default_rng(11)
CASES = {
    "mixture": (mixture, lambda: (rng.uniform(-1, 1, (5, 3)), rng.uniform(-1, 1, (4, 3)),
                                  rng.uniform(0.5, 1.5, (4, 3)), rng.uniform(-1, 1, (4, 3))),
                (0, 1, 2, 3)),
    "zeroed": (zeroed, lambda: (rng.uniform(-1, 1, (4, 3)), rng.uniform(-1, 1, 3)), (0, 1)),
    "carried": (carried, lambda: (rng.uniform(-1, 1, 4), 0.7), (0, 1)),
    "viewed": (viewed, lambda: (rng.uniform(-1, 1, 5),), 0),
    "observations": (observations, lambda: (rng.uniform(-1, 1, (5, 6)) + [0, 0, 0, 0, 0, 2],
                                            rng.uniform(-1, 1, (5, 3))), (0, 1)),
    "stepped": (stepped, lambda: (rng.uniform(-1, 1, 7), 0.1), (0, 1)),
}
_RESULTS = {}


def _run(case):
    """The gradient function of a case, once its form has been checked (and run)."""
    if case not in _RESULTS:
        func, make, wrt = CASES[case]
        _RESULTS[case] = assert_form_agrees(func, make(), wrt, oracle=True)
    return _RESULTS[case]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_gradient_is_the_functions(case):
    _run(case)


def test_scratch_arrays_get_buffers():
    form = _run("mixture").compiled_source
    assert "_buf_xc = np.empty((0,))" in form and "if _buf_xc.shape != " in form, form
    assert "xc = _buf_xc" in form, form


def test_a_reused_zeros_is_zeroed_again():
    form = _run("zeroed").compiled_source
    code = [line.strip() for line in form.splitlines() if not line.strip().startswith("#")]
    assert "_buf_acc.fill(0.0)" in code and not any(c.startswith("acc = np.zeros(") for c in code)


def test_small_vectors_of_one_loop_get_buffers():
    form = _run("observations").compiled_source
    buffers = [line.strip() for line in form.splitlines() if line.strip().startswith("_buf_")
               and line.strip().endswith("= np.empty((0,))")]
    assert "_buf_xo = np.empty((0,))" in buffers and "_buf__adj_xo = np.empty((0,))" in buffers, \
        form


@pytest.mark.parametrize("case, name", [("carried", "new"), ("viewed", "y")])
def test_arrays_that_outlive_their_iteration_are_made_afresh(case, name):
    form = _run(case).compiled_source
    assert f"_buf_{name} " not in form, form


def test_arrays_of_one_loop_not_read_at_constant_positions_get_a_buffer_before_it():
    """transforms/hoist_buffers.py: made once before the loop, not checked at every
    iteration (which measured slower than allocating for large arrays)."""
    form = _run("stepped").compiled_source
    assert "    _buf__adj_k = np.empty(" in form and "if _buf__adj_k.shape" not in form, form


COPIED = """
def f(x):
    total = 0.0
    w = np.zeros(3)
    for i in range(x.shape[0]):
        for j in range(2):
            v = np.empty(3)
            v[0] = x[i] + j
            total = total + w[1] * v[0]
            w = v
    return total
"""


@pytest.mark.parametrize("read_later, buffered", [(True, 0), (False, 1)])
def test_an_array_copied_to_a_name_read_after_the_next_allocation_is_made_afresh(
        read_later, buffered):
    """`w = v` (the compiled form binds such copies, `xo = _xo_a`): if w is read after v's
    statement runs again, a shared buffer would have changed w's values under it."""
    import gast
    from srcgrad.analysis import kinds as K
    from srcgrad.transforms.reuse_buffers import reuse_buffers
    source = COPIED if read_later else COPIED.replace("w[1] * v[0]", "v[1] * v[0]")
    func = gast.parse(source).body[0]
    kinds = K.infer(func, {"x": ("arr", 1, "f")})
    assert reuse_buffers(func, kinds, lambda base: base) == buffered
