"""Part of pass 7 (reverse.py, and forward.py): the error for calls without a derivative rule.

Guarantees: one `MissingRuleError` names every call in the function (inlined
callees included) through which a differentiable value flows and that has no
rule, each as the user spelled it (`np.diag`, `sp.gammaln`, `rng.normal`) with
its file:line, so a user adds all the rules at once, not one per run. A random
draw that receives a differentiable argument is named as such (draws are
constants: srcgrad does not differentiate through sampling), and so is a try
statement a differentiable value flows through (frontend/trying.py).
"""
from __future__ import annotations

import gast

from ..analysis.activity import operands, operation_rule, simple_statements
from ..errors import MissingRuleError
from ..frontend.everyday import RandomDraw
from ..frontend.trying import TryBlock
from ..syntax import dotted_name


def _missing(norm, active) -> list:
    """(spelling, callee object, statement) of each call an active value flows through
    that has no rule, in program order, each spelling once."""
    found, seen = [], set()
    for stmt, _ in simple_statements(norm.body):
        value = getattr(stmt, "value", None)
        if not (isinstance(stmt, gast.Assign) and isinstance(value, gast.Call)):
            continue
        target = stmt.targets[0]
        if not (isinstance(target, gast.Name) and target.id in active):
            continue
        if operation_rule(value, norm) is not None or not set(operands(value, norm)) & active:
            continue
        spelled = dotted_name(value.func)
        if spelled not in seen:
            seen.add(spelled)
            found.append((spelled, norm.resolved.callees.get(spelled), stmt))
    return found


def _srcgrad_helper(obj) -> bool:
    """A runtime helper of srcgrad's forward rules (`sort_tangent`), met when reverse mode
    differentiates forward-mode code (second order)."""
    return (getattr(obj, "__module__", None) or "").startswith("srcgrad.runtime")


def missing_rules(norm, active, stmt) -> MissingRuleError:
    """The error for the call at `stmt` and every other call like it in the function."""
    found = _missing(norm, active) or [(dotted_name(stmt.value.func),
                                        norm.resolved.callees.get(dotted_name(stmt.value.func)),
                                        stmt)]
    parsed = norm.resolved.parsed
    lines = []
    for spelled, obj, where in found:
        loc = parsed.loc(where)
        if isinstance(obj, TryBlock):
            lines.append(f"  the try statement at {parsed.loc(obj.where)}: srcgrad runs a try "
                         "statement as written and does not differentiate through it; compute "
                         "the differentiable values outside the try")
        elif isinstance(obj, RandomDraw):
            lines.append(f"  {spelled}(...) at {loc}: a random draw given a differentiable "
                         "argument; draws are constants in srcgrad, so draw standard values and "
                         "transform them (mu + sigma * rng.standard_normal(n))")
        elif _srcgrad_helper(obj):
            lines.append(f"  {loc.text.strip()} at {loc}: srcgrad's forward rule for this line "
                         f"calls {spelled}, which has no derivative rule yet, so srcgrad "
                         "cannot take a derivative of this order through it")
        else:
            hint = " (a Python function: it needs a rule or readable source)" if (
                callable(obj) and hasattr(obj, "__code__")) else ""
            lines.append(f"  {spelled} at {loc}{hint}")
    ruled = [s for s, obj, _ in found
             if not isinstance(obj, (RandomDraw, TryBlock)) and not _srcgrad_helper(obj)]
    advice = (f" Give each a rule with @srcgrad.defvjp({ruled[0]}) (see the README, "
              "'Custom derivative rules')." if ruled else "")
    which = "these calls" if len(found) > 1 else "this call"
    return MissingRuleError(
        f"srcgrad has no derivative rule for {which}, and a differentiable value flows through "
        f"{'them' if len(found) > 1 else 'it'}:\n" + "\n".join(lines + [advice.strip()]).rstrip(),
        parsed.loc(found[0][2]))
