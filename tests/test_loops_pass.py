"""transforms/loops.py on its own: random programs of array statements, run as Python
before and after the rewrite, must compute the same arrays.

The programs mix what makes the rewrite's scheduling delicate: views of one array that
overlap off by one (`x[1:]`, `x[:-1]`), writes and accumulations through them, in-place
updates, second names for an array, reductions whose numbers later statements read,
element writes, loops around all of it, and names reused. No numba: the rewritten
function runs as Python (its per-element expressions are NumPy scalars), so hypothesis
can try many programs, and a failure shrinks to a short one.
"""
import textwrap

import gast
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from srcgrad.analysis.kinds import of_value
from srcgrad.backend.emit import render
from srcgrad import runtime
from srcgrad.transforms.loops import fuse_loops

FULL, SHIFTED = "full", "shifted"  # arrays of n elements, views of n - 1
ARRAYS = ["a", "b", "c", "d"]


@st.composite
def operand(draw, shape):
    name = draw(st.sampled_from(ARRAYS))
    if shape == FULL:
        return name
    return f"{name}[{draw(st.sampled_from(['1:', ':-1']))}]"


@st.composite
def expression(draw, shape, depth=0):
    kind = draw(st.integers(0, 5 if depth < 2 else 1))
    if kind == 0:
        return draw(operand(shape))
    if kind == 1:
        return f"{draw(operand(shape))} * {draw(st.sampled_from(['0.5', 's', '2.0']))}"
    if kind in (2, 3):
        op = draw(st.sampled_from(["+", "-", "*"]))
        return f"({draw(expression(shape, depth + 1))} {op} {draw(expression(shape, depth + 1))})"
    if kind == 4:
        return f"np.{draw(st.sampled_from(['sin', 'tanh', 'exp']))}({draw(expression(shape, depth + 1))} * 0.1)"
    return f"{draw(expression(shape, depth + 1))} / (1.5 + {draw(operand(shape))} * 0.0)"


@st.composite
def statement(draw):
    kind = draw(st.integers(0, 8))
    target = draw(st.sampled_from(ARRAYS))
    if kind <= 2:
        return f"{target} = {draw(expression(FULL))}"
    if kind == 3:
        view = draw(st.sampled_from(["1:", ":-1"]))
        op = draw(st.sampled_from(["=", "+=", "-="]))
        return f"{target}[{view}] {op} {draw(expression(SHIFTED))}"
    if kind == 4:
        return f"{target} {draw(st.sampled_from(['+=', '-=']))} {draw(expression(FULL))}"
    if kind == 5:
        return f"{target} = {draw(st.sampled_from(ARRAYS))}"  # a second name
    if kind == 6:  # sums, some of them into the loops (window_forms.py); s read later
        form = draw(st.sampled_from(["s = np.sum({}) * 0.01", "s = np.sum({})",
                                     "s += np.sum({})", "s -= unbroadcast({}, s)"]))
        return form.format(draw(expression(FULL)))
    if kind == 7:
        return f"{target}[0] = s + {draw(st.sampled_from(ARRAYS))}[1]"
    return f"{target} = {draw(expression(FULL))}.copy()"


@st.composite
def program(draw):
    lines = ["def f(a, b, c, d, s):"]
    for _ in range(draw(st.integers(1, 3))):
        block = draw(st.lists(statement(), min_size=1, max_size=7))
        if draw(st.booleans()):
            lines.append("    for t in range(2):")
            lines += ["        " + line for line in block]
        else:
            lines += ["    " + line for line in block]
    lines.append("    return a, b, c, d, s")
    return "\n".join(lines) + "\n"


def _run(source, args):
    namespace = {"np": np, **{n: getattr(runtime, n) for n in runtime.__all__}}
    exec(source, namespace)
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with np.errstate(all="ignore"):
        return namespace["f"](*copies)


def _same(source, args):
    """Run `source` before and after the rewrite: the same arrays (sums up to order)."""
    try:
        expected = _run(source, args)
    except Exception:  # not a valid NumPy program (a second name then a shape change)
        return
    fused = _fused_source(source, args)
    if fused is None:
        return
    for x, y in zip(_run(fused, args), expected):
        np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-12,
                                   err_msg=f"\n{source}\n---\n{fused}")


def _fused_source(source, args):
    func = gast.parse(textwrap.dedent(source)).body[0]
    names = [a.id for a in func.args.args]
    fused, _ = fuse_loops(func, {n: of_value(a) for n, a in zip(names, args)})
    return None if fused is None else render([fused], "import numpy as np\n")[0]  # (a copy)


