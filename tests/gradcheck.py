"""Gradient-checking helpers shared by the end-to-end test corpora.

This module holds no tests.  It provides two independent oracles for the
gradient of a scalar function -- central finite differences
(:func:`numerical_grad`) and, when it is installed and able to trace the
function, ``autograd`` (:func:`autograd_grad`) -- a shape-aware comparison
(:func:`assert_close`), and :func:`check_gradient`, which runs ``srcgrad`` on
a function and checks its results against both oracles.

Shape convention (it is also srcgrad's): the gradient with respect to a
Python float or a NumPy scalar is a ``float``; the gradient with respect to an
ndarray (including a 0-d one) is an ndarray of the same shape.
"""

import contextlib
import inspect
import math
import os
import numbers
import types

import numpy as np

__all__ = [
    "numerical_grad",
    "autograd_grad",
    "assert_close",
    "check_gradient",
    "check_corpus",
    "check_fallback_gradient",
    "away_from_zero",
    "gradient_without_forms",
    "as_tuple",
]


# ---------------------------------------------------------------------------
# argument helpers
# ---------------------------------------------------------------------------

def _is_scalar_arg(value):
    """True for a Python float or a NumPy floating scalar (not an ndarray)."""
    return isinstance(value, (float, np.floating)) and not isinstance(value, np.ndarray)


def _positions(f, args, wrt):
    """Normalise ``wrt`` (int, parameter name, or a tuple of them).

    Returns ``(positions, single)`` where ``positions`` is a tuple of ints and
    ``single`` tells whether one gradient (rather than a tuple) is expected.
    """
    single = not isinstance(wrt, tuple)
    items = (wrt,) if single else wrt
    names = None
    positions = []
    for item in items:
        if isinstance(item, str):
            if names is None:
                names = list(inspect.signature(f).parameters)
            if item not in names:
                raise ValueError(f"{f.__name__} has no parameter named {item!r}")
            pos = names.index(item)
        elif isinstance(item, numbers.Integral) and not isinstance(item, bool):
            pos = int(item)
            if pos < 0:
                pos += len(args)
        else:
            raise TypeError(f"wrt entries must be ints or parameter names, got {item!r}")
        if not 0 <= pos < len(args):
            raise IndexError(f"wrt position {item!r} out of range for {len(args)} arguments")
        positions.append(pos)
    return tuple(positions), single


