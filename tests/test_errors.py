"""Error reporting and API behaviour of srcgrad.

Every function under test is defined at module level in this file (or, for
the decorator forms, inside the test), so srcgrad can read its source.
Expected line numbers are never hard-coded: each offending line carries a
``# MARK:<name>`` comment and :func:`marked_line` finds it in this file.

Numba compilations are slow, so ``jit=False`` is used wherever a test is
about an error raised before compilation or about Python-level behaviour;
``jit=True`` appears only where the numba path itself matters.

Tests marked ``xfail(strict=True)`` document bugs or unclear messages in
srcgrad; each ``reason`` says what is wrong.
"""

import math
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import srcgrad
from gradcheck import assert_close, numerical_grad

THIS_FILE = Path(__file__).resolve()
BASENAME = os.path.basename(__file__)
_LINES = THIS_FILE.read_text().splitlines()


def marked_line(marker):
    """The 1-based line number of the single line ending in ``# MARK:<marker>``."""
    tag = "# MARK:" + marker
    hits = [n for n, text in enumerate(_LINES, 1) if text.rstrip().endswith(tag)]
    assert len(hits) == 1, f"marker {marker!r} found {len(hits)} times"
    return hits[0]


def marked_offset(marker, token):
    """The 1-based column (SyntaxError.offset) of ``token`` on the marked line."""
    text = _LINES[marked_line(marker) - 1]
    assert token in text, (token, text)
    return text.index(token) + 1


def assert_points_at(err, marker):
    """``err``'s message names this file and the marked line (an absolute line number)."""
    line = marked_line(marker)
    assert f"{BASENAME}:{line}" in str(err), str(err)
    loc = getattr(err, "loc", None)
    if loc is not None:
        assert Path(loc.filename).resolve() == THIS_FILE
        assert loc.lineno == line


# Module data read by some functions below (constants for srcgrad, not inputs).
WEIGHTS = np.array([0.5, -1.25, 2.0, 0.75])
GLOBAL_SCALE = 2.0


# ===========================================================================
# 1. unsupported syntax -> SrcgradSyntaxError at grad() time
# ===========================================================================

def sx_loop_var(x):
    for i in range(3):  # MARK:loop-var
        i = i + 1
        x = x * i
    return x


def sx_try(x):  # a try runs as written (frontend/trying.py); a return cannot leave it
    try:
        return x * 2.0  # MARK:try
    except ValueError:
        return x


def sx_with(x):
    with warnings.catch_warnings():  # MARK:with
        y = x * 2.0
    return y


def sx_global(x):
    global GLOBAL_SCALE  # MARK:global
    return x * GLOBAL_SCALE


def _make_nonlocal():
    total = 0.0

    def sx_nonlocal(x):
        nonlocal total  # MARK:nonlocal
        total = x
        return x * 2.0

    return sx_nonlocal


sx_nonlocal = _make_nonlocal()


def sx_class(x):
    class Local:  # MARK:class
        pass
    return x * 2.0


def sx_nested_def(x):
    for _ in range(2):
        def inner(t):  # MARK:nested-def
            return t * 2.0
    return x * 2.0


def sx_lambda(x):
    return (lambda t: t * 2.0)(x)  # MARK:lambda


def sx_yield(x):
    yield x  # MARK:yield
    return x


def sx_setcomp(x):  # list comprehensions are supported (comprehensions.py); set ones are not
    ys = {x * k for k in range(3)}  # MARK:setcomp
    return x * 2.0


def sx_varargs(*args):  # MARK:varargs
    return args[0] * 2.0


def sx_kwargs(x, **options):  # MARK:kwargs
    return x * 2.0


def sx_setitem(x):
    y = np.zeros((3, 3))
    y[0][1] = x  # MARK:setitem
    return np.sum(y)


def sx_reserved_adj(x):
    _adj_x = x * 2.0  # MARK:reserved-adj
    return _adj_x


def sx_reserved_ssa(x):
    x__2 = x * 2.0  # MARK:reserved-ssa
    return x__2


def sx_reserved_temp(x):
    _t1 = x * 2.0  # MARK:reserved-temp
    return _t1


def sx_no_return(x):  # MARK:no-return
    y = x * 2.0  # noqa: F841


