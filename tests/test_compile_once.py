"""A recursive function's gradient is compiled by numba once (backend/compile.py, issue 14).

srcgrad emits a recursive function's gradient `f__grad` and its joint gradient
`f__grad_all` with the same body; the compiled gradient is `f__grad_all`'s code, so
numba compiles one function. The gradients stay the same: against JAX, finite
differences and the Python version, numba on and off.
"""
import numpy as np
import pytest

import srcgrad
from srcgrad.backend.compile import same_code

from bench.problems.det import det  # determinant by minors, recursive (the bench's det)
from gradcheck import check_gradient


def not_recursive(x):
    return np.sum(np.sin(x) * x)


A = np.array([[2.0, -1.0, 0.5, 0.3], [0.4, 1.5, -0.7, 1.1],
              [-0.2, 0.9, 1.8, -0.6], [1.3, 0.2, -0.4, 0.8]])


@pytest.fixture(scope="module")
def det_grad():
    g = srcgrad.grad(det)
    g(A)
    return g


def test_recursive_gradient_is_served_by_its_joint_gradient(det_grad):
    compiled = det_grad._last.compiled
    assert det_grad.backend == "numba"
    assert compiled.dispatcher is getattr(compiled.module, "det__grad_all")
    assert "def det__grad(A)" in det_grad.source  # the module itself is unchanged


def test_a_function_without_twin_gets_its_own_dispatcher():
    g = srcgrad.grad(not_recursive)
    g(np.linspace(0.1, 1.0, 5))
    assert g._last.compiled.helpers == {}
    assert g.backend == "numba"


def test_recursive_gradient_against_jax_and_python(det_grad):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def det_jax(M):
        n = M.shape[0]
        if n == 1:
            return M[0, 0]
        return sum((-1.0) ** j * M[0, j] * det_jax(jnp.concatenate([M[1:, :j], M[1:, j + 1:]],
                                                                  axis=1)) for j in range(n))
    got = det_grad(A)
    np.testing.assert_allclose(got, np.asarray(jax.grad(det_jax)(jnp.asarray(A))), rtol=1e-12)
    np.testing.assert_array_equal(got, srcgrad.grad(det, jit=False)(A))


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_recursive_gradient_against_finite_differences(jit):
    check_gradient(det, (A,), 0, jit=jit)


def test_same_code_tells_constants_by_type():
    ns = {}
    exec("def a(x):\n    return x + 1\n\ndef b(x):\n    return x + 1.0\n\n"
         "def c(x):\n    return x + 1\n", ns)
    assert same_code(ns["a"], ns["c"])
    assert not same_code(ns["a"], ns["b"])


def _recursive_views_script() -> str:
    """A process that prints the gradient of test_compiled_forms.recursive_rows, whose
    recursion passes a view (`minor[:, 1:]`): another numba type than its argument."""
    import inspect
    from test_compiled_forms import recursive_rows
    return ("import numpy as np\nimport srcgrad\n\n\n" + inspect.getsource(recursive_rows) +
            "\n\nprint(repr(srcgrad.grad(recursive_rows)"
            "(np.linspace(-1.0, 1.0, 16).reshape(4, 4)).sum()))\n")


@pytest.mark.parametrize("loops", ["0", "strict"])
def test_a_recursion_through_views_runs_again_in_a_new_process(tmp_path, loops):
    """numba issue 6061: a recursive function cached with code of one signature calling
    another crashed the next process loading it (a segmentation fault). Generated
    functions compiled for several signatures are no longer cached (compile.py)."""
    import os
    import subprocess
    import sys
    script = tmp_path / "rows.py"
    script.write_text(_recursive_views_script())
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "cache"), "SRCGRAD_LOOPS": loops}
    runs = [subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr[-2000:]
    assert runs[0].stdout == runs[1].stdout