def _copy_arg(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    return value


def _snapshot(args):
    return tuple(_copy_arg(a) for a in args)


def _assert_not_mutated(args, snapshot, what):
    for k, (now, before) in enumerate(zip(args, snapshot)):
        if isinstance(before, np.ndarray):
            same = (
                isinstance(now, np.ndarray)
                and now.shape == before.shape
                and now.dtype == before.dtype
                and np.array_equal(now, before, equal_nan=True)
            )
            assert same, f"{what}: argument {k} was mutated in place"


def _as_gradient_like(value, template):
    """Convert an oracle result to the shape convention dictated by ``template``."""
    if _is_scalar_arg(template):
        return float(np.asarray(value, dtype=np.float64).reshape(()))
    return np.asarray(value, dtype=np.float64).reshape(np.shape(template))


# ---------------------------------------------------------------------------
# oracle 1: central finite differences
# ---------------------------------------------------------------------------

def _scalar_value(f, args):
    value = f(*args)
    if np.ndim(value) != 0:
        raise ValueError(f"{getattr(f, '__name__', f)} must return a scalar, got shape {np.shape(value)}")
    return float(value)


def _fd_one(f, args, pos, eps):
    """Central differences of ``f`` with respect to argument ``pos``."""
    arg = args[pos]
    if _is_scalar_arg(arg) or (isinstance(arg, numbers.Real) and not isinstance(arg, np.ndarray)):
        if isinstance(arg, numbers.Integral):
            raise TypeError(f"cannot differentiate with respect to integer argument {pos}")
        x0 = float(arg)
        h = eps * max(1.0, abs(x0))
        kind = type(arg) if isinstance(arg, np.floating) else float
        plus = list(args)
        minus = list(args)
        plus[pos] = kind(x0 + h)
        minus[pos] = kind(x0 - h)
        return (_scalar_value(f, plus) - _scalar_value(f, minus)) / (2.0 * h)

    if not isinstance(arg, np.ndarray) or not np.issubdtype(arg.dtype, np.floating):
        raise TypeError(f"argument {pos} must be a float or a float ndarray, got {type(arg).__name__}")
    base = arg.astype(np.float64, copy=True)
    grad = np.zeros(base.shape, dtype=np.float64)
    flat_base = base.reshape(-1)
    flat_grad = grad.reshape(-1)
    for k in range(flat_base.size):
        x0 = flat_base[k]
        h = eps * max(1.0, abs(x0))
        plus = base.copy()
        minus = base.copy()
        plus.reshape(-1)[k] = x0 + h
        minus.reshape(-1)[k] = x0 - h
        args_p = list(args)
        args_m = list(args)
        args_p[pos] = plus
        args_m[pos] = minus
        flat_grad[k] = (_scalar_value(f, args_p) - _scalar_value(f, args_m)) / (2.0 * h)
    return grad


def numerical_grad(f, args, wrt, eps=1e-6):
    """Central finite-difference gradient of the scalar function ``f(*args)``.

    ``wrt`` is an int position or a tuple of positions (parameter names are
    accepted too).  Returns one gradient for an int, a tuple for a tuple.  The
    step for an entry ``x`` is ``eps * max(1, |x|)``.  The caller's arrays are
    never modified: every perturbation is made on a copy.
    """
    args = tuple(args)
    positions, single = _positions(f, args, wrt)
    grads = tuple(_fd_one(f, args, p, eps) for p in positions)
    return grads[0] if single else grads


# ---------------------------------------------------------------------------
# oracle 2: autograd
# ---------------------------------------------------------------------------

def _all_code_names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _all_code_names(const)
    return names


def _uses_math(f):
    """True when ``f`` reaches the ``math`` module (or one of its functions)
    through its globals, e.g. ``math.exp(x)`` or ``from math import exp``.

    autograd cannot trace ``math`` functions (they call ``float()`` on their
    argument), so such functions are not autograd-checkable.
    """
    for name in _all_code_names(f.__code__):
        if name not in f.__globals__:
            continue
        value = f.__globals__[name]
        if value is math:
            return True
        if isinstance(value, types.BuiltinFunctionType) and getattr(value, "__module__", None) == "math":
            return True
    return False


@contextlib.contextmanager
def _arraybox_dot_method(anp):
    """Give autograd's ArrayBox a ``.dot`` method for the duration of a trace.

    autograd boxes support ``.T``, ``.sum()`` and ``.mean()`` but not
    ``.dot()``; ``x.dot(y)`` means ``np.dot(x, y)``, so the method is added
    temporarily (and removed again) to let autograd check such functions.
    """
    from autograd.numpy.numpy_boxes import ArrayBox

    if hasattr(ArrayBox, "dot"):
        yield
        return

    def dot(self, other):
        return anp.dot(self, other)

    ArrayBox.dot = dot
    try:
        yield
    finally:
        del ArrayBox.dot


def autograd_grad(f, args, wrt):
    """Gradient of ``f(*args)`` computed by autograd, or ``None``.

    ``f`` is rebuilt with every global bound to the ``numpy`` module (``np``
    and any alias such as ``onp``) rebound to ``autograd.numpy``, and the
    gradients for all ``wrt`` positions are taken in one ``autograd.grad``
    call.  Returns ``None`` when autograd is not installed, when ``f`` uses
    the ``math`` module, or when autograd fails to trace ``f``.
    """
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return None
    if not isinstance(f, types.FunctionType) or _uses_math(f):
        return None

    args = tuple(args)
    positions, single = _positions(f, args, wrt)
    new_globals = dict(f.__globals__)
    new_globals["np"] = anp
    for name, value in f.__globals__.items():
        if value is np:
            new_globals[name] = anp
    g = types.FunctionType(f.__code__, new_globals, f.__name__, f.__defaults__, f.__closure__)
    g.__kwdefaults__ = f.__kwdefaults__

    # All wrt arguments are boxed together: autograd.grad differentiates a
    # wrapper taking them as one tuple (its first argument).  Boxing them one
    # at a time would break functions such as ``z = x * 2.0; z += y`` when only
    # ``y`` is boxed, because NumPy's in-place ``+=`` on a plain ndarray cannot
    # absorb an autograd box.
    base = list(_snapshot(args))
    wrt_values = []
    for pos in positions:
        value = base[pos]
        if isinstance(value, np.floating):
            # autograd boxes Python floats and float arrays; a NumPy scalar is
            # passed as the equivalent Python float (same value).
            value = float(value)
        wrt_values.append(value)

    def joint(packed):
        call_args = list(base)
        for pos, value in zip(positions, packed):
            call_args[pos] = value
        return g(*call_args)

    try:
        with _arraybox_dot_method(anp):
            raw = autograd.grad(joint)(tuple(wrt_values))
    except (TypeError, ValueError, AttributeError, NotImplementedError):
        # These are what autograd raises when it cannot trace a function:
        # a NumPy/builtin function it has no VJP for receives an ArrayBox
        # (TypeError / AttributeError / ValueError), or a primitive is
        # missing a derivative (NotImplementedError).  Anything else -- e.g.
        # ZeroDivisionError or an IndexError -- is a real problem with the
        # test function or its inputs and must not be hidden.
        return None

    grads = []
    for pos, value in zip(positions, raw):
        value = np.asarray(value)
        if value.dtype == object or not np.issubdtype(value.dtype, np.number):
            # A box leaked through a plain-NumPy call: autograd did not
            # actually trace the function.
            return None
        if value.size != np.size(args[pos]):
            return None
        grads.append(_as_gradient_like(value, args[pos]))
    return grads[0] if single else tuple(grads)


# ---------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------

def _describe(value):
    if isinstance(value, np.ndarray):
        return f"ndarray(shape={value.shape}, dtype={value.dtype})"
    return type(value).__name__


def assert_close(actual, expected, rtol=1e-5, atol=1e-7, what=""):
    """Assert that a gradient matches the expected one, including its form.

    ``expected`` fixes the form: a float (Python or NumPy scalar) requires a
    float that is not an ndarray; an ndarray requires an ndarray of identical
    shape; a tuple requires a tuple of the same length (compared elementwise).
    """
    prefix = f"{what}: " if what else ""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple), (
            f"{prefix}expected a tuple of {len(expected)} gradients, got {_describe(actual)}")
        assert len(actual) == len(expected), (
            f"{prefix}expected {len(expected)} gradients, got {len(actual)}")
        for k, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, rtol=rtol, atol=atol, what=f"{what}[{k}]")
        return

    if isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray), (
            f"{prefix}expected an ndarray of shape {expected.shape}, got {_describe(actual)}: {actual!r}")
        assert actual.shape == expected.shape, (
            f"{prefix}shape mismatch: got {actual.shape}, expected {expected.shape}")
        assert np.issubdtype(actual.dtype, np.floating), (
            f"{prefix}expected a floating dtype, got {actual.dtype}")
    else:
        assert isinstance(expected, numbers.Real), f"{prefix}unsupported expected value {expected!r}"
        assert isinstance(actual, float) and not isinstance(actual, np.ndarray), (
            f"{prefix}expected a float gradient, got {_describe(actual)}: {actual!r}")

    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if np.allclose(a, e, rtol=rtol, atol=atol, equal_nan=False):
        return
    err = np.abs(a - e)
    worst = np.unravel_index(np.argmax(err - rtol * np.abs(e)), e.shape) if e.ndim else ()
    raise AssertionError(
        f"{prefix}gradient mismatch (rtol={rtol}, atol={atol}); "
        f"max abs err {np.max(err):.3e}, worst entry {worst}: "
        f"got {a[worst]!r}, expected {e[worst]!r}\n"
        f"actual:\n{a!r}\nexpected:\n{e!r}")


