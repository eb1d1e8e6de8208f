"""srcgrad: ahead-of-time automatic differentiation of Python + NumPy by source transformation.

`grad(f)` reads f's source, generates a new Python function computing the
gradient (a forward sweep, then a backward sweep), writes it to an on-disk
cache, and compiles it with numba. See README.md.
"""
__version__ = "0.1.0"

from .api import GradFunction, grad, show, value_and_grad  # noqa: E402
from .derivatives import NestedGrad, hessian, jacfwd, jacrev, jvp, vjp  # noqa: E402
from .rules.custom import defvjp  # noqa: E402
from .gradient_tape import GradientTape, UnconnectedGradients  # noqa: E402
from .variables import Variable  # noqa: E402
from . import metrics  # noqa: E402
from .runtime import stop_gradient  # noqa: E402
from .errors import (  # noqa: E402
    MissingRuleError, NonScalarOutputError, SourceUnavailableError, SrcgradError,
    SrcgradSyntaxError, SrcgradWarning,
)

__all__ = ["grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "hessian", "show",
           "defvjp", "stop_gradient", "GradientTape", "Variable", "metrics",
           "UnconnectedGradients", "GradFunction", "NestedGrad", "SrcgradError",
           "SrcgradSyntaxError", "MissingRuleError", "NonScalarOutputError",
           "SourceUnavailableError", "SrcgradWarning"]