# (function, marker, token the column points at, words the message must contain)
SYNTAX_CASES = [
    (sx_loop_var, "loop-var", "for", ["loop variable 'i'"]),
    (sx_try, "try", "return", ["return inside a try statement"]),
    (sx_with, "with", "with", ["with statement"]),
    (sx_global, "global", "global", ["global statement"]),
    (sx_nonlocal, "nonlocal", "nonlocal", ["nonlocal statement"]),
    (sx_class, "class", "class", ["class definition"]),
    (sx_nested_def, "nested-def", "def", ["nested function definition"]),
    (sx_lambda, "lambda", "lambda", ["lambda expression"]),
    (sx_yield, "yield", "yield", ["yield expression"]),
    (sx_setcomp, "setcomp", "{", ["set comprehension"]),
    (sx_varargs, "varargs", "def", ["*args", "parameter"]),
    (sx_kwargs, "kwargs", "def", ["**kwargs", "parameter"]),
    (sx_setitem, "setitem", "y[0][1]", ["nested subscript"]),
    (sx_reserved_adj, "reserved-adj", "_adj_x", ["'_adj_x'", "reserved", "rename"]),
    (sx_reserved_ssa, "reserved-ssa", "x__2", ["'x__2'", "reserved", "rename"]),
    (sx_reserved_temp, "reserved-temp", "_t1", ["'_t1'", "reserved"]),
    (sx_no_return, "no-return", "def", ["without a return statement"]),
]


@pytest.mark.parametrize("func, marker, token, words", SYNTAX_CASES,
                         ids=[case[1] for case in SYNTAX_CASES])
def test_unsupported_syntax_is_reported_at_grad_time(func, marker, token, words):
    with pytest.raises(srcgrad.SrcgradSyntaxError) as info:
        srcgrad.grad(func, jit=False)  # raised here, before any call
    err = info.value
    assert isinstance(err, SyntaxError)
    assert isinstance(err, srcgrad.SrcgradError)
    message = str(err)
    for word in words:
        assert word in message, message
    assert "not supported" in message
    assert func.__qualname__ in message
    # SyntaxError's own fields point at the user's code.
    line = marked_line(marker)
    assert Path(err.filename).resolve() == THIS_FILE
    assert err.lineno == line
    assert err.offset == marked_offset(marker, token)
    assert err.text.strip() == _LINES[line - 1].strip()
    assert_points_at(err, marker)


def test_unsupported_syntax_is_reported_by_default_grad_before_any_compilation():
    # Default jit=True: the error still comes from grad(f) itself.
    with pytest.raises(srcgrad.SrcgradSyntaxError) as info:
        srcgrad.grad(sx_with)
    assert info.value.lineno == marked_line("with")
    with pytest.raises(srcgrad.SrcgradSyntaxError):
        srcgrad.value_and_grad(sx_global)
    with pytest.raises(srcgrad.SrcgradSyntaxError):
        srcgrad.show(sx_loop_var)


def test_unsupported_syntax_is_reported_when_the_decorator_runs():
    with pytest.raises(srcgrad.SrcgradSyntaxError) as info:
        @srcgrad.grad
        def decorated(x):
            with warnings.catch_warnings():  # MARK:decorated-with
                x = x * 2.0
            return x
    err = info.value
    assert "with statement" in str(err)
    assert err.lineno == marked_line("decorated-with")
    assert err.offset == marked_offset("decorated-with", "with")
    assert Path(err.filename).resolve() == THIS_FILE


def test_syntax_error_caret_lines_up_for_an_indented_function():
    with pytest.raises(srcgrad.SrcgradSyntaxError) as info:
        srcgrad.grad(sx_nonlocal, jit=False)
    err = info.value
    assert err.text[err.offset - 1:].startswith("nonlocal"), (err.text, err.offset)


async def sx_async(x):  # MARK:async
    return x * 2.0


def test_async_def_is_rejected_at_grad_time():
    # Whatever the class, an async def must never be differentiated silently.
    with pytest.raises(srcgrad.SrcgradError) as info:
        srcgrad.grad(sx_async, jit=False)
    assert "sx_async" in str(info.value)


def test_async_def_gets_a_clear_syntax_error():
    with pytest.raises(srcgrad.SrcgradSyntaxError) as info:
        srcgrad.grad(sx_async, jit=False)
    err = info.value
    assert "async" in str(err)
    assert err.lineno == marked_line("async")
    assert Path(err.filename).resolve() == THIS_FILE


