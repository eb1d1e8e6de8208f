"""Run one generated program under NumPy, srcgrad, finite differences and autograd.

`run(source, fname, args, wrt, jit)` (or `run_program(program, jit)`) writes
the source to a fresh module file (srcgrad reads it with `inspect`), imports
it and returns a `Result` whose `outcome` is one of

- `invalid`: the program itself is not a usable test (NumPy raises, warns
  about floating point, or returns something that is not a finite scalar; a
  finite-difference evaluation fails). The generator keeps these rare.
- `clear_error`: srcgrad refused the program with one of its own errors
  (`srcgrad.errors.SrcgradError` and subclasses) or with a TypeError /
  ValueError raised by one of its own `raise` statements (argument checks).
  `message` is the error's type and first line.
- `crash`: any other exception from srcgrad or from the generated code
  (UnboundLocalError, IndexError, KeyError, AssertionError, a numba error,
  ...), or `mutated_input` when srcgrad changed one of the caller's arrays.
- `wrong_value`: srcgrad's value differs from NumPy's by more than 1e-10
  relative.
- `wrong_gradient`: the gradient has the wrong shape, is not finite, or
  differs from central finite differences (rtol 1e-5, atol 1e-7 scaled by the
  size of the function and its gradient) at an element where the function is
  smooth; or, where autograd traced the program and agrees with finite
  differences, differs from autograd (rtol 1e-7).
- `kink`: no wrong element, but at some element the function is not smooth
  at the point (so its derivative is a convention): the central differences
  at steps 1e-5 and 1e-6 (relative) disagree, or the forward and backward
  differences differ by an amount that does not shrink with the step.
- `ok`.

`FAILURES` are the outcomes a test fails on.
"""
from __future__ import annotations

import importlib.util
import itertools
import linecache
import os
import sys
import tempfile
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np

import srcgrad
from srcgrad.errors import SrcgradError, SrcgradWarning

OUTCOMES = ("ok", "kink", "clear_error", "invalid", "wrong_value", "wrong_gradient", "crash")
FAILURES = frozenset({"wrong_value", "wrong_gradient", "crash"})
STEPS = (1e-5, 1e-6)
RTOL, ATOL = 1e-5, 1e-7          # srcgrad against finite differences (atol times the scale)
KINK_TOL = 1e-6                  # central differences at the two steps must agree this well
AG_RTOL, AG_ATOL = 1e-7, 1e-9    # srcgrad against autograd
VALUE_RTOL = 1e-10

_SRCGRAD_DIR = os.path.dirname(os.path.abspath(srcgrad.__file__))
_TMP = None
_COUNT = itertools.count()


@dataclass
class Result:
    outcome: str
    message: str = ""
    details: str = ""
    notes: list = field(default_factory=list)
    grads: list = field(default_factory=list)  # srcgrad's gradients, flattened (ok, kink)

    @property
    def failed(self) -> bool:
        return self.outcome in FAILURES


class Invalid(Exception):
    pass