# ---------------------------------------------------------------------------
# the main check
# ---------------------------------------------------------------------------

def check_gradient(f, args, wrt=0, jit=True, *, rtol=1e-5, atol=1e-7,
                   exact_rtol=1e-8, exact_atol=1e-10):
    """Differentiate ``f`` with srcgrad and check the result.

    * the caller's arrays are not mutated by the gradient function;
    * the gradient matches central finite differences (``rtol``/``atol``);
    * when autograd can trace ``f``, the gradient matches it to the tighter
      ``exact_rtol``/``exact_atol`` (both are exact up to rounding);
    * ``g.backend`` is ``"numba"`` for ``jit=True``, ``"python"`` otherwise;
    * ``value_and_grad`` returns ``f(*args)`` (rtol 1e-12) and the same
      gradient.

    Returns srcgrad's gradient.
    """
    import srcgrad  # imported lazily: the corpus must import without srcgrad

    args = tuple(args)
    name = getattr(f, "__name__", repr(f))
    positions, single = _positions(f, args, wrt)
    snapshot = _snapshot(args)

    g = srcgrad.grad(f, wrt=wrt, jit=jit)
    grad = g(*args)
    _assert_not_mutated(args, snapshot, f"{name}: srcgrad.grad(jit={jit})")

    expected_backend = "numba" if jit else "python"
    backend = getattr(g, "backend", None)
    assert backend == expected_backend, (
        f"{name}: expected backend {expected_backend!r} with jit={jit}, got {backend!r}")

    fd = numerical_grad(f, _snapshot(snapshot), positions if not single else positions[0])
    assert_close(grad, fd, rtol=rtol, atol=atol, what=f"{name} vs finite differences")

    ag = autograd_grad(f, _snapshot(snapshot), positions if not single else positions[0])
    if ag is not None:
        assert_close(grad, ag, rtol=exact_rtol, atol=exact_atol, what=f"{name} vs autograd")

    vg = srcgrad.value_and_grad(f, wrt=wrt, jit=jit)
    result = vg(*args)
    _assert_not_mutated(args, snapshot, f"{name}: srcgrad.value_and_grad(jit={jit})")
    assert isinstance(result, tuple) and len(result) == 2, (
        f"{name}: value_and_grad must return (value, grads), got {result!r}")
    value, vgrad = result
    reference = f(*_snapshot(snapshot))
    assert np.ndim(value) == 0, f"{name}: value must be a scalar, got shape {np.shape(value)}"
    assert np.isclose(float(value), float(reference), rtol=1e-12, atol=1e-14), (
        f"{name}: value_and_grad value {value!r} != f(*args) {reference!r}")
    assert_close(vgrad, grad, rtol=1e-12, atol=1e-14, what=f"{name}: value_and_grad grads vs grad")
    return grad