def sx_local_named_seed(x):
    seed = 2.0  # MARK:local-seed
    return np.sum(x * seed)


def test_local_named_like_a_runtime_helper_works_or_is_rejected_clearly():
    x = np.array([1.0, 2.0, 3.0])
    try:
        g = srcgrad.grad(sx_local_named_seed, jit=False)
    except srcgrad.SrcgradSyntaxError as err:
        assert "'seed'" in str(err)
        assert err.lineno == marked_line("local-seed")
        return
    assert_close(g(x), np.full(3, 2.0))


# ===========================================================================
# 2. calls without a derivative rule
# ===========================================================================

def user_helper(v):
    return v * 2.0


def mr_sinc(x):
    c = np.sinc(x)  # MARK:mr-sinc
    return np.sum(c * c)


def mr_pinv(a):
    return np.sum(np.linalg.pinv(a))  # MARK:mr-pinv


def mr_fft(x):
    return np.sum(np.abs(np.fft.fft(x)))  # MARK:mr-fft


def mr_unwrap(x):
    s = np.unwrap(x)  # MARK:mr-unwrap
    return np.sum(s * WEIGHTS)


MISSING_CASES = [
    (mr_sinc, "mr-sinc", "np.sinc"),
    (mr_pinv, "mr-pinv", "np.linalg.pinv"),
    (mr_fft, "mr-fft", "np.fft.fft"),
    (mr_unwrap, "mr-unwrap", "np.unwrap"),
]


@pytest.mark.parametrize("func, marker, spelled", MISSING_CASES,
                         ids=[case[2] for case in MISSING_CASES])
def test_missing_rule_on_differentiable_value(func, marker, spelled):
    with pytest.raises(srcgrad.MissingRuleError) as info:
        srcgrad.grad(func, jit=False)
    err = info.value
    assert isinstance(err, NotImplementedError)
    assert isinstance(err, srcgrad.SrcgradError)
    message = str(err)
    assert spelled in message
    assert "no derivative rule" in message
    assert_points_at(err, marker)


def mr_user_helper(x):
    y = user_helper(x)  # MARK:mr-user-helper
    return np.sum(y)


def test_user_python_helper_is_inlined_not_zero():
    # calls into user functions are differentiated (test_calls.py); never a silent zero
    assert np.allclose(srcgrad.grad(mr_user_helper, jit=False)(np.ones(3)), 2.0)


def nd_cumsum_of_constant(x):
    c = np.cumsum(np.ones(4))
    return np.sum(np.sin(x) * c) + np.sum(c)


def nd_integer_cumsum(x, n):
    k = np.cumsum(np.arange(n))
    return np.sum(x * x) * k[-1]


def nd_user_helper_on_integer(x, n):
    return np.sum(x * x) * user_helper(n)


def nd_unused_cumsum(x):
    c = np.cumsum(x)  # noqa: F841  (never reaches the result)
    return np.sum(x * WEIGHTS)


@pytest.mark.parametrize("func, args", [
    (nd_cumsum_of_constant, (np.array([0.3, -0.7, 1.1, 0.2]),)),
    (nd_integer_cumsum, (np.array([0.3, -0.7, 1.1, 0.2]), 5)),
    (nd_user_helper_on_integer, (np.array([0.3, -0.7, 1.1, 0.2]), 3)),
    (nd_unused_cumsum, (np.array([0.3, -0.7, 1.1, 0.2]),)),
], ids=["cumsum-of-constant", "integer-cumsum", "helper-on-int", "unused-result"])
def test_rule_free_call_on_non_differentiable_value_is_fine(func, args):
    g = srcgrad.grad(func, jit=False)
    result = g(*args)
    expected = numerical_grad(func, args, 0)
    assert np.any(expected != 0.0)
    assert_close(result, expected)


def kw_cumprod(x):
    c = np.sinc(x=x)  # MARK:kw-cumprod
    return np.sum(c)


def kw_sum(x):
    return np.sum(a=x * x)


def test_missing_rule_for_value_passed_by_keyword():
    with pytest.raises(srcgrad.MissingRuleError) as info:
        srcgrad.grad(kw_cumprod, jit=False)
    assert_points_at(info.value, "kw-cumprod")


