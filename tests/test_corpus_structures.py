"""Issue 15: realistic programs with structured parameters (dicts, lists and tuples of
arrays, namedtuples, dataclasses), objects and methods, float32 and softmax-style
reductions, as scientists write them.

Each gradient is checked against central differences over every float leaf and,
where a JAX twin is written, against `jax.grad` (64-bit), with numba on and off; with
numba on, `backend == "numba"` asserts that the compiled code really ran. Gradients
must come back in their argument's structure (JAX's convention).
"""
from __future__ import annotations

import copy
import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import srcgrad

try:
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
except ImportError:  # pragma: no cover - jax is in the test extra
    jax = None

RNG = np.random.default_rng(15)


def _normal(*shape):
    return RNG.normal(size=shape)


# ---- a pytree walker for the oracle (independent of srcgrad's) ---------------------------

def _paths(tree, path=()):
    """(path, leaf) for every float leaf, in order."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _paths(v, path + (("item", k),))
    elif dataclasses.is_dataclass(tree):
        for f in dataclasses.fields(tree):
            yield from _paths(getattr(tree, f.name), path + (("attr", f.name),))
    elif isinstance(tree, tuple) and hasattr(tree, "_fields"):
        for name in tree._fields:
            yield from _paths(getattr(tree, name), path + (("attr", name),))
    elif isinstance(tree, (list, tuple)):
        for k, v in enumerate(tree):
            yield from _paths(v, path + (("item", k),))
    elif isinstance(tree, (float, np.floating)) or (
            isinstance(tree, np.ndarray) and tree.dtype.kind == "f"):
        yield path, tree


def _get(tree, path):
    for how, key in path:
        tree = getattr(tree, key) if how == "attr" else tree[key]
    return tree


def _set(tree, path, value):
    """A copy of `tree` with the leaf at `path` replaced."""
    if not path:
        return value
    (how, key), rest = path[0], path[1:]
    inner = _set(_get(tree, [(how, key)]), rest, value)
    if how == "attr":
        if isinstance(tree, tuple):
            return tree._replace(**{key: inner})
        return dataclasses.replace(tree, **{key: inner})
    if isinstance(tree, dict):
        return {**tree, key: inner}
    items = list(tree)
    items[key] = inner
    return type(tree)(items)


def _numerical(f, args, k, eps=1e-6):
    """Central differences of f with respect to every float leaf of args[k]: {path: grad}."""
    out = {}
    for path, leaf in _paths(args[k]):
        x = np.asarray(leaf, dtype=np.float64)
        g = np.zeros(x.shape)
        for i in np.ndindex(*x.shape):
            e = np.zeros(x.shape)
            e[i] = eps
            plus, minus = list(args), list(args)
            as_leaf = (lambda v: float(v)) if np.ndim(leaf) == 0 else (lambda v: v)
            plus[k] = _set(args[k], path, as_leaf(x + e))
            minus[k] = _set(args[k], path, as_leaf(x - e))
            g[i] = (f(*plus) - f(*minus)) / (2 * eps)
        out[path] = g
    return out


def _close(got, want, rtol=1e-6):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * (1 + np.max(np.abs(want))))


def _same_structure(got, like):
    assert type(got) is type(like), f"{type(got).__name__} for a {type(like).__name__}"
    if isinstance(like, dict):
        assert list(got) == list(like)


# ---- the programs ---------------------------------------------------------------------------

def mlp(params, x):
    h = np.tanh(params["W1"] @ x + params["b1"])
    return params["W2"] @ h + params["b2"]


def mlp_loss(params, x, y):
    return np.sum((mlp(params, x) - y) ** 2)


def jax_mlp_loss(params, x, y):
    h = jnp.tanh(params["W1"] @ x + params["b1"])
    return jnp.sum((params["W2"] @ h + params["b2"] - y) ** 2)


def deep_loss(layers, x):
    h = x
    for W, b in layers:
        h = np.tanh(W @ h + b)
    return np.sum(h ** 2)


def jax_deep_loss(layers, x):
    h = x
    for W, b in layers:
        h = jnp.tanh(W @ h + b)
    return jnp.sum(h ** 2)


def indexed_loss(layers, x):
    h = x
    for i in range(len(layers)):
        h = np.tanh(layers[i]["W"] @ h + layers[i]["b"])
    return np.sum(h)


def jax_indexed_loss(layers, x):
    h = x
    for layer in layers:
        h = jnp.tanh(layer["W"] @ h + layer["b"])
    return jnp.sum(h)


Linear = namedtuple("Linear", "w b")


def linreg_loss(p, X, y):
    r = X @ p.w + p.b - y
    return 0.5 * np.mean(r ** 2)


def jax_linreg_loss(p, X, y):
    return 0.5 * jnp.mean((X @ p.w + p.b - y) ** 2)


def encdec_loss(params, x):
    z = np.tanh(params["enc"]["W"] @ x + params["enc"]["b"])
    return np.sum((decode(params["dec"], z) - x) ** 2) + l2(params)


def decode(p, z):
    return p["W"] @ z + p["b"]


def l2(params):
    total = 0.0
    for name, block in params.items():
        total += 1e-2 * sum(np.sum(v ** 2) for v in block.values())
    return total


def jax_encdec_loss(params, x):
    z = jnp.tanh(params["enc"]["W"] @ x + params["enc"]["b"])
    out = params["dec"]["W"] @ z + params["dec"]["b"]
    reg = sum(1e-2 * jnp.sum(v ** 2) for block in params.values() for v in block.values())
    return jnp.sum((out - x) ** 2) + reg


def ridge_loss(theta, X, y, lam):
    w, b = theta
    return np.sum((X @ w + b - y) ** 2) + lam * np.sum(w ** 2)


def jax_ridge_loss(theta, X, y, lam):
    w, b = theta
    return jnp.sum((X @ w + b - y) ** 2) + lam * jnp.sum(w ** 2)


Oscillator = namedtuple("Oscillator", "k c")


def oscillator_energy(p, x0, steps, h):
    x, v = x0, 0.0
    for _ in range(steps):
        a = -p.k * x - p.c * v
        x, v = x + h * v, v + h * a
    return 0.5 * p.k * x ** 2 + 0.5 * v ** 2


@dataclasses.dataclass
class Model:
    W: np.ndarray
    b: np.ndarray
    activation: str = "tanh"

    def forward(self, X):
        z = X @ self.W + self.b
        if self.activation == "tanh":
            return np.tanh(z)
        return z

    @property
    def penalty(self):
        return 0.5 * np.sum(self.W ** 2)

    def loss(self, X, y):
        return np.mean((self.forward(X) - y) ** 2) + 1e-2 * self.penalty


class Config:  # a plain object: its attributes are constants
    def __init__(self, lam, steps):
        self.lam, self.steps = lam, steps


def smoothed(x, cfg):
    u = x.copy()
    for _ in range(cfg.steps):
        u[1:-1] = u[1:-1] + cfg.lam * (u[2:] - 2 * u[1:-1] + u[:-2])
    return np.sum(u ** 3)


class Settings:
    scale = 0.5


SETTINGS = Settings()


def scaled_norm(x):
    return SETTINGS.scale * np.sum(x ** 2)


def softmax_xent(z, y):
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    p = e / e.sum(axis=1, keepdims=True)
    return -np.mean(np.sum(y * np.log(p), axis=1))


def jax_softmax_xent(z, y):
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(z, axis=1), axis=1))


def logreg_loop(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    s = 0.0
    for i in range(y.shape[0]):
        s = s - y[i] * np.log(p[i]) - (1 - y[i]) * np.log(1 - p[i])
    return s / y.shape[0]


def jax_logreg_loop(w, X, y):
    p = 1.0 / (1.0 + jnp.exp(-(X @ w)))
    return jnp.mean(-y * jnp.log(p) - (1 - y) * jnp.log(1 - p))


def _mlp_params(dtype=np.float64):
    p = {"W1": _normal(4, 3), "b1": _normal(4), "W2": _normal(2, 4), "b2": _normal(2)}
    return {k: v.astype(dtype) for k, v in p.items()}


X5, Y5 = _normal(6, 3), _normal(6)
CASES = {
    "mlp_dict": (mlp_loss, lambda: (_mlp_params(), _normal(3), _normal(2)), 0, jax_mlp_loss),
    "layers_list_of_tuples": (deep_loss, lambda: (
        [(_normal(4, 3), _normal(4)), (_normal(2, 4), _normal(2))], _normal(3)), 0,
        jax_deep_loss),
    "layers_by_index": (indexed_loss, lambda: (
        [{"W": _normal(3, 3), "b": _normal(3)} for _ in range(3)], _normal(3)), 0,
        jax_indexed_loss),
    "namedtuple_linreg": (linreg_loss, lambda: (Linear(_normal(3), 0.3), X5, Y5), 0,
                          jax_linreg_loss),
    "nested_dict_helpers": (encdec_loss, lambda: (
        {"enc": {"W": _normal(2, 4), "b": _normal(2)},
         "dec": {"W": _normal(4, 2), "b": _normal(4)}}, _normal(4)), 0, jax_encdec_loss),
    "tuple_unpacked_wrt_two": (ridge_loss, lambda: ((_normal(3), 0.1), X5, Y5, 0.5),
                               (0, "lam"), jax_ridge_loss),
    "namedtuple_of_scalars_ode": (oscillator_energy, lambda: (Oscillator(2.0, 0.3), 1.0, 40,
                                                              0.05), 0, None),
    "dataclass_method_model": (Model.loss, lambda: (Model(_normal(3, 2), _normal(2)), X5,
                                                    _normal(6, 2)), 0, None),
    "object_constants": (smoothed, lambda: (_normal(6), Config(0.2, 3)), 0, None),
    "global_object_attribute": (scaled_norm, lambda: (_normal(4),), 0, None),
    "softmax_keepdims": (softmax_xent, lambda: (_normal(5, 3), np.eye(3)[[0, 1, 2, 1, 0]]),
                         0, jax_softmax_xent),
}


def _check(name, jit):
    func, make, wrt, twin = CASES[name]
    args = make()
    d = srcgrad.grad(func, wrt=wrt, jit=jit)
    got = d(*args)
    if jit:
        assert d.backend == "numba", d.fallback_reason
    params = list(__import__("inspect").signature(func).parameters)
    many = isinstance(wrt, tuple)
    for k, g in zip([params.index(w) if isinstance(w, str) else w for w in
                     (wrt if many else (wrt,))], got if many else (got,)):
        _same_structure(g, args[k])
        for path, want in _numerical(func, args, k).items():
            _close(_get(g, path), want)
        if twin is not None and jax is not None:
            ref = jax.grad(twin, argnums=k)(*args)
            for path, _ in _paths(args[k]):
                _close(_get(g, path), _get(ref, path), rtol=1e-9)


@pytest.mark.parametrize("jit", [True, False], ids=["jit", "nojit"])
@pytest.mark.parametrize("name", list(CASES))
def test_corpus(name, jit):
    _check(name, jit)


def test_bound_method_and_structure_of_the_gradient():
    model = Model(_normal(3, 2), _normal(2))
    X, y = _normal(6, 3), _normal(6, 2)
    g = srcgrad.grad(model.loss)(X, y)  # wrt X; the model is a constant
    _close(g, _numerical(lambda X: model.loss(X, y), [X], 0)[()])
    grads = srcgrad.grad(Model.loss)(model, X, y)
    assert isinstance(grads, Model) and grads.activation == "tanh"  # non-float fields kept


def test_global_attribute_is_read_at_each_call():
    d = srcgrad.grad(scaled_norm)
    x = np.ones(3)
    before = d(x)
    SETTINGS.scale = 2.0
    try:
        _close(d(x), 4 * before)
    finally:
        SETTINGS.scale = 0.5


def test_float32_training_step_stays_float32():
    params, x, y = _mlp_params(np.float32), _normal(3).astype(np.float32), _normal(2)
    step = srcgrad.value_and_grad(mlp_loss)
    value, grads = step(params, x, y.astype(np.float32))
    assert step.backend == "numba"
    assert type(value) is np.float32 and all(g.dtype == np.float32 for g in grads.values())
    wide = srcgrad.grad(mlp_loss)({k: v.astype(np.float64) for k, v in params.items()},
                                  x.astype(np.float64), y.astype(np.float32).astype(np.float64))
    for k in grads:
        _close(grads[k], wide[k], rtol=1e-5)


def test_mixed_precision_follows_numpy():
    w = _normal(3)
    X32, y32 = X5.astype(np.float32), (Y5 > 0).astype(np.float32)
    step = srcgrad.value_and_grad(logreg_loop)
    value, g = step(w, X32, y32)  # float64 weights, float32 data: float64, as NumPy
    assert step.backend == "numba" and type(value) is float and g.dtype == np.float64
    value32, g32 = step(w.astype(np.float32), X32, y32)
    assert type(value32) is np.float32 and g32.dtype == np.float32
    if jax is not None:
        _close(g, jax.grad(jax_logreg_loop)(w, X32.astype(np.float64), y32.astype(np.float64)))


def test_forward_and_vjp_and_jacobians_with_a_dict():
    params, x = _mlp_params(), _normal(3)
    tangent = {k: np.ones_like(v) for k, v in params.items()}
    _, t = srcgrad.jvp(mlp_loss, (params, x, np.zeros(2)), (tangent, np.zeros(3), np.zeros(2)))
    g = srcgrad.grad(mlp_loss)(params, x, np.zeros(2))
    _close(t, sum(np.sum(g[k]) for k in g))
    _, vjp_fn = srcgrad.vjp(mlp_loss, params, x, np.zeros(2))
    ct = vjp_fn(1.0)[0]
    for k in g:
        _close(ct[k], g[k])
    fwd, rev = srcgrad.jacfwd(mlp), srcgrad.jacrev(mlp)
    jf, jr = fwd(params, x), rev(params, x)
    assert fwd.backend == "numba" and "def " in fwd.source and rev.backend == "numba"
    if jax is not None:
        ref = jax.jacfwd(lambda p: p["W2"] @ jnp.tanh(p["W1"] @ x + p["b1"]) + p["b2"])(params)
        for k in params:
            _close(jf[k], ref[k], rtol=1e-9)
            _close(jr[k], ref[k], rtol=1e-9)


def test_hessian_has_source_and_backend():
    h = srcgrad.hessian(lambda x: np.sum(x ** 3))
    _close(h(np.ones(2)), 6 * np.eye(2))
    assert h.backend == "numba" and "def " in h.source


# ---- what is refused, with the user's line ------------------------------------------------

def writes_into(params, x):
    params["W"] = params["W"] * 2.0
    return np.sum(params["W"] @ x)


def dict_as_value(params, x):
    return np.sum(np.asarray(params) * x)


def runtime_index(layers, x, k):
    return np.sum(layers[k] * x)


def ambiguous(params, x, c):
    if c > 0:
        block = params["a"]
    else:
        block = params["b"]
    return np.sum(block["W"] * x)


@pytest.mark.parametrize("func, args, words", [
    (writes_into, ({"W": np.ones(2)}, np.ones(2)), "writing into params"),
    (dict_as_value, ({"W": np.ones(2)}, np.ones(2)), "is a dict used as a value"),
    (runtime_index, ([np.ones(2), np.ones(2)], np.ones(2), 1), "known only when the code runs"),
    (ambiguous, ({"a": {"W": np.ones(2)}, "b": {"W": np.ones(2)}}, np.ones(2), 1.0),
     "in a branch or loop"),
])
def test_refused_with_the_line(func, args, words):
    with pytest.raises(srcgrad.SrcgradSyntaxError, match=words) as info:
        srcgrad.grad(func, jit=False)(*args)
    assert "test_corpus_structures.py" in str(info.value)


def test_a_plain_object_is_not_differentiated():
    with pytest.raises(TypeError, match="a Config object"):
        srcgrad.grad(smoothed, wrt=1, jit=False)(np.ones(4), Config(0.1, 1))


def with_roots(x):
    c = np.roots(np.array([1.0, 0.0, 1.0]))  # complex
    return np.sum(np.abs(x * c[0]) ** 2)


def fractional_power(x):
    return abs(x ** 0.5) ** 2


def complex_dtype(x):
    y = np.zeros(2, dtype=complex)
    y[0] = x
    return np.sum(np.abs(y) ** 2)


def test_complex_values_are_refused_never_differentiated():
    with pytest.raises(srcgrad.SrcgradError, match="complex value") as info:
        srcgrad.grad(with_roots, jit=False)(0.7)
    assert "np.roots" in str(info.value)  # the user's line
    with pytest.raises(srcgrad.SrcgradError, match="complex value"):
        srcgrad.grad(fractional_power, jit=False)(-2.0)
    with pytest.raises(srcgrad.SrcgradSyntaxError, match="complex dtype"):
        srcgrad.grad(complex_dtype)
    with pytest.raises(srcgrad.SrcgradSyntaxError, match="complex number"):
        srcgrad.grad(lambda x: np.abs(x * (1 + 2j)) ** 2)


def test_a_wrong_call_names_the_gradient_and_function():
    with pytest.raises(TypeError, match="gradient of ridge_loss with respect to theta: "
                                        "missing a required argument: 'lam'"):
        srcgrad.grad(ridge_loss, jit=False)((np.ones(3), 0.0), X5, Y5)


def einsum_trace(x):
    return np.einsum("i,i->", x, x)


def test_fallback_warning_names_the_construct_and_line():
    with pytest.warns(srcgrad.SrcgradWarning, match=r"np\.einsum.*test_corpus_structures\.py"):
        srcgrad.grad(einsum_trace)(np.ones(3))
