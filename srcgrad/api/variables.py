"""`srcgrad.Variable`: a named, assignable float64 value, as in TensorFlow.

Arithmetic and NumPy functions work on a Variable as on its value and return
plain NumPy values (floats or arrays), so a model written for NumPy runs
unchanged. A `GradientTape` watches trainable Variables read in its block.
"""
from __future__ import annotations

import numbers
import operator
import warnings

import numpy as np

from ..errors import SrcgradWarning


def _in_place(op, spelled):
    """`v op= d` on a Variable: `Variable._rebound`."""
    return lambda self, other: self._rebound(other, op, spelled)


class Variable(np.lib.mixins.NDArrayOperatorsMixin):
    """A float64 scalar or array that `GradientTape` can watch; update it with `.assign`."""

    srcgrad_data = True  # resolve.py reads a global Variable as data, like an array

    def __init__(self, value, trainable: bool = True, name: str | None = None):
        self._value = _float64(value)
        self.trainable = bool(trainable)
        self._name = name or "Variable"

    # ---- value ------------------------------------------------------------------------
    @property
    def value(self):
        """The current value: a float for a scalar Variable, else an array."""
        return float(self._value) if self._value.ndim == 0 else self._value

    def numpy(self):
        return self._value[()] if self._value.ndim == 0 else self._value.copy()

    @property
    def name(self) -> str:
        return f"{self._name}:0"

    @property
    def shape(self):
        return self._value.shape

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def size(self):
        return self._value.size

    # ---- updates ----------------------------------------------------------------------
    def assign(self, value):
        new = _float64(value)
        if new.shape != self._value.shape:
            raise ValueError(f"cannot assign a value of shape {new.shape} to {self.name} of "
                             f"shape {self._value.shape}")
        self._value = new
        return self

    def assign_add(self, delta):
        return self.assign(self._value + _float64(delta))

    def assign_sub(self, delta):
        return self.assign(self._value - _float64(delta))

    # ---- behaving like the value ----------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        return self._value if dtype is None else self._value.astype(dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if any(isinstance(o, Variable) for o in kwargs.get("out", None) or ()):
            raise TypeError(f"{self.name}: NumPy cannot write into a srcgrad.Variable "
                            "(out=); compute the value and give it to .assign(...)")
        plain = [i.value if isinstance(i, Variable) else i for i in inputs]
        result = getattr(ufunc, method)(*plain, **kwargs)
        return result[()] if isinstance(result, np.ndarray) and result.ndim == 0 else result

    # `v += d`, as in TensorFlow: v becomes the new plain value; the Variable is unchanged
    def _rebound(self, other, op, spelled):
        warnings.warn(f"`{spelled}` on {self.name} makes a new value and leaves the Variable "
                      f"unchanged (as in TensorFlow); use .assign(...) or .assign_add(...) to "
                      "update it", SrcgradWarning, stacklevel=3)
        return op(self, other)

    __iadd__ = _in_place(operator.add, "+=")
    __isub__ = _in_place(operator.sub, "-=")
    __imul__ = _in_place(operator.mul, "*=")
    __itruediv__ = _in_place(operator.truediv, "/=")
    __ipow__ = _in_place(operator.pow, "**=")
    __imatmul__ = _in_place(operator.matmul, "@=")

    def __getitem__(self, index):
        return self._value[index]

    def __len__(self):
        return len(self._value)

    def __float__(self):
        return float(self._value)

    def __bool__(self):
        return bool(self._value)

    def __getattr__(self, attr):  # .sum(), .T, .reshape(...) as on the value
        if attr.startswith("_"):
            raise AttributeError(attr)
        return getattr(self._value if self._value.ndim else self.value, attr)

    def __repr__(self):
        return f"<srcgrad.Variable '{self.name}' shape={self.shape} numpy={self.numpy()!r}>"


def _float64(value):
    if isinstance(value, Variable):
        return value._value.copy()
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, numbers.Number)
                                               and not isinstance(value, numbers.Real)):
        raise TypeError(f"srcgrad.Variable holds real numbers; got {value!r}")
    return np.array(value, dtype=np.float64)