def test_value_passed_by_keyword_to_a_ruled_function_is_differentiated():
    x = np.array([0.5, -1.0, 2.0])
    assert_close(srcgrad.grad(kw_sum, jit=False)(x), 2.0 * x)


def rule_with_positional_option(x):
    return np.sum(x, 0, np.float64)  # MARK:sum-positional-axis


def test_rule_that_does_not_fit_the_call_names_it_and_the_line():
    with pytest.raises(srcgrad.SrcgradError) as info:
        srcgrad.grad(rule_with_positional_option, jit=False)
    assert "np.sum" in str(info.value)
    assert_points_at(info.value, "sum-positional-axis")


def test_rule_that_does_not_fit_the_call_says_what_is_unsupported():
    with pytest.raises(srcgrad.SrcgradError) as info:
        srcgrad.grad(rule_with_positional_option, jit=False)
    message = str(info.value)
    assert "keywords: 2)" not in message
    assert "axis" in message or "positional" in message, message


# ===========================================================================
# 3. non-scalar output
# ===========================================================================

def ns_vector(x):
    return x * 2.0  # MARK:ns-vector


def ns_matrix(x):
    return np.outer(x, WEIGHTS[:3])


def ns_tuple(a, b):
    return a * 2.0, b  # MARK:ns-tuple


def ns_tuple_via_name(a, b):
    t = (a * 2.0, b)  # MARK:ns-tuple-name
    return t


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_array_output_is_rejected_with_its_shape(jit):
    g = srcgrad.grad(ns_vector, jit=jit)
    with pytest.raises(srcgrad.NonScalarOutputError) as info:
        g(np.array([1.0, 2.0, 3.0]))
    err = info.value
    assert isinstance(err, ValueError)
    assert isinstance(err, srcgrad.SrcgradError)
    message = str(err)
    assert "(3,)" in message
    assert "ns_vector" in message
    assert "scalar" in message
    assert "np.sum" in message  # what to use instead


def test_matrix_output_is_rejected_with_its_shape():
    g = srcgrad.grad(ns_matrix, jit=False)
    with pytest.raises(srcgrad.NonScalarOutputError, match=r"\(3, 3\)"):
        g(np.array([1.0, 2.0, 3.0]))


def test_array_output_error_names_the_return_line():
    g = srcgrad.grad(ns_vector, jit=False)
    with pytest.raises(srcgrad.NonScalarOutputError) as info:
        g(np.array([1.0, 2.0, 3.0]))
    assert_points_at(info.value, "ns-vector")


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
@pytest.mark.parametrize("func, marker", [(ns_tuple, "ns-tuple"),
                                          (ns_tuple_via_name, "ns-tuple-name")],
                         ids=["return-a-b", "return-tuple-name"])
def test_tuple_output_is_rejected_at_grad_time(func, marker, jit):
    with pytest.raises(srcgrad.NonScalarOutputError) as info:
        srcgrad.grad(func, jit=jit)
    message = str(info.value)
    assert "tuple" in message
    assert "scalar" in message
    assert func.__name__ in message
    assert_points_at(info.value, marker)


# ===========================================================================
# 4. what wrt may name, and integer arguments
# ===========================================================================

def power(x, n):
    return x ** n


@pytest.mark.parametrize("value", [3, np.int64(3), np.arange(3), np.array(3)],
                         ids=["int", "np.int64", "int-array", "0d-int-array"])
def test_integer_argument_in_wrt_is_a_type_error(value):
    g = srcgrad.grad(power, jit=False)
    with pytest.raises(TypeError) as info:
        g(value, 2)
    message = str(info.value)
    assert "'x'" in message
    assert "integer" in message
    assert "float" in message  # says what to pass instead


def test_integer_argument_in_wrt_passed_by_keyword_is_a_type_error():
    g = srcgrad.grad(power, wrt=(0, 1), jit=False)
    with pytest.raises(TypeError, match="'n'"):
        g(x=2.0, n=3)


def test_boolean_argument_in_wrt_is_a_type_error():
    with pytest.raises(TypeError, match="'x'.*boolean"):
        srcgrad.grad(power, jit=False)(True, 2)


