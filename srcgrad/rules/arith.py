"""Rules for Python operators and arithmetic builtins (+ - * / ** % @, abs, max, float)."""
import builtins
import operator

import gast
import numpy as np

from ..runtime import (log_or_zero, matmul_lhs_grad, matmul_rhs_grad, power_slope, snapshot,
                       tie_share, unbroadcast)
from .registry import BINARY, defnondiff, defrule

MATMUL_SHAPES = (((2, 3), (3, 4)), ((2, 3), (3,)), ((3,), (3, 4)), ((3,), (3,)))


@defrule((gast.Add, "+", operator.add), np.add, shapes=BINARY)
def add(g, ans, x, y):
    return unbroadcast(g, x), unbroadcast(g, y)


@defrule((gast.Sub, "-", operator.sub), np.subtract, shapes=BINARY)
def sub(g, ans, x, y):
    return unbroadcast(g, x), unbroadcast(-g, y)


@defrule((gast.Mult, "*", operator.mul), np.multiply, shapes=BINARY)
def mul(g, ans, x, y):
    return unbroadcast(g * y, x), unbroadcast(g * x, y)


@defrule((gast.Div, "/", operator.truediv), np.divide, np.true_divide, shapes=BINARY)
def div(g, ans, x, y):
    return unbroadcast(g / y, x), unbroadcast(-g * ans / y, y)


@defrule((gast.Pow, "**", operator.pow), np.power, builtins.pow, domain=(0.5, 2.0), shapes=BINARY)
def power(g, ans, x, y):
    # power_slope(x, y, 1.0) is y * x ** (y - 1), and 0 where y == 0: x ** 0 is 1, also at
    # x = 0 (0 * 0.0 ** -1 would be nan). A literal y reads `g * 3 * x ** 2` (optimize.py).
    return unbroadcast(g * power_slope(x, y, 1.0), x), unbroadcast(g * ans * log_or_zero(x), y)


@defrule((gast.Mod, "%", operator.mod), np.mod, domain=(0.3, 2.0), shapes=BINARY)
def mod(g, ans, x, y):
    return unbroadcast(g, x), unbroadcast(-g * np.floor(x / y), y)


@defrule((gast.MatMult, "@", operator.matmul), np.matmul, np.dot, shapes=MATMUL_SHAPES)
def matmul(g, ans, x, y):
    return matmul_lhs_grad(g, x, y), matmul_rhs_grad(g, x, y)


@defrule((gast.USub, "-", operator.neg), np.negative)
def neg(g, ans, x):
    return -g


@defrule((gast.UAdd, "+", operator.pos), builtins.float, np.float64, np.positive, np.copy,
         snapshot)
def identity(g, ans, x):
    return g


@defrule(builtins.max, np.maximum, np.fmax, shapes=BINARY)
def maximum(g, ans, x, y):
    return unbroadcast(g * tie_share(x, ans, y), x), unbroadcast(g * tie_share(y, ans, x), y)


@defrule(builtins.min, np.minimum, np.fmin, shapes=BINARY)
def minimum(g, ans, x, y):
    return unbroadcast(g * tie_share(x, ans, y), x), unbroadcast(g * tie_share(y, ans, x), y)


defnondiff(
    (gast.FloorDiv, "//", operator.floordiv), (gast.Not, "not", operator.not_),
    (gast.Invert, "~", operator.invert), (gast.BitAnd, "&", operator.and_),
    (gast.BitOr, "|", operator.or_), (gast.BitXor, "^", operator.xor),
    (gast.LShift, "<<", operator.lshift), (gast.RShift, ">>", operator.rshift),
    (gast.Eq, "==", operator.eq), (gast.NotEq, "!=", operator.ne), (gast.Lt, "<", operator.lt),
    (gast.LtE, "<=", operator.le), (gast.Gt, ">", operator.gt), (gast.GtE, ">=", operator.ge),
    (gast.Is, "is", operator.is_), (gast.IsNot, "is not", operator.is_not),
    (gast.In, "in", lambda a, b: a in b), (gast.NotIn, "not in", lambda a, b: a not in b),
    builtins.len, builtins.int, builtins.bool, builtins.round, builtins.range, builtins.print,
    np.floor_divide,
)
