"""`srcgrad.defvjp` and `srcgrad.defjvp`: give any callable a reverse and a forward
rule, used like a built-in one.

The callable may have no Python source (a numba function, a C extension, a
SciPy routine). Its rule is a short Python function `vjp(g, ans, *args)`
returning the cotangent of each argument without a default (a tuple when
there are several, `None` for no gradient), exactly like the built-in rules:
generated code inlines its body, so under `jit=True` it runs compiled when
numba can compile the callable and the rule. The rule's number of cotangents
is checked when it is registered; their shapes are checked when it runs (a cotangent
with the shape an argument was broadcast to, such as `g * ...` for a scalar
parameter of an elementwise function, is summed back to the argument's shape,
as for built-in rules; any other shape is an error).

Its forward rule is `jvp(t_x, ..., ans, x, ...)`: one tangent per argument
without a default, in order, then `ans` and the call's arguments, returning the
tangent of the result (forward-mode code inlines its body; a tangent that does
not vary is passed as a zero of its argument's shape). The number of tangents
is checked when it is registered, the result's shape when it runs.

A callable with both rules works in every mode and order (hvp and Hessians are
reverse mode over forward-mode code, so they use both). One with only a forward
rule gets a placeholder reverse rule (`srcgrad_no_reverse`) that reverse mode
refuses at transformation time (hvp then falls back to forward over forward); one with only a reverse rule is refused by
forward mode (transforms/forward.py names the function and this decorator).
"""
from __future__ import annotations

import inspect
import textwrap

import gast

from ..errors import SrcgradError
from ..runtime import check_cotangent
from .forward import JVP
from .registry import REGISTRY, Rule, differentiable_params, spelling
from ..syntax import walk

CUSTOM_JVP: dict = {}  # primal -> its forward rule, whichever decorator came first


def defvjp(primal, vjp=None):
    """Register `vjp(g, ans, *args)` as the reverse rule of `primal`; usable as a decorator.

        @srcgrad.defvjp(my_kernel)
        def my_kernel_vjp(g, ans, x, y):
            return g * y, g * x
    """
    if vjp is None:
        return lambda rule: defvjp(primal, rule)
    _check_callables("srcgrad.defvjp", primal, vjp)
    params = list(inspect.signature(vjp).parameters.values())
    if len(params) < 3 or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        raise TypeError(f"srcgrad.defvjp: the rule for {_name(primal)} must take (g, ans, "
                        "then each argument of the call by name), without *args or **kwargs")
    _check_returns(primal, vjp)
    REGISTRY[primal] = Rule(spelling(primal) or _name(primal), primal, vjp, custom=True)
    if primal in CUSTOM_JVP:
        _pair(primal, vjp, CUSTOM_JVP[primal])
    return vjp


def defjvp(primal, jvp=None):
    """Register `jvp(t_x, ..., ans, x, ...)` as the forward rule of `primal`; usable as a
    decorator.

        @srcgrad.defjvp(my_kernel)
        def my_kernel_jvp(t_x, t_y, ans, x, y):
            return t_x * y + x * t_y
    """
    if jvp is None:
        return lambda rule: defjvp(primal, rule)
    _check_callables("srcgrad.defjvp", primal, jvp)
    names = [p.name for p in inspect.signature(jvp).parameters.values()]
    where = _where(jvp)
    if "ans" not in names or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                                 for p in inspect.signature(jvp).parameters.values()):
        raise TypeError(f"srcgrad.defjvp: the rule {jvp.__qualname__} ({where}) for "
                        f"{_name(primal)} must take (a tangent per argument, ans, then each "
                        "argument of the call by name), without *args or **kwargs")
    tangents, wanted = names[:names.index("ans")], _call_params(jvp)
    if len(tangents) != len(wanted):
        raise SrcgradError(
            f"srcgrad.defjvp: the rule {jvp.__qualname__} ({where}) for {_name(primal)} takes "
            f"{len(tangents)} tangent(s) ({', '.join(tangents) or 'none'}) before ans, but "
            f"{len(wanted)} argument(s) without a default ({', '.join(wanted)}): take one "
            "tangent per argument, in order")
    _returned(jvp, f"srcgrad.defjvp: the rule {jvp.__qualname__} ({where})", "the tangent")
    CUSTOM_JVP[primal] = jvp
    rule = REGISTRY.get(primal)
    if rule is None or not rule.custom:
        rule = Rule(spelling(primal) or _name(primal), primal, _placeholder(primal, jvp),
                    custom=True)
        REGISTRY[primal] = rule
    _pair(primal, rule.vjp, jvp)
    return jvp


