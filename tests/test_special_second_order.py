"""Hessians through scipy.special.logsumexp, np.logaddexp.reduce, digamma and xlogy (their
forward rules call expand_to, trigamma and xlogy_dx, which had no rule: MissingRuleError),
against JAX's, as Python, and two of them compiled by numba."""
import numpy as np
import pytest
import scipy.special as sp

import srcgrad


def lse(x):
    return sp.logsumexp(x) + np.sum(sp.logsumexp(np.outer(x, x), axis=1))


def lae(x):
    return np.logaddexp.reduce(x * 2.0)


def dig(x):
    return np.sum(sp.digamma(x + 3.0)) + np.sum(sp.gammaln(x + 2.0))


def xly(x):
    return np.sum(sp.xlogy(x + 2.0, x ** 2 + 1.0))


X = np.array([0.3, -0.5, 1.2])


def _jax_twins():
    jax = pytest.importorskip("jax", reason="jax is the oracle for these Hessians")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.special as js
    return jax, {
        lse: lambda x: js.logsumexp(x) + jnp.sum(js.logsumexp(jnp.outer(x, x), axis=1)),
        lae: lambda x: js.logsumexp(x * 2.0),
        dig: lambda x: jnp.sum(js.digamma(x + 3.0)) + jnp.sum(js.gammaln(x + 2.0)),
        xly: lambda x: jnp.sum(js.xlogy(x + 2.0, x ** 2 + 1.0)),
    }


CASES = [(f, False) for f in (lse, lae, dig, xly)] + [(lae, True), (xly, True)]


@pytest.mark.parametrize("f, jit", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_hessian_matches_jax(f, jit):  # compiled: two of them (numba's compiles are slow)
    jax, twins = _jax_twins()
    np.testing.assert_allclose(srcgrad.hessian(f, jit=jit)(X.copy()),
                               jax.hessian(twins[f])(X), rtol=1e-10, atol=1e-12)