def test_integer_array_message_names_the_dtype():
    with pytest.raises(TypeError) as info:
        srcgrad.grad(power, jit=False)(np.arange(3), 2)
    message = str(info.value)
    assert "ndarray array" not in message
    assert "int64" in message


@pytest.mark.parametrize("wrt, cls, words", [
    (2, ValueError, ["wrt=2", "out of range", "power", "x, n"]),
    (-1, ValueError, ["wrt=-1", "out of range"]),
    ("nope", ValueError, ["'nope'", "names no parameter", "x, n"]),
    (1.5, TypeError, ["1.5", "float"]),
    (None, TypeError, ["None"]),
    (True, TypeError, ["True", "bool"]),
    ((0, 0), ValueError, ["'x'", "twice"]),
    ((0, "x"), ValueError, ["'x'", "twice"]),
    ((), ValueError, ["wrt=()"]),
], ids=["out-of-range", "negative", "unknown-name", "float", "none", "bool",
        "duplicate-position", "duplicate-name-and-position", "empty"])
def test_bad_wrt_is_rejected_at_grad_time(wrt, cls, words):
    with pytest.raises(cls) as info:
        srcgrad.grad(power, wrt=wrt, jit=False)
    message = str(info.value)
    for word in words:
        assert word in message, message


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_integer_argument_not_in_wrt_works(jit):
    g = srcgrad.grad(power, jit=jit)
    assert g(2.0, 3) == pytest.approx(12.0)
    assert g.backend == ("numba" if jit else "python")
    assert g(2.0, np.int64(3)) == pytest.approx(12.0)
    x = np.array([0.5, 1.5, 2.0])
    vg = srcgrad.grad(lambda x, n: np.sum(x ** n), jit=False)
    assert_close(vg(x, 3), 3.0 * x ** 2)


# ===========================================================================
# 5. functions whose source cannot be read; builtins
# ===========================================================================

def test_function_defined_by_exec_has_no_source():
    namespace = {"np": np}
    exec("def made_by_exec(x):\n    return x * 2.0\n", namespace)
    with pytest.raises(srcgrad.SourceUnavailableError) as info:
        srcgrad.grad(namespace["made_by_exec"], jit=False)
    err = info.value
    assert isinstance(err, OSError)
    assert isinstance(err, srcgrad.SrcgradError)
    message = str(err)
    assert "made_by_exec" in message
    assert "cannot read the source" in message
    assert "exec" in message
    assert "interactive" in message


two_lambdas = (lambda x: x * 2.0, lambda x: x * 3.0)  # MARK:two-lambdas


def test_ambiguous_lambda_source_is_reported():
    with pytest.raises(srcgrad.SourceUnavailableError) as info:
        srcgrad.grad(two_lambdas[0], jit=False)
    assert "2 lambdas" in str(info.value)
    assert "def" in str(info.value)
    assert_points_at(info.value, "two-lambdas")


@pytest.mark.parametrize("func", [np.sin, np.linalg.det, abs, math.exp],
                         ids=["np.sin", "np.linalg.det", "abs", "math.exp"])
def test_builtin_or_numpy_function_is_a_type_error(func):
    with pytest.raises(TypeError) as info:
        srcgrad.grad(func, jit=False)
    message = str(info.value)
    assert "Python functions" in message
    assert "Wrap the call in a def" in message


def test_builtin_error_only_suggests_existing_api():
    with pytest.raises(TypeError) as info:
        srcgrad.grad(np.sin, jit=False)
    if "srcgrad.defvjp" in str(info.value):
        assert hasattr(srcgrad, "defvjp")


def test_builtin_without_signature_is_a_type_error():
    with pytest.raises(TypeError, match="Wrap the call in a def"):
        srcgrad.grad(max, jit=False)


# ===========================================================================
# 6. numba fallback
# ===========================================================================

def nb_unsupported(x):
    label = np.array2string(WEIGHTS)  # MARK:numba-unsupported
    return np.sum(np.sin(x) * WEIGHTS) * len(label)


def _srcgrad_warnings(record):
    return [w for w in record if issubclass(w.category, srcgrad.SrcgradWarning)]


def _call_recording(g, *args):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = g(*args)
    return result, _srcgrad_warnings(record)