def check_fallback_gradient(f, args, wrt):
    """For a function numba cannot compile: jit=True warns, runs as Python, and gives
    exactly the gradient `check_gradient` accepts with jit=False."""
    import pytest
    import srcgrad  # imported lazily, as in check_gradient

    expected = check_gradient(f, args, wrt=wrt, jit=False)
    g = srcgrad.grad(f, wrt=wrt, jit=True)
    with pytest.warns(srcgrad.SrcgradWarning, match="numba could not compile"):
        got = g(*args)
    assert g.backend == "python"
    got, expected = (got, expected) if isinstance(wrt, tuple) else ((got,), (expected,))
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def check_corpus(cases, namespace, minimum):
    """A corpus has at least `minimum` distinct functions, each defined in its own module."""
    funcs = [case.values[0] for case in cases]
    names = [f.__name__ for f in funcs]
    assert len(cases) >= minimum
    assert len(set(names)) == len(names), "duplicate function names in CASES"
    assert len({id(f) for f in funcs}) == len(funcs), "a function appears twice in CASES"
    for f in funcs:
        assert f.__module__ == namespace["__name__"] and namespace[f.__name__] is f


def away_from_zero(rng, shape, low=0.2, high=1.5):
    """Test inputs with |v| in [low, high] and random signs (no kinks at 0 nearby)."""
    mag = rng.uniform(low, high, size=shape)
    sign = rng.choice([-1.0, 1.0], size=shape)
    return mag * sign


