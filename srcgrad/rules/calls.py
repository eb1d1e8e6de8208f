"""Rules for calls into user code (see calls.py): `stop_gradient`, and a recursive call's link."""
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