def test_numba_failure_falls_back_to_python_with_one_warning():
    x = np.array([0.3, -0.7, 1.1, 0.2])
    g = srcgrad.grad(nb_unsupported)  # jit=True
    assert g.backend is None and g.fallback_reason is None
    first, caught = _call_recording(g, x)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "numba" in message
    assert "plain Python" in message
    assert "nb_unsupported" in message
    assert f"{BASENAME}:{marked_line('numba-unsupported')}" in message
    assert_close(first, numerical_grad(nb_unsupported, (x,), 0))
    assert g.backend == "python"
    assert isinstance(g.fallback_reason, str) and g.fallback_reason.strip()
    second, caught_again = _call_recording(g, x)
    assert caught_again == []
    assert_close(second, first)
    assert g.backend == "python"


def test_numba_fallback_warning_states_the_reason():
    g = srcgrad.grad(nb_unsupported)
    _, caught = _call_recording(g, np.array([0.3, -0.7, 1.1, 0.2]))
    assert len(caught) == 1
    assert "array2string" in str(caught[0].message)


def test_numba_reasons_name_numbas_own_pieces_by_their_arguments():
    from srcgrad.backend.numba_reasons import construct
    intrinsic = ("No implementation of function Function(<intrinsic _impl>) found for "
                 "signature:\n \n >>> _impl(array(float64, 3d, A), array(float64, 3d, A))\n")
    assert construct(intrinsic) == ("an operation on (array(float64, 3d, A), array(float64, "
                                    "3d, A)), which numba has no implementation for")
    lowering = "<numba.core.base.OverloadSelector object at 0x7f4ee8cafd90>, " \
               "(NumPyRandomGeneratorType,)"
    assert construct(lowering) == ("an operation on (NumPyRandomGeneratorType), which numba "
                                   "cannot compile")


def test_numba_fallback_warning_points_at_the_callers_line():
    g = srcgrad.grad(nb_unsupported)
    _, caught = _call_recording(g, np.array([0.3, -0.7, 1.1, 0.2]))
    assert len(caught) == 1
    assert Path(caught[0].filename).resolve() == THIS_FILE


# ===========================================================================
# 7. calling a gradient never mutates the caller's arrays
# ===========================================================================

def mut_mix(x, y):
    z = x * y + np.sin(x)
    return np.sum(z * WEIGHTS) + x[0] * y[1]


def mut_matmul(x, a):
    y = a @ x
    b = x[1:]
    return y[0] + np.sum(b * b) + np.sum(a * a)


def mut_augassign(x):
    x += 1.0
    return np.sum(x * x)


MUTATION_CASES = [
    (mut_mix, lambda: (np.array([0.3, -0.7, 1.1, 0.2]), np.array([1.5, 0.5, -2.0, 1.0])), (0, 1)),
    (mut_matmul, lambda: (np.array([0.3, -0.7, 1.1]),
                          np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0], [2.0, 1.0, 1.0]])), (0, 1)),
    (mut_augassign, lambda: (np.array([0.3, -0.7, 1.1]),), 0),
]


# mut_matmul costs ~6 s to compile with numba, so it runs as plain Python only.
MUTATION_PARAMS = [
    pytest.param(func, make_args, wrt, jit, id=f"{func.__name__}-{'numba' if jit else 'python'}")
    for func, make_args, wrt in MUTATION_CASES for jit in (False, True)
    if not (jit and func is mut_matmul)
]


@pytest.mark.parametrize("func, make_args, wrt, jit", MUTATION_PARAMS)
def test_gradient_does_not_mutate_arguments(func, make_args, wrt, jit):
    args = make_args()
    before = [a.copy() for a in args]
    weights_before = WEIGHTS.copy()
    vg = srcgrad.value_and_grad(func, wrt=wrt, jit=jit)
    value, grads = vg(*args)
    assert vg.backend == ("numba" if jit else "python")
    value_again, grads_again = vg(*args)
    for arg, old in zip(args, before):
        np.testing.assert_array_equal(arg, old)
    np.testing.assert_array_equal(WEIGHTS, weights_before)
    grads_tuple = grads if isinstance(grads, tuple) else (grads,)
    for grad_, arg in zip(grads_tuple, args):
        assert not np.shares_memory(grad_, arg)
    assert value == pytest.approx(func(*make_args()))
    assert value_again == pytest.approx(value)
    assert_close(grads, numerical_grad(func, make_args(), wrt))
    assert_close(grads_again, grads)