_CORPUS_REFERENCES = {}


def check_corpus_case(func, make_args, wrt, jit):
    """srcgrad's value_and_grad of a corpus function (numba on or off) against central
    differences and autograd, both computed once per function and shared by its cases."""
    import srcgrad

    key = (func.__module__, func.__name__)
    if key not in _CORPUS_REFERENCES:
        args = make_args()
        _CORPUS_REFERENCES[key] = (numerical_grad(func, args, wrt),
                                   autograd_grad(func, args, wrt), func(*args))
    fd, ag, value = _CORPUS_REFERENCES[key]
    vg = srcgrad.value_and_grad(func, wrt=wrt, jit=jit)
    got_value, got = vg(*make_args())
    assert vg.backend == ("numba" if jit else "python")
    assert np.isclose(got_value, value, rtol=1e-12, atol=1e-14)
    assert_close(got, fd, rtol=1e-5, atol=1e-7, what=f"{func.__name__} vs finite differences")
    if ag is not None:
        assert_close(got, ag, rtol=1e-8, atol=1e-10, what=f"{func.__name__} vs autograd")


def jax_twin(func):
    """(jax, `func` with `np` bound to jax.numpy): the same code run by JAX in float64, for
    Hessians to check against; the test skips where JAX is not installed."""
    import pytest
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    return jax, types.FunctionType(func.__code__, dict(func.__globals__, np=jnp), func.__name__)


def jax_hessian(func, x):
    jax, twin = jax_twin(func)
    return np.asarray(jax.hessian(twin)(x))


def fd_hessian(func, x, eps):
    """Central differences of srcgrad's gradient (as Python: a Hessian compiled by numba is
    what is checked, not its gradient), one column per element of the 1-d x."""
    import srcgrad
    gradient = srcgrad.grad(func, jit=False)
    columns = [(gradient(x + eps * e) - gradient(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]
    return np.stack(columns, axis=-1)


def flat_values(value):
    """One 1-d array of a value or of a tuple of values (a helper's several results)."""
    return np.hstack([np.ravel(v) for v in value]) if isinstance(value, tuple) else np.ravel(value)


def gradient_without_forms(func, wrt, args):
    """The gradient numba computes from the generated function itself (compiled forms off,
    SRCGRAD_LOOPS=0), to compare a compiled form's against; the suite's strict mode after."""
    import srcgrad
    os.environ["SRCGRAD_LOOPS"] = "0"
    try:
        return srcgrad.grad(func, wrt=wrt)(*args)
    finally:
        os.environ["SRCGRAD_LOOPS"] = "strict"


def as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def assert_form_agrees(func, args, wrt=0, exact=False, oracle=False):
    """`func`'s gradient runs in its compiled form (numba) and agrees with the gradient of
    the generated function itself (to the last bit with `exact`, else to 1e-13), with
    central differences and, with `oracle`, with autograd where it applies. Returns the
    gradient function (its `.compiled_source` is the form that ran)."""
    import srcgrad
    g = srcgrad.grad(func, wrt=wrt)
    got = g(*args)
    form = g._last.compiled.form
    assert form.state == "on" and g.backend == "numba", form.why_off
    for a, b in zip(as_tuple(got), as_tuple(gradient_without_forms(func, wrt, args))):
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    for k, a in zip(wrt if isinstance(wrt, tuple) else (wrt,), as_tuple(got)):
        assert_close(a, numerical_grad(func, args, k), rtol=1e-5, atol=1e-7)
        expected = autograd_grad(func, args, k) if oracle else None
        if expected is not None:
            assert_close(a, expected, rtol=1e-9, atol=1e-12)
    return g


def form_code(func, wrt, args) -> str:
    """The code of `func`'s compiled form after one call, its comments removed."""
    import srcgrad
    g = srcgrad.grad(func, wrt=wrt)
    g(*args)
    with open(g._last.compiled.form.path) as handle:
        return "\n".join(line.split("#")[0] for line in handle.read().splitlines())
