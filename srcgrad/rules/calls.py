"""Rules for calls into user code (see calls.py): `stop_gradient`, a recursive call's link, and
the stand-in of a function called through its own gradient (`f__value`)."""
from ..runtime import linked, stop_gradient
from .registry import REGISTRY, Rule, defnondiff, defrule

defnondiff(stop_gradient)


@defrule(linked)
def linked_vjp(g, ans, value, partial, arg):
    # Not the derivative of `linked` as a function (it returns `value`): the link
    # says "value depends on arg with derivative partial" (runtime/calls.py).
    return g, None, g * partial


class Generated:
    """Stands for a function srcgrad generated (`f__grad_all`) in `Resolved.callees`.

    Its result is a tuple of numbers with no gradient of its own; the partial
    derivatives it returns reach the arguments through `linked`.
    """

    def __init__(self, name: str):
        self.__name__ = name


def generated(name: str) -> Generated:
    """A `Generated` stand-in, registered as carrying no gradient."""
    stand_in = Generated(name)
    REGISTRY[stand_in] = Rule(name, None, None)
    return stand_in


def outlined_vjp(g, ans, *args):
    # Never inlined: contributions.py emits the call of the callee's own `f__vjp` instead.
    raise AssertionError("an outlined call's cotangents come from its f__vjp")


def outlined_value(func) -> Generated:
    """The stand-in for `f__value`, the primal of a function called through its own gradient
    (calls.py, OUTLINE_SITES); its result is differentiable, through `f__vjp`. It knows
    `func`: two functions of one name cannot share it."""
    stand_in = Generated(f"{func.__name__}__value")
    stand_in.function = func
    REGISTRY[stand_in] = Rule(stand_in.__name__, None, outlined_vjp)
    return stand_in


def same_callee(a, b) -> bool:
    """Whether two objects a generated module may name alike are the same: identical, or
    stand-ins of the same outlined function (each transformation makes its own)."""
    return a is b or getattr(a, "function", None) is not None and \
        getattr(a, "function", None) is getattr(b, "function", None)