def check_cotangent_vjp(g, ans, ct, x, message):
    return g, None, None


def check_cotangent_jvp(t_ct, t_x, t_message, ans, ct, x, message):
    return check_cotangent(t_ct, x, message)


# The shape check around a custom rule's result passes its value through, so code that
# holds one (a custom rule's forward code, differentiated again) can be differentiated.
REGISTRY[check_cotangent] = Rule("check_cotangent", check_cotangent, check_cotangent_vjp,
                                 custom=True)
JVP[check_cotangent_vjp] = check_cotangent_jvp


def _check_callables(who: str, primal, rule) -> None:
    if not callable(primal):
        raise TypeError(f"{who}: {primal!r} is not callable")
    if not inspect.isfunction(rule):
        raise TypeError(f"{who}: the rule for {_name(primal)} must be a Python function "
                        f"(def), got {type(rule).__name__}")


def _call_params(jvp) -> list[str]:
    """The jvp's call parameters after `ans` that have no default (one tangent each)."""
    params = list(inspect.signature(jvp).parameters.values())
    after = params[[p.name for p in params].index("ans") + 1:]
    return [p.name for p in after if p.default is inspect.Parameter.empty]


def _pair(primal, vjp, jvp) -> None:
    wanted = differentiable_params(vjp)
    if len(wanted) != len(_call_params(jvp)):
        raise SrcgradError(
            f"srcgrad.defjvp: the forward rule {jvp.__qualname__} ({_where(jvp)}) for "
            f"{_name(primal)} takes tangents of {', '.join(_call_params(jvp))}, but its reverse "
            f"rule {vjp.__qualname__} returns cotangents of {', '.join(wanted)}: both rules take "
            "the same arguments")
    JVP[vjp] = jvp


def _placeholder(primal, jvp):
    """A reverse rule with the call's signature that reverse mode refuses to use."""
    def no_reverse_rule(g, ans, *args, **kwargs):
        raise SrcgradError(no_reverse_rule.srcgrad_no_reverse)
    params = list(inspect.signature(jvp).parameters.values())
    after = params[[p.name for p in params].index("ans") + 1:]
    head = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ("g", "ans")]
    no_reverse_rule.__signature__ = inspect.Signature(head + after)
    name = _name(primal).split(".")[-1]
    no_reverse_rule.srcgrad_no_reverse = (
        f"srcgrad has no reverse rule for {_name(primal)}, only a forward rule "
        f"({jvp.__qualname__}, from srcgrad.defjvp); reverse mode (grad, vjp, jacrev) needs "
        f"one (hvp and hessian then take n second-order JVPs instead): add it with @srcgrad.defvjp({name}), a function "
        f"{name}_vjp(g, ans, {', '.join(p.name for p in after)}) returning the cotangents")
    return no_reverse_rule


def _name(obj) -> str:
    return getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)


def _where(rule) -> str:
    return f"{inspect.getsourcefile(rule)}:{rule.__code__.co_firstlineno}"


def _returned(rule, who: str, what: str):
    """The expression `rule` returns, checking it ends with its only return statement."""
    try:
        source = textwrap.dedent(inspect.getsource(rule))
    except (OSError, TypeError) as exc:
        raise SrcgradError(f"{who.split(':')[0]}: cannot read the source of the rule "
                           f"{rule.__qualname__} ({exc}); define it with def in a file") from None
    *body, last = gast.parse(source).body[0].body
    if not isinstance(last, gast.Return) or last.value is None or any(
            isinstance(n, gast.Return) for stmt in body for n in walk(stmt)):
        raise SrcgradError(f"{who} must end with its only return statement, which returns "
                           f"{what}")
    return last.value


def _check_returns(primal, vjp) -> None:
    wanted = differentiable_params(vjp)
    where = _where(vjp)
    value = _returned(vjp, f"srcgrad.defvjp: the rule {vjp.__qualname__} ({where})",
                      "the cotangents")
    count = len(value.elts) if isinstance(value, gast.Tuple) and len(wanted) > 1 else 1
    if len(wanted) > 1 and not isinstance(value, gast.Tuple) or count != len(wanted):
        raise SrcgradError(
            f"srcgrad.defvjp: the rule {vjp.__qualname__} ({where}) for {_name(primal)} returns "
            f"{count} cotangent(s), but takes {len(wanted)} argument(s) "
            f"({', '.join(wanted)}): return one per argument, as a tuple display "
            "(use None for an argument without a gradient)")