def _copy(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _first_line(exc) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip()


def load(source: str):
    """Import `source` as a new module from a real file; returns (module, path)."""
    global _TMP
    if _TMP is None:
        _TMP = tempfile.mkdtemp(prefix="srcgrad-fuzz-")
    name = f"fuzzprog_{os.getpid()}_{next(_COUNT)}"
    path = os.path.join(_TMP, name + ".py")
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, path


def unload(module, path):
    sys.modules.pop(module.__name__, None)
    linecache.checkcache(path)
    try:
        os.remove(path)
    except OSError:
        pass


def call_numpy(f, args) -> float:
    """f(*args) under NumPy with floating-point trouble as errors; Invalid unless a finite scalar."""
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"), \
                warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            value = f(*_copy(args))
    except Exception as exc:  # the program is not valid NumPy at this point
        raise Invalid(f"numpy: {_first_line(exc)}") from exc
    if not isinstance(value, (float, np.floating)) or np.ndim(value) != 0:
        raise Invalid(f"numpy: returned {type(value).__name__} of shape {np.shape(value)}")
    if not np.isfinite(value):
        raise Invalid("numpy: returned a non-finite value")
    return float(value)


def _with(args, pos, j, value):
    out = _copy(args)
    if j is None:
        out[pos] = value
    else:
        out[pos].flat[j] = value
    return out


def finite_differences(f, args, wrt, f0):
    """Per wrt argument: arrays (fd at STEPS[0], fd at STEPS[1], kink mask), flattened."""
    out = []
    for pos in wrt:
        x = args[pos]
        elems = [None] if np.ndim(x) == 0 else range(np.size(x))
        fds = np.zeros((2, len(elems)))
        kink = np.zeros(len(elems), dtype=bool)
        for k, j in enumerate(elems):
            x0 = float(x if j is None else x.flat[j])
            second = []
            for s, step in enumerate(STEPS):
                h = step * max(1.0, abs(x0))
                up, down = x0 + h, x0 - h
                fp = call_numpy(f, _with(args, pos, j, up))
                fm = call_numpy(f, _with(args, pos, j, down))
                fds[s, k] = (fp - fm) / (up - down)
                second.append(abs(fp - 2.0 * f0 + fm) / h)  # forward minus backward difference
            kink[k] = second[1] > 0.3 * second[0] and second[1] > KINK_TOL * max(1.0, abs(f0))
        out.append([fds[0], fds[1], kink])
    scale = max([1.0, abs(f0)] + [float(np.max(np.abs(a[0]))) for a in out])
    for a in out:
        a[2] |= np.abs(a[0] - a[1]) > KINK_TOL * scale
    return out, scale


def autograd_gradients(source, fname, args, wrt, value):
    """autograd's gradients (flattened), or a string saying why there are none."""
    try:
        import autograd
        import autograd.numpy as anp
    except ImportError:
        return "autograd is not installed"
    namespace = {"np": anp, "__name__": "fuzz_autograd"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(source.replace("import numpy as np\n", "\n", 1), "<fuzz>", "exec"), namespace)
            fa = namespace[fname]
            v = fa(*_copy(args))
            if not np.isclose(float(v), value, rtol=1e-9, atol=1e-12):
                return "autograd's value differs from NumPy's"
            return [np.ravel(np.asarray(autograd.grad(fa, p)(*_copy(args)), dtype=float)) for p in wrt]
    except Exception as exc:
        return f"autograd: {_first_line(exc)}"


def _raised_by_srcgrad(exc) -> bool:
    """A TypeError/ValueError from a `raise` statement of srcgrad itself (not generated code)."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return False
    last = frames[-1]
    path = os.path.abspath(last.filename)
    if not path.startswith(_SRCGRAD_DIR + os.sep):
        return False
    if os.sep + "runtime" + os.sep in path and not str(exc).startswith("srcgrad"):
        return False
    return (last.line or "").strip().startswith("raise")


def classify_error(exc):
    if isinstance(exc, SrcgradError):
        return "clear_error", _first_line(exc)
    if isinstance(exc, (TypeError, ValueError)) and _raised_by_srcgrad(exc):
        return "clear_error", _first_line(exc)
    return "crash", _first_line(exc)


def _fmt(a):
    return np.array2string(np.asarray(a), precision=10, separator=", ", max_line_width=200)


def run(source, fname, args, wrt, jit=False) -> Result:
    try:
        module, path = load(source)
    except Exception as exc:
        return Result("invalid", f"load: {_first_line(exc)}")
    try:
        return _run(module, source, fname, list(args), tuple(wrt), jit)
    finally:
        unload(module, path)


def run_program(program, jit=False) -> Result:
    return run(program.source, program.fname, program.args, program.wrt, jit)


def _run(module, source, fname, args, wrt, jit):
    f = getattr(module, fname)
    try:
        f0 = call_numpy(f, args)
        fd, scale = finite_differences(f, args, wrt, f0)
    except Invalid as exc:
        return Result("invalid", str(exc))
    notes = []
    before = _copy(args)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            vg = srcgrad.value_and_grad(f, wrt=wrt, jit=jit)
            value, grads = vg(*args)
        notes += [f"fallback: {str(w.message).strip().splitlines()[0]}" for w in caught
                  if issubclass(w.category, SrcgradWarning)]
        notes.append(f"backend: {vg.backend}")
        if "__vjp(" in (vg.source or ""):  # a helper called through its own f__vjp (calls.py)
            notes.append("outlined: yes")
        form = getattr(vg._last.compiled, "form", None) if vg._last is not None else None
        if form is not None:  # the compiled form (backend/fused.py): ran, or why not
            notes.append("form: ran" if form.state == "on" else f"form: not run ({form.why_off})")
    except Exception as exc:
        outcome, message = classify_error(exc)
        return Result(outcome, message, traceback.format_exc(limit=-8), notes)
    for k, (a, b) in enumerate(zip(before, args)):
        if isinstance(a, np.ndarray) and not np.array_equal(a, b):
            return Result("crash", "mutated_input", f"argument {k} was {_fmt(a)}, now {_fmt(b)}", notes)
    details = [f"value: numpy {f0!r}, srcgrad {value!r}"]
    try:
        v = float(value)
    except Exception:
        return Result("wrong_value", f"srcgrad returned {type(value).__name__}", details[0], notes)
    if not abs(v - f0) <= VALUE_RTOL * max(1.0, abs(f0)):
        return Result("wrong_value", "value differs from NumPy's", details[0], notes)

    ag = autograd_gradients(source, fname, args, wrt, f0)
    flat = []
    for k, (pos, g) in enumerate(zip(wrt, grads)):
        x = args[pos]
        if np.shape(g) != np.shape(x) or (np.ndim(x) == 0) != isinstance(g, float):
            return Result("wrong_gradient", f"gradient {k} has shape {np.shape(g)} ({type(g).__name__}), "
                          f"argument has {np.shape(x)}", "\n".join(details), notes)
        flat.append(np.ravel(np.asarray(g, dtype=float)))
    bad, ag_bad, kinks = [], [], 0
    for k, (pos, g) in enumerate(zip(wrt, flat)):
        fd1, fd2, kink = fd[k]
        details += [f"d/d{pos}: srcgrad {_fmt(g)}", f"       fd(1e-5) {_fmt(fd1)}", f"       fd(1e-6) {_fmt(fd2)}"]
        if kink.any():
            details.append(f"       kink at  {_fmt(np.flatnonzero(kink))}")
        kinks += int(kink.sum())
        if not np.all(np.isfinite(g)):
            bad.append(k)
            continue
        tol = ATOL * scale + RTOL * np.maximum(np.abs(fd1), np.abs(fd2))
        off = (np.abs(g - fd1) > tol) & (np.abs(g - fd2) > tol) & ~kink
        if off.any():
            bad.append(k)
        if isinstance(ag, list):
            details.append(f"       autograd {_fmt(ag[k])}")
            agrees = np.all((np.abs(ag[k] - fd1) <= tol) | kink)
            far = np.abs(g - ag[k]) > AG_ATOL * scale + AG_RTOL * np.abs(ag[k])
            if agrees and (far & ~kink).any():
                ag_bad.append(k)
    if not isinstance(ag, list):
        notes.append(f"no autograd: {ag}")
    details = "\n".join(details)
    if bad:
        return Result("wrong_gradient", "gradient differs from finite differences", details, notes)
    if ag_bad:
        return Result("wrong_gradient", "gradient differs from autograd (which agrees with "
                      "finite differences)", details, notes)
    return Result("kink" if kinks else "ok", "", details, notes, flat)