def alias_augassign(x):
    y = x
    y += 1.0  # in Python this also changes x: y and x are the same array
    return np.sum(x * y)


@pytest.mark.parametrize("jit", [False, True], ids=["nojit", "jit"])
def test_augmented_assignment_through_an_alias(jit):
    # NumPy would update x in place through y; srcgrad refuses at call time, naming the line,
    # rather than silently rebinding y (a float x is fine: see augmented_scalars in the corpus).
    x = np.array([0.0, 1.0, 2.0])
    g = srcgrad.value_and_grad(alias_augassign, jit=jit)
    with pytest.raises(srcgrad.SrcgradError) as info:
        g(x)
    message = str(info.value)
    assert "in place" in message and "'y'" in message and "'x'" in message
    assert f"{BASENAME}:{alias_augassign.__code__.co_firstlineno + 2}" in message
    if jit:
        assert g.backend == "numba"
    np.testing.assert_array_equal(x, [0.0, 1.0, 2.0])


# ===========================================================================
# 8. the public API surface
# ===========================================================================

def api_square(x, y):
    return np.sum(x * x * y)


def test_source_wrapped_and_show(capsys):
    g = srcgrad.grad(api_square, jit=False)
    assert g.__wrapped__ is api_square
    assert g.__name__ == "api_square"
    assert "api_square" in repr(g)
    assert "def api_square__grad(" in g.source
    assert BASENAME in g.source  # the generated code says where it came from
    shown = srcgrad.show(api_square)
    printed = capsys.readouterr().out
    assert shown == g.source
    assert printed.strip() == shown.strip()
    assert g.backend is None
    g(np.array([1.0, 2.0]), 3.0)
    assert g.backend == "python" and g.fallback_reason is None


def test_show_unknown_mode_is_a_clear_error():
    with pytest.raises(ValueError) as info:
        srcgrad.show(api_square, mode="sideways")
    message = str(info.value)
    assert "'sideways'" in message
    assert "mode='reverse'" in message and "mode='forward'" in message


def test_bare_decorator():
    @srcgrad.grad
    def deco_bare(x):
        return np.sum(np.sin(x) * x)

    x = np.array([0.3, -0.7, 1.1])
    assert isinstance(deco_bare, srcgrad.GradFunction)
    assert_close(deco_bare(x), np.cos(x) * x + np.sin(x))


def test_decorator_with_tuple_wrt():
    @srcgrad.grad(wrt=(0, 1), jit=False)
    def deco_pair(x, y):
        return np.sum(x * y) + np.sum(y * y)

    x, y = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    gx, gy = deco_pair(x, y)
    assert_close(gx, y)
    assert_close(gy, x + 2.0 * y)


def test_wrt_given_as_parameter_name():
    x, y = np.array([1.0, 2.0]), 3.0
    gy = srcgrad.grad(api_square, wrt="y", jit=False)(x, y)
    assert isinstance(gy, float)
    assert gy == pytest.approx(np.sum(x * x))
    gx, gy2 = srcgrad.grad(api_square, wrt=("x", "y"), jit=False)(x, y)
    assert_close(gx, 2.0 * x * y)
    assert gy2 == pytest.approx(gy)


def test_value_and_grad_returns_value_and_gradient():
    x, y = np.array([1.0, 2.0]), 3.0
    value, gx = srcgrad.value_and_grad(api_square, jit=False)(x, y)
    assert value == pytest.approx(api_square(x, y))
    assert_close(gx, 2.0 * x * y)
    value2, (gx2, gy2) = srcgrad.value_and_grad(api_square, wrt=(0, 1), jit=False)(x, y)
    assert value2 == pytest.approx(value)
    assert_close(gx2, gx)
    assert gy2 == pytest.approx(np.sum(x * x))

    @srcgrad.value_and_grad(jit=False)
    def deco_value(x):
        return np.sum(x ** 3)

    value3, g3 = deco_value(x)
    assert value3 == pytest.approx(9.0)
    assert_close(g3, 3.0 * x ** 2)


def list_second_name(x):
    hs = [x, 2.0 * x]
    ys = hs  # MARK:list-second-name
    return ys[0] * hs[1]