@settings(max_examples=500, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(program(), st.integers(3, 6))
def test_the_rewritten_program_computes_the_same_arrays(source, n):
    rng = np.random.default_rng(n)
    _same(source, [rng.uniform(-1, 1, n) for _ in ARRAYS] + [0.3])


def test_views_through_a_rebound_index_are_not_one_view():
    """`m[k]` before and after k is rebound are different rows: a read of the first and a
    write of the second must not be taken for the same elements."""
    source = textwrap.dedent('''
        def f(m, x):
            k = 0
            r = m[k]
            k = 1
            m[k] = r * 2.0 + x
            y = r * x
            m[k] += y
            return m
    ''')
    args = [np.arange(6.0).reshape(2, 3), np.ones(3)]
    fused = _fused_source(source, args)
    assert fused is not None
    np.testing.assert_array_equal(_run(fused, args), _run(source, args))


# --- what generated code does: helpers, tapes, rows of a matrix -----------------------

@st.composite
def helper_statement(draw):
    target = draw(st.sampled_from(["a", "b", "u"]))
    other = draw(st.sampled_from(["a", "b", "m[i]", "m[j]"]))
    kind = draw(st.integers(0, 10))
    if kind == 0:
        return f"{target} = unbroadcast({draw(expression(FULL))}, {other})"
    if kind == 1:
        return f"{target} = zeros_like({other})"
    if kind == 2:
        return f"{target} = zeros_plus({other}, {draw(expression(FULL))})"
    if kind == 3:
        return f"{target} = zeros_plus({other}, {draw(st.sampled_from(['a', 'b']))}, True)"
    if kind == 4:
        return f"{target} = snapshot({other})"
    if kind == 5:
        return f"{target} = expand_to(s * 0.5, {other}, None, False)"
    if kind == 6:
        return f"m[{draw(st.sampled_from(['i', 'j']))}] {draw(st.sampled_from(['=', '+=']))} " \
               f"{draw(expression(FULL))}"
    if kind == 7:
        return f"{target} = unbroadcast({draw(st.sampled_from(['a', 'b']))}, {other})"
    if kind == 8:
        return f"s = s + np.sum({target}) * 0.1"
    if kind == 9:
        return f"s += unbroadcast({draw(expression(FULL))}, s)"
    return f"{target} = {draw(expression(FULL))}"


@st.composite
def taped_program(draw):
    forward = draw(st.lists(helper_statement(), min_size=1, max_size=6))
    backward = draw(st.lists(helper_statement(), min_size=1, max_size=6))
    recorded = draw(st.sampled_from(["a", "b", "u"]))
    lines = ["def f(a, b, m, s):", "    u = a * 1.0", "    for i in range(3):",
             "        j = 2 - i"]
    lines += ["        " + line for line in forward]
    lines += ["        if i == 0:", f"            T = tape_like({recorded}, 3)",
              f"        record_at(T, i, {recorded})", "    for i in range(2, -1, -1):",
              "        j = 2 - i"]
    lines += ["        " + line for line in backward]
    lines += [f"        {recorded} = restore_at(T, i, {recorded})",
              "    return a, b, m, s, u, T"]
    return "\n".join(lines) + "\n"


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(taped_program(), st.integers(3, 5))
def test_generated_code_forms_compute_the_same_arrays(source, n):
    rng = np.random.default_rng(n)
    _same(source, [rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), rng.uniform(-1, 1, (3, n)),
                   0.3])


# --- updates of single elements: sums across a loop, cotangents passed through ---------

@st.composite
def element_statement(draw):
    i = draw(st.sampled_from(["0", "1", "i", "j"]))
    target = draw(st.sampled_from(["a", "b", "c"]))
    kind = draw(st.integers(0, 5))
    if kind <= 1:
        op = draw(st.sampled_from(["+=", "-="]))
        return [f"{target}[{i}] {op} {draw(st.sampled_from(['b', 'c']))}[j] * s + a[j]"]
    if kind == 2:  # the backward code of an element update
        return [f"g = unbroadcast(snapshot({target}[{i}]), s)",
                f"{target}[{i}] = zeros_like({target}[{i}])",
                "h = unbroadcast(g, s)",
                f"{draw(st.sampled_from(['a', 'b', 'c']))}[j] += g * 0.5",
                f"{target}[{i}] += h"]
    if kind == 3:
        return [f"{target} = {target} * 0.5"]  # a rebinding in the loop
    if kind == 4:
        return [f"s = s + {target}[{i}] * 0.1"]  # a read of the element in the loop
    return [f"{target}[j] = {draw(st.sampled_from(['a', 'b', 'c']))}[{i}] + 1.0"]


@st.composite
def element_program(draw):
    lines = ["def f(pa, pb, pc, s):", "    a = pa * 1.0", "    b = pb * 1.0", "    c = pc * 1.0",
             "    for i in range(2):", "        for j in range(3):"]  # (arrays of their own)
    for block in draw(st.lists(element_statement(), min_size=1, max_size=5)):
        lines += ["            " + line for line in block]
    lines += ["    return a, b, c, s"]
    return "\n".join(lines) + "\n"


@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(element_program())
def test_element_sums_and_passed_cotangents_compute_the_same(source):
    rng = np.random.default_rng(7)
    _same(source, [rng.uniform(-1, 1, 4) for _ in range(3)] + [0.3])
