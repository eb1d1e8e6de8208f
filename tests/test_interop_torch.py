"""srcgrad.to_torch: a loop-heavy NumPy function as a torch.autograd.Function, checked with
torch.autograd.gradcheck (backward and forward mode), gradgradcheck, and against the same
computation written with torch ops; bad arguments (dtype, shape, device).
"""
import functools

import numpy as np
import pytest

import srcgrad
from gradcheck import assert_close
from interop_models import STEPS, W, X, coupled, coupled_vectorized

torch = pytest.importorskip("torch", reason="srcgrad.to_torch needs torch (pip install -e "
                                            "'.[test]')")
coupled_twin = functools.partial(coupled_vectorized, torch.cat, torch.tanh)


def leaves():
    return (torch.tensor(X, requires_grad=True),
            torch.tensor(W, dtype=torch.float64, requires_grad=True))


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_values_gradients_and_gradcheck(jit):
    bridged = srcgrad.to_torch(coupled, jit=jit)
    x, w = leaves()
    y = bridged(x, w, STEPS)
    assert y.dtype == torch.float64 and y.shape == (4,)
    assert_close(y.detach().numpy(), coupled(X, W, STEPS), rtol=1e-13)
    got = torch.autograd.grad(torch.sin(y).sum() * w, (x, w))
    xt, wt = leaves()
    want = torch.autograd.grad(torch.sin(coupled_twin(xt, wt, STEPS)).sum() * wt, (xt, wt))
    for g, e in zip(got, want):
        assert_close(g.numpy(), e.numpy(), rtol=1e-11, atol=1e-13)
    assert torch.autograd.gradcheck(lambda x, w: bridged(x, w, STEPS), leaves(),
                                    check_forward_ad=True)


def test_second_derivatives():
    bridged = srcgrad.to_torch(coupled)
    assert torch.autograd.gradgradcheck(lambda x, w: bridged(x, w, STEPS), leaves())
    w = torch.tensor(W, dtype=torch.float64)
    got = torch.autograd.functional.hessian(lambda x: torch.sin(bridged(x, w, STEPS)).sum(),
                                            torch.tensor(X))
    want = torch.autograd.functional.hessian(
        lambda x: torch.sin(coupled_twin(x, w, STEPS)).sum(), torch.tensor(X))
    assert_close(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-12)
    x, w = leaves()
    (g,) = torch.autograd.grad(bridged(x, w, STEPS).sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x, create_graph=True)
    with pytest.raises(RuntimeError):  # third derivatives: not available
        torch.autograd.grad(h.sum(), x)


def test_bad_arguments():
    declared = srcgrad.to_torch(coupled, X, W, STEPS, jit=False)
    x, w = leaves()
    with pytest.raises(ValueError, match=r"'x' has shape \(3,\), but its example declared"):
        declared(x[:3], w, STEPS)
    with pytest.raises(TypeError, match=r"'x' is torch.float32; .* pass x.double\(\)"):
        declared(x.float(), w, STEPS)
    on_device = torch.zeros(4, dtype=torch.float64, device="meta")  # what a GPU tensor meets
    with pytest.raises(ValueError, match=r"'x' is on meta; .* Pass x.cpu\(\)"):
        declared(on_device, w, STEPS)
    with pytest.raises(TypeError, match="takes 3 arguments"):
        declared(x, w)
    with pytest.raises(TypeError, match="no argument is a float tensor"):
        srcgrad.to_torch(lambda n: n * 2)(3)
    constant = declared(X, w, STEPS)  # a NumPy array is a constant: only w gets a gradient
    (dw,) = torch.autograd.grad(constant.sum(), w)
    assert dw.shape == ()