def list_arithmetic(x):
    hs = [x]
    hs.append(x * 3.0)
    return hs + [x]  # MARK:list-arithmetic


@pytest.mark.parametrize("func, marker", [(list_second_name, "list-second-name"),
                                          (list_arithmetic, "list-arithmetic")])
def test_lists_are_only_indexed_appended_or_iterated(func, marker):
    # An adjoint of a list is a list: `+` on it would concatenate, a silent wrong gradient.
    with pytest.raises(srcgrad.SrcgradSyntaxError) as info:
        srcgrad.grad(func, jit=False)
    assert "using the list 'hs' as a value" in str(info.value)
    assert info.value.lineno == marked_line(marker)


def nested_comprehension(w):
    return np.sum(np.array([[w[i] * w[j] for j in range(2)] for i in range(2)]))


def test_a_comprehensions_list_is_named_as_the_comprehension():
    with pytest.raises(srcgrad.SrcgradSyntaxError,
                       match="using the list built by the comprehension as a value") as info:
        srcgrad.grad(nested_comprehension, jit=False)
    assert "'_c" not in str(info.value)


def common_names(x, seed, inside):
    select = x * seed
    return np.sum(select * inside)


def test_common_names_are_not_reserved():
    # Generated code's helpers have names users are unlikely to pick (seed_like, not seed).
    x = np.array([0.5, -1.0])
    assert_close(srcgrad.grad(common_names, jit=False)(x, 3.0, 2.0), np.array([6.0, 6.0]))


def test_a_file_edited_after_import_is_an_error(tmp_path, monkeypatch):
    import importlib
    import linecache
    path = tmp_path / "edited_model.py"
    path.write_text("import numpy as np\n\n\ndef f(x):\n    return np.sum(x * x)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("edited_model")
    path.write_text("import numpy as np\n\n\ndef g(x):\n    return np.sum(np.sin(x))\n")
    linecache.checkcache()
    with pytest.raises(srcgrad.SourceUnavailableError, match="is now `def g`: the file was edited"):
        srcgrad.grad(module.f, jit=False)


def _reads_past_the_end(x):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] * x[i + 1]  # x[n] at the last i: NumPy raises IndexError
    return total


def _recursive_reads_past_the_end(x, k):
    if k == 0:
        return x[x.shape[0]] * 1.0
    return _recursive_reads_past_the_end(x, k - 1) * 2.0


def _divides_by_an_element(x, y):
    return np.sum(x * x) / y[0]  # NumPy: inf; numba's compiled code: ZeroDivisionError


def test_compiled_code_raising_where_numpy_does_not_gives_numpys_numbers():
    """numba raises ZeroDivisionError for a float64 divided by zero, where NumPy gives inf:
    the function runs again as Python (backend/raised.py) and its numbers are returned,
    with a warning saying so."""
    x, y = np.arange(1.0, 4.0), np.zeros(2)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = _divides_by_an_element(x, y)
        with pytest.warns(srcgrad.SrcgradWarning, match="raised ZeroDivisionError"):
            value, grad = srcgrad.value_and_grad(_divides_by_an_element)(x, y)
    assert value == expected == np.inf
    assert np.all(np.isposinf(grad))


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
def test_index_out_of_range_raises_as_numpy_does(jit):
    """numba's compiled code is bounds checked: a read past the end raises IndexError, as the
    function itself does under NumPy, instead of a gradient computed from whatever lay there."""
    x = np.arange(1.0, 5.0)
    with pytest.raises(IndexError):
        _reads_past_the_end(x)
    for func, args in ((_reads_past_the_end, (x,)), (_recursive_reads_past_the_end, (x, 2))):
        gradient = srcgrad.grad(func, wrt=0, jit=jit)  # the second: a generated helper raises
        with pytest.raises(IndexError) as info:
            gradient(*args)
        # compiled code that raised is run again as Python (backend/raised.py): NumPy's
        # message, and a note naming the user's line
        assert gradient.backend == "python"
        if func is _reads_past_the_end and sys.version_info >= (3, 11):
            assert "index 4 is out of bounds for axis 0 with size 4" in str(info.value)
            line = _reads_past_the_end.__code__.co_firstlineno + 3
            assert any(f"test_errors.py:{line}: total += x[i] * x[i + 1]" in note
                       for note in info.value.__notes__), info.value.__notes__
