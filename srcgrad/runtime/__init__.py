"""Run-time helpers that generated code and derivative rules call.

Each helper is a plain NumPy function (used when the generated code runs as
Python, `jit=False`) with a numba twin registered by `numba.extending.overload`,
chosen per argument type at compile time, so the generated source stays the
same whether a value is a scalar or an array of any rank.

NOTE [scalars]: inside generated code a "scalar" is a Python/NumPy float or
int; 0-d arrays are turned into floats by the caller before the call
(`api/gradient.py`), so helpers only distinguish numbers from arrays of rank >= 1.
"""
from __future__ import annotations

from .calls import linked, stop_gradient  # noqa: F401
from . import reductions  # noqa: F401  (numba overloads of np.max(x, axis, keepdims), ...)
from .tangents import matrix_inner, reduce_sum, solve_like, solve_product, unit_like  # noqa: F401
from .checks import check_cotangent, forbid_array_alias, snapshot  # noqa: F401
from .guards import ShapeGuard, guard_kind, index_in, same_shape, slice_at, span_in  # noqa: F401
from .recording import record_at, restore, restore_at, range_last, tape_array, tape_like, trip_count  # noqa: F401
from .adjoints import (broadcast_like, seed_like, zeros_like, zeros_plus,  # noqa: F401
                       unbroadcast, fill_like, stored)
from .cotangents import tie_share, extremum_share, select_where, log_or_zero, matmul_lhs_grad, matmul_rhs_grad, power_slope  # noqa: F401
from .axes import (expand_to, axis_extremum_share, reshape_like, untranspose,  # noqa: F401
                   cumsum_grad, clip_mask, diff_grad, flatten_copy, prod_others)
from .joining import concatenate_grad, stack_grad, hstack_grad, vstack_grad  # noqa: F401
from .gather import add_at, check_write_index  # noqa: F401
from .linalg import (swap_last_axes, stack_scalar, solve_transposed, solve_outer, tril_half_diag, slogdet_sign,  # noqa: F401
                     slogdet_logabs, linalg_norm_grad, einsum_operand_grad, einsum_single, cofactors)
from .checkpoints import (add_cotangents, budget_snapshots, checkpointed, cotangent_dot, state_bytes, finish_plan, first_slot, loop_ran,  # noqa: F401
                          next_action, online_plan, plan_position, restored, revolve_plan,
                          snapshot_due, take_slot, truncate)
from . import decompositions as _decompositions, effects as _effects  # noqa: E402
from . import matrices as _matrices, ordering as _ordering, special as _special  # noqa: E402
from . import tangent_grads as _tangent_grads  # noqa: E402  (issue 17: reverse rules of forward rules)
from . import interp_tangents as _interp_tangents  # noqa: E402  (issue 17: np.interp's)
from . import decomposition_tangents as _decomposition_tangents  # noqa: E402  (and eigh's, svd's)
from . import decomposition_curvature as _decomposition_curvature  # noqa: E402

__all__ = [
    "add_cotangents", "budget_snapshots", "state_bytes", "checkpointed", "cotangent_dot", "finish_plan", "first_slot", "loop_ran", "next_action",
    "online_plan", "plan_position", "restored", "revolve_plan", "snapshot_due", "take_slot", "truncate",
    "linked",
    "matrix_inner",
    "reduce_sum",
    "solve_like",
    "solve_product",
    "unit_like",
    "stop_gradient",
    "check_cotangent",
    "forbid_array_alias",
    "snapshot",
    "guard_kind",
    "same_shape",
    "index_in",
    "slice_at",
    "span_in",
    "record_at",
    "restore",
    "restore_at",
    "range_last",
    "tape_array",
    "tape_like",
    "trip_count",
    "seed_like",
    "zeros_like",
    "zeros_plus",
    "unbroadcast",
    "fill_like",
    "stored",
    "broadcast_like",
    "tie_share",
    "extremum_share",
    "select_where",
    "log_or_zero",
    "power_slope",
    "matmul_lhs_grad",
    "matmul_rhs_grad",
    "expand_to",
    "axis_extremum_share",
    "reshape_like",
    "untranspose",
    "cumsum_grad",
    "diff_grad",
    "clip_mask",
    "flatten_copy",
    "prod_others",
    "concatenate_grad",
    "stack_grad",
    "hstack_grad",
    "vstack_grad",
    "add_at",
    "check_write_index",
    "swap_last_axes",
    "stack_scalar",
    "solve_transposed",
    "solve_outer",
    "tril_half_diag",
    "slogdet_sign",
    "cofactors",
    "slogdet_logabs",
    "linalg_norm_grad",
    "einsum_operand_grad",
    "einsum_single",
]

# Helpers of the rules added for issue 15 (everyday Python and NumPy): every public
# function of these modules.
for _module in (_decompositions, _effects, _matrices, _ordering, _special, _tangent_grads,
                _interp_tangents, _decomposition_tangents, _decomposition_curvature):
    for _name in sorted(vars(_module)):
        _value = getattr(_module, _name)
        if not _name.startswith("_") and callable(_value) and getattr(
                _value, "__module__", None) == _module.__name__:
            globals()[_name] = _value
            __all__.append(_name)

