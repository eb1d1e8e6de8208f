"""Rules for np.einsum with explicit or implicit subscripts.

A rule has a fixed number of arguments, so np.einsum's rule takes two operands;
a one-operand call is generated as `einsum_single(subscripts, a)`. Both rules
call `einsum_operand_grad`, which swaps the output's labels with the operand's
and handles diagonals (`ii`), labels summed within one operand and broadcasting.
numba does not compile np.einsum: a gradient using it runs as Python (with a
SrcgradWarning under jit=True).
"""
import numpy as np

from ..runtime import einsum_operand_grad, einsum_single
from .registry import defrule


def _case(subscripts, *shapes):
    def sample(rng):
        return (subscripts, *(float(rng.normal()) if s == () else rng.normal(size=s)
                              for s in shapes))
    sample.__name__ = subscripts.replace("...", "E").replace(",", "_").replace("->", "_to_")
    return sample


@defrule(np.einsum, sample=(
    _case("ij,jk->ik", (2, 3), (3, 4)), _case("i,i->", (3,), (3,)), _case("i,j->ij", (2,), (3,)),
    _case("bij,bjk->bik", (2, 2, 3), (2, 3, 2)), _case("ij,jk", (2, 3), (3, 4)),
    _case("...ij,...jk->...ik", (2, 1, 2, 3), (4, 3, 2)), _case("ii,i->i", (3, 3), (3,)),
    _case("ij,k->k", (2, 3), (4,)), _case("ij,->ji", (2, 3), ()),
    _case("ij,ij->ij", (1, 3), (2, 3))))
def einsum(g, ans, subscripts, a, b, *, optimize=False):
    return (None, einsum_operand_grad(g, subscripts, 0, a, b),
            einsum_operand_grad(g, subscripts, 1, a, b))


@defrule(einsum_single, sample=(
    _case("ij->ji", (2, 3)), _case("ii->", (3, 3)), _case("ii->i", (3, 3)), _case("ij->", (2, 3)),
    _case("ij->i", (2, 3)), _case("ij", (2, 3)), _case("ijk->kij", (2, 3, 4)),
    _case("...i->...", (2, 3, 4))))
def einsum_one(g, ans, subscripts, a):
    return None, einsum_operand_grad(g, subscripts, 0, a)
