"""Special functions generated code calls in place of scipy.special's (and their derivatives).

numba does not compile scipy.special's ufuncs, so resolve.py spells
`scipy.special.erf(x)` as `special_erf(x)` (rules/special.py lists them):
the plain form calls SciPy itself, the numba twin computes the same function
with `math` (erf, lgamma) or a series (digamma, trigamma, tetragamma), elementwise over
arrays. `special_logsumexp` is scipy.special.logsumexp without its `b` and
`return_sign` options; `logaddexp_reduce` is np.logaddexp.reduce.
"""
from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from ._types import is_none as _is_none
from ._types import is_number as _is_number
from .dtypes import as_float


def _scipy():
    """scipy.special, imported at the first call without jit (it takes about 0.1 s, too
    long for `import srcgrad`)."""
    import scipy.special
    return scipy.special


def _elementwise(scalar_fn):
    """A numba overload body applying a jitted scalar function to a number or an array."""
    def typer(x):
        if _is_number(x):
            return lambda x: scalar_fn(float(x))

        def impl(x):
            out = np.empty(x.shape)
            flat, src = out.reshape(out.size), np.ascontiguousarray(x).reshape(x.size)
            for k in range(src.size):
                flat[k] = scalar_fn(float(src[k]))
            return out
        return impl
    return typer


def _plain(fn, x):
    out = fn(x)
    return float(out) if np.ndim(out) == 0 else as_float(out, x)


@register_jitable
def _digamma(x):
    if x <= 0.0 and x == math.floor(x):
        return math.nan
    shift = 0.0
    if x < 0.0:  # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
        shift = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 10.0:
        shift -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))))
    return shift + math.log(x) - 0.5 / x - series


@register_jitable
def _trigamma_positive(x):
    total = 0.0
    while x < 10.0:
        total += 1.0 / (x * x)
        x += 1.0
    f = 1.0 / (x * x)
    series = (1.0 / x + f / 2.0 + f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f / 30))))
    return total + series


@register_jitable
def _trigamma(x):
    if x <= 0.0 and x == math.floor(x):
        return math.inf
    if x < 0.0:  # reflection: psi1(1 - x) + psi1(x) = pi^2 / sin(pi x)^2
        s = math.sin(math.pi * x)
        return math.pi * math.pi / (s * s) - _trigamma_positive(1.0 - x)
    return _trigamma_positive(x)


@register_jitable
def _tetragamma(x):
    """psi''(x) (scipy.special.polygamma(2, x)): the recurrence psi''(x) = psi''(x + 1)
    - 2 / x^3 up to 10, then the asymptotic series; the reflection below 0."""
    if x <= 0.0 and x == math.floor(x):
        return math.nan
    shift = 0.0
    if x < 0.0:  # psi''(1 - x) - psi''(x) = 2 pi^3 cot(pi x) / sin(pi x)^2
        s = math.sin(math.pi * x)
        shift = -2.0 * math.pi ** 3 * math.cos(math.pi * x) / (s * s * s)
        x = 1.0 - x
    while x < 10.0:
        shift -= 2.0 / (x * x * x)
        x += 1.0
    f = 1.0 / (x * x)
    tail = 1.0 / 6 - f * (1.0 / 6 - f * (0.3 - f * (5.0 / 6 - f * 691.0 / 210)))
    series = -f - f / x - f * f * (0.5 - f * tail)
    return shift + series


@register_jitable
def _expit(x):
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@register_jitable
def _erf(x):
    return math.erf(x)


@register_jitable
def _lgamma(x):
    return math.lgamma(x)


def special_erf(x):
    return _plain(_scipy().erf, x)


def special_gammaln(x):
    return _plain(_scipy().gammaln, x)


def special_digamma(x):
    return _plain(_scipy().digamma, x)


def special_trigamma(x):
    """psi'(x), the derivative of digamma (scipy.special.polygamma(1, x))."""
    return _plain(lambda v: _scipy().polygamma(1, v), x)


def special_tetragamma(x):
    """psi''(x), the derivative of trigamma (scipy.special.polygamma(2, x))."""
    return _plain(lambda v: _scipy().polygamma(2, v), x)


def special_expit(x):
    return _plain(_scipy().expit, x)


def math_digamma(x):
    """digamma of a number: the derivative of math.lgamma."""
    return float(_scipy().digamma(x))


for _fn, _scalar in ((special_erf, _erf), (special_gammaln, _lgamma),
                     (special_digamma, _digamma), (special_trigamma, _trigamma),
                     (special_tetragamma, _tetragamma),
                     (special_expit, _expit)):
    overload(_fn)(_elementwise(_scalar))


@overload(math_digamma)
def _math_digamma(x):
    return lambda x: _digamma(float(x))


def special_xlogy(x, y):
    out = _scipy().xlogy(x, y)
    return float(out) if np.ndim(out) == 0 else np.asarray(out, dtype=np.float64)


def xlogy_dx(x, y):
    """d xlogy / dx: log(y) (also where x == 0, as the limit from x != 0)."""
    return np.log(y)


@overload(special_xlogy)
def _special_xlogy(x, y):
    if _is_number(x) and _is_number(y):
        return lambda x, y: 0.0 if x == 0 else x * math.log(y)
    return lambda x, y: np.where(x == 0, 0.0, x * np.log(y)) + 0.0 * y


@overload(xlogy_dx)
def _xlogy_dx(x, y):
    return lambda x, y: np.log(y)


# --- logsumexp over an axis, and np.logaddexp.reduce -----------------------------------

def special_logsumexp(a, axis=None, keepdims=False):
    out = _scipy().logsumexp(a, axis=axis, keepdims=keepdims)
    return float(out) if np.ndim(out) == 0 else np.asarray(out, dtype=np.float64)


def logaddexp_reduce(a, axis=0):
    return special_logsumexp(a, axis=axis)


@register_jitable
def _lse_flat(a):
    m = np.max(a)
    if not np.isfinite(m):
        return m if m != -np.inf else -np.inf
    return m + math.log(np.sum(np.exp(a - m)))


@overload(special_logsumexp)
def _logsumexp(a, axis=None, keepdims=False):
    if not (keepdims is False or isinstance(keepdims, (types.Omitted, types.BooleanLiteral))
            and not getattr(keepdims, "literal_value", getattr(keepdims, "value", False))):
        return None
    if _is_number(a):
        return lambda a, axis=None, keepdims=False: float(a)
    if _is_none(axis):
        return lambda a, axis=None, keepdims=False: _lse_flat(np.ascontiguousarray(a).ravel())
    if isinstance(a, types.Array) and a.ndim == 2 and isinstance(axis, types.Integer):
        def impl(a, axis=None, keepdims=False):
            rows = a if axis % 2 == 1 else a.T
            out = np.empty(rows.shape[0])
            for i in range(rows.shape[0]):
                out[i] = _lse_flat(np.ascontiguousarray(rows[i]))
            return out
        return impl
    return None


@overload(logaddexp_reduce)
def _logaddexp_reduce(a, axis=0):
    if isinstance(a, types.Array) and a.ndim == 1:
        return lambda a, axis=0: _lse_flat(a)
    return None
