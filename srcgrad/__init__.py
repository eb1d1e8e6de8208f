"""srcgrad: ahead-of-time automatic differentiation of Python + NumPy by source transformation.

`grad(f)` reads f's source, generates a new Python function computing the
gradient (a forward sweep, then a backward sweep), writes it to an on-disk
cache, and compiles it with numba. See README.md.
"""
from .config import __version__  # noqa: F401

from .api.gradient import GradFunction, show  # noqa: E402
from .api.derivatives import (  # noqa: E402
    NestedGrad, grad, hessian, hvp, jacfwd, jacrev, jvp, value_and_grad, vjp)
from .rules.custom import defjvp, defvjp  # noqa: E402
from .api.gradient_tape import GradientTape, UnconnectedGradients  # noqa: E402
from .api.variables import Variable  # noqa: E402
from .api import metrics  # noqa: E402
from .runtime import checkpointed, stop_gradient  # noqa: E402
from .interop import to_jax, to_torch  # noqa: E402  (JAX and PyTorch are imported when called)
from .errors import (  # noqa: E402
    MissingRuleError, NonScalarOutputError, SourceUnavailableError, SrcgradError,
    SrcgradSyntaxError, SrcgradWarning,
)

__all__ = ["grad", "value_and_grad", "jvp", "vjp", "jacfwd", "jacrev", "hessian", "hvp", "show",
           "defvjp", "defjvp", "stop_gradient", "checkpointed", "GradientTape", "Variable", "metrics",
           "UnconnectedGradients", "GradFunction", "NestedGrad", "SrcgradError",
           "SrcgradSyntaxError", "MissingRuleError", "NonScalarOutputError",
           "SourceUnavailableError", "SrcgradWarning", "to_jax", "to_torch"]
