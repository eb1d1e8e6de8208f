"""srcgrad.to_jax: a loop-heavy NumPy function inside JAX (jax.jit, grad, jvp, vjp, jacfwd,
jacrev, hessian, vmap and jax.test_util.check_grads), checked against the same computation
written with jax.numpy and against central finite differences; bad arguments; and
`import srcgrad` imports neither JAX nor PyTorch.
"""
import functools
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import srcgrad
from gradcheck import assert_close, numerical_grad
from interop_models import STEPS, W, X, coupled, coupled_vectorized

jax = pytest.importorskip("jax", reason="srcgrad.to_jax needs jax (pip install -e '.[test]')")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
from jax.test_util import check_grads  # noqa: E402

coupled_twin = functools.partial(coupled_vectorized, jnp.concatenate, jnp.tanh)


@pytest.fixture(scope="module", params=[False, True], ids=["python", "numba"])
def bridged(request):
    return srcgrad.to_jax(coupled, X, W, STEPS, jit=request.param)


@pytest.fixture(scope="module")
def plain():
    return srcgrad.to_jax(coupled, X, W, STEPS, jit=False)


def loss(f):
    return lambda x, w: jnp.sum(jnp.sin(f(x, w, STEPS))) * w


def test_value_and_first_derivatives(bridged):
    assert_close(np.asarray(bridged(X, W, STEPS)), np.asarray(coupled_twin(X, W, STEPS)),
                 rtol=1e-13, atol=0)
    grad = jax.jit(jax.grad(loss(bridged), argnums=(0, 1)))(X, W)
    twin = jax.grad(loss(coupled_twin), argnums=(0, 1))(X, W)
    for got, want in zip(grad, twin):
        assert_close(np.asarray(got), np.asarray(want), rtol=1e-11, atol=1e-13)
    fd = numerical_grad(lambda x, w: float(loss(bridged)(x, w)), (X, W), (0, 1))
    assert_close(np.asarray(grad[0]), fd[0])
    assert_close(float(grad[1]), fd[1])
    got = jax.jacrev(lambda x: bridged(x, W, STEPS))(X)
    assert_close(np.asarray(got), np.asarray(jax.jacrev(lambda x: coupled_twin(x, W, STEPS))(X)),
                 rtol=1e-11, atol=1e-13)


def test_second_derivatives(plain):
    """jacfwd(jacrev) (jax.hessian) with both arguments, and jacrev(jacfwd); check_grads
    below covers jvp of jvp and vjp of vjp."""
    got = jax.jit(jax.hessian(loss(plain), argnums=(0, 1)))(X, W)
    want = jax.jit(jax.hessian(loss(coupled_twin), argnums=(0, 1)))(X, W)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert_close(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-12)
    got = jax.jit(jax.jacrev(jax.jacfwd(lambda x: plain(x, W, STEPS))))(X)
    want = jax.jit(jax.jacrev(jax.jacfwd(lambda x: coupled_twin(x, W, STEPS))))(X)
    assert_close(np.asarray(got), np.asarray(want), rtol=1e-9, atol=1e-12)


def test_hessian_under_jit_with_numba():
    bridged = srcgrad.to_jax(coupled, X, W, STEPS)
    got = jax.jit(jax.hessian(loss(bridged)))(X, W)
    assert_close(np.asarray(got), np.asarray(jax.jit(jax.hessian(loss(coupled_twin)))(X, W)),
                 rtol=1e-9, atol=1e-12)


def test_check_grads_and_vmap(plain):
    check_grads(lambda x, w: plain(x, w, STEPS), (X, W), order=2, modes=["fwd", "rev"])
    batch = np.stack([X, 0.5 * X, -X])
    got = jax.vmap(lambda x: plain(x, W, STEPS))(batch)
    assert_close(np.asarray(got), np.stack([coupled(x, W, STEPS) for x in batch]), rtol=1e-13)


def test_a_third_derivative_says_it_is_not_available(plain):
    third = jax.jacfwd(jax.hessian(lambda x: jnp.sum(plain(x, W, STEPS))))
    with pytest.raises(NotImplementedError, match="up to second order"):
        third(X)


def test_bad_arguments(plain):
    with pytest.raises(ValueError, match=r"'x' has shape \(3,\), but its example declared "
                                         r"shape \(4,\)"):
        jax.jit(lambda x: plain(x, W, STEPS))(X[:3])
    with pytest.raises(TypeError, match="'x' has dtype float32, but it was declared float64"):
        plain(X.astype(np.float32), W, STEPS)
    with pytest.raises(TypeError, match="takes 3 arguments"):
        plain(X, W)
    with pytest.raises(TypeError, match="one example argument per parameter"):
        srcgrad.to_jax(coupled, X, W)
    with pytest.raises(TypeError, match="the example for 'steps' is a str"):
        srcgrad.to_jax(coupled, X, W, "three")
    with pytest.raises(srcgrad.NonScalarOutputError, match="returns a tuple"):
        srcgrad.to_jax(lambda x: (x, x), X)


def test_import_srcgrad_imports_neither_jax_nor_torch():
    code = ("import sys, srcgrad; from srcgrad import to_jax, to_torch; "
            "print(sorted(m for m in ('jax', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_float32_without_x64():
    """Without jax_enable_x64, JAX's float32 arrays go in and out (srcgrad computes in float64)."""
    code = """if True:
        import sys; sys.path.insert(0, {tests!r})
        import json, jax, jax.numpy as jnp, numpy as np, srcgrad
        from interop_models import STEPS, W, X, coupled, coupled_vectorized
        f = srcgrad.to_jax(coupled, X, W, STEPS, jit=False)
        g = jax.jit(jax.grad(lambda x: jnp.sum(f(x, W, STEPS))))(jnp.asarray(X))
        print(f(X.astype(np.float32), W, STEPS).dtype, g.dtype, json.dumps(g.tolist()))
    """.format(tests=os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    value_dtype, grad_dtype, grad = out.stdout.split(maxsplit=2)
    assert (value_dtype, grad_dtype) == ("float32", "float32")
    expected = srcgrad.vjp(coupled, X, W, STEPS, jit=False)[1](np.ones(4))[0]
    assert_close(np.array(json.loads(grad)), expected, rtol=1e-6, atol=1e-7)
