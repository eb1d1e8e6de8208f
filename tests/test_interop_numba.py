"""numba functions in srcgrad: every transform takes a `@numba.njit` dispatcher for the Python
function it compiles, a differentiated function may call `@njit` functions (their source is
inlined like any user function's), `@srcgrad.grad` goes above `@numba.njit` (the other order
says so), and a numba function without readable source gets a clear error.

Every derivative is checked against central finite differences and a JAX twin (the same
computation written with jax.numpy), with srcgrad's code run by numba and as plain Python.
"""
import json
import os
import subprocess
import sys

import numba
import numpy as np
import pytest

import srcgrad
from gradcheck import assert_close, numerical_grad

jax = pytest.importorskip("jax", reason="jax is the second oracle (pip install -e '.[test]')")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

JITS = pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])


@numba.njit
def chain_energy(x, k):
    e = 0.0
    for i in range(x.shape[0] - 1):
        d = x[i + 1] - x[i]
        e += 0.5 * k * d * d + np.sin(x[i])
    return e


@numba.njit
def rms(x):
    return np.sqrt(np.sum(x * x) / x.shape[0])


def calls_njit(x):
    """A plain function calling two numba functions: both are inlined from their source."""
    return chain_energy(x, 2.0) * rms(x)


@numba.njit
def neighbours(x):
    y = np.empty(x.shape[0])
    y[0] = x[0] * x[0]
    for i in range(1, x.shape[0]):
        y[i] = np.tanh(x[i] * x[i - 1])
    return y


def chain_energy_jax(x, k):
    d = x[1:] - x[:-1]
    return jnp.sum(0.5 * k * d * d + jnp.sin(x[:-1]))


def calls_njit_jax(x):
    return chain_energy_jax(x, 2.0) * jnp.sqrt(jnp.sum(x * x) / x.shape[0])


def neighbours_jax(x):
    return jnp.concatenate([x[:1] * x[:1], jnp.tanh(x[1:] * x[:-1])])


X = np.array([0.3, -0.7, 1.1, 0.4])


@JITS
@pytest.mark.parametrize("f, twin", [(chain_energy, chain_energy_jax),
                                     (calls_njit, calls_njit_jax)], ids=["njit", "calls-njit"])
def test_gradients_of_numba_functions(f, twin, jit):
    args = (X, 2.0) if f is chain_energy else (X,)
    expected = jax.grad(twin)(*[jnp.asarray(a) for a in args])
    got = srcgrad.grad(f, jit=jit)(*args)
    assert_close(got, numerical_grad(f, args, 0))
    assert_close(got, np.asarray(expected), rtol=1e-10, atol=1e-12)
    value, again = srcgrad.value_and_grad(f, jit=jit)(*args)
    assert value == pytest.approx(float(twin(*args)), rel=1e-12)
    assert_close(again, got, rtol=1e-12, atol=0)


@JITS
def test_every_transform_takes_a_dispatcher(jit):
    jacobian = np.asarray(jax.jacfwd(neighbours_jax)(jnp.asarray(X)))
    value, tangent = srcgrad.jvp(neighbours, (X,), (np.ones(4),), jit=jit)
    assert_close(value, neighbours(X), rtol=1e-12)
    assert_close(tangent, jacobian @ np.ones(4), rtol=1e-10, atol=1e-12)
    value, vjp_fn = srcgrad.vjp(neighbours, X, jit=jit)
    assert_close(vjp_fn(np.arange(4.0))[0], np.arange(4.0) @ jacobian, rtol=1e-10, atol=1e-12)
    assert_close(srcgrad.jacfwd(neighbours, jit=jit)(X), jacobian, rtol=1e-10, atol=1e-12)
    assert_close(srcgrad.jacrev(neighbours, jit=jit)(X), jacobian, rtol=1e-10, atol=1e-12)
    hessian = np.asarray(jax.hessian(chain_energy_jax)(jnp.asarray(X), 2.0))
    assert_close(srcgrad.hessian(chain_energy, jit=jit)(X, 2.0), hessian, rtol=1e-9, atol=1e-12)


def test_show_and_the_decorator_above_njit():
    source = srcgrad.show(chain_energy)
    assert "def chain_energy__grad" in source and "# grad of:" in source

    @srcgrad.grad
    @numba.njit
    def cube_sum(x):
        return np.sum(x * x * x)
    assert_close(cube_sum(X), 3 * X * X, rtol=1e-12)
    assert not hasattr(cube_sum.__wrapped__, "py_func")  # the Python function, not numba's


def test_njit_above_grad_says_which_order_works():
    def square(x):
        return x * x
    with pytest.raises(TypeError, match="write @srcgrad.grad above @numba.njit"):
        numba.njit(srcgrad.grad(square))


def test_a_tape_block_calling_an_njit_function():
    w = X.copy()  # numba cannot type a srcgrad.Variable: the block runs, so watch an array
    with srcgrad.GradientTape() as tape:
        tape.watch(w)
        loss = chain_energy(w, 2.0) + rms(w)
    got = tape.gradient(loss, w)
    expected = jax.grad(lambda v: chain_energy_jax(v, 2.0) + jnp.sqrt(jnp.mean(v * v)))(
        jnp.asarray(X))
    assert_close(got, np.asarray(expected), rtol=1e-10, atol=1e-12)


def test_a_rule_on_an_njit_function_is_used_not_its_source():
    @numba.njit
    def clipped(x):
        return min(x, 1.0)

    @srcgrad.defvjp(clipped)
    def clipped_vjp(g, ans, x):
        return 7.0 * g  # not the true derivative: shows the rule was used

    assert srcgrad.grad(lambda x: clipped(x) * 2.0, jit=False)(0.5) == 14.0


_NO_SOURCE = {}
exec("def made_by_exec(x):\n    return x * x\n", _NO_SOURCE)
no_source = numba.njit(_NO_SOURCE["made_by_exec"])


def calls_no_source(x):
    return no_source(x) + 1.0


def test_a_numba_function_without_source():
    with pytest.raises(srcgrad.SourceUnavailableError, match="cannot read the source of made_by"):
        srcgrad.grad(no_source)
    with pytest.raises(srcgrad.MissingRuleError, match=r"srcgrad.defvjp\(made_by_exec\)") as info:
        srcgrad.grad(calls_no_source)
    assert "test_interop_numba.py" in str(info.value)  # the caller's line


MODEL = '''
import numba
import numpy as np


@numba.njit
def helper(x, k):
    return np.sin(x) * k


def model(x, k):
    return np.sum(helper(x, k) * x)
'''

RUN = '''
import json, sys
sys.path.insert(0, {folder!r})
import numpy as np
import srcgrad
from srcgrad import pipeline
import model
result = srcgrad.grad(model.model, jit=False)(np.array([0.5, 1.0, 2.0]), 3.0)
print(json.dumps({{"stats": pipeline.STATS, "result": result.tolist()}}))
'''


def test_the_warm_cache_notices_an_edited_njit_callee(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONDONTWRITEBYTECODE": "1"}

    def run():
        out = subprocess.run([sys.executable, "-c", RUN.format(folder=str(tmp_path))], env=env,
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])
    first = run()
    assert run()["stats"] == {"transforms": 0, "index_hits": 1}
    (tmp_path / "model.py").write_text(MODEL.replace("np.sin(x) * k", "np.cos(x) * k"))
    edited = run()
    assert edited["stats"]["transforms"] == 1
    x = np.array([0.5, 1.0, 2.0])
    assert_close(np.array(edited["result"]), 3.0 * (np.cos(x) - x * np.sin(x)), rtol=1e-12)
    assert first["result"] != edited["result"]
