"""Derivative objects pickle, and compute the same numbers in a fresh `python -c` process
that cannot see the file that defined the function (api/pickling.py).

A module written to a temporary folder defines the functions (a callee, a module data
global, a closure, a custom rule on a numba function); this process builds every kind
of derivative object, checks a few against central differences, pickles them with the
inputs and results to a file, and deletes the module. One fresh process unpickles and
calls them all: a gradient with numba on (it is not transformed again: its generated
module travels, and numba compiles it once), the rest with numba off.
"""
import importlib
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import srcgrad
from gradcheck import numerical_grad

MODEL = '''
from dataclasses import dataclass

import numba
import numpy as np
import srcgrad

CENTRE = np.array([0.5, -0.25, 1.0])


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def loss(w, X, y):
    p = sigmoid(X @ (w - CENTRE))
    return np.sum((p - y) ** 2)


def scaled(k):
    def energy(w):
        s = 0.0
        for i in range(w.shape[0]):
            s = s + k * w[i] ** 3
        return s
    return energy


def vector(w):
    return np.sin(w) * CENTRE


def scalar(x, a):
    return np.sin(a * x) * x


@numba.njit
def soft_clip(x):
    return np.tanh(x)


@srcgrad.defvjp(soft_clip)
def soft_clip_vjp(g, ans, x):
    return g * (1.0 - ans * ans)


@srcgrad.defjvp(soft_clip)
def soft_clip_jvp(t_x, ans, x):
    return t_x * (1.0 - ans * ans)


def clipped(w):
    return np.sum(soft_clip(w * 2.0))


def clipped_each(w):
    return soft_clip(w * 2.0)


@dataclass
class Linear:
    w: np.ndarray
    b: float

    def predict(self, X):
        return X @ self.w + self.b

    def loss(self, X, y):
        return np.mean((self.predict(X) - y) ** 2)


def mlp(params, x):
    h = np.tanh(params["W1"] @ x + params["b1"])
    return np.sum(params["W2"] @ h)
'''

CHILD = r'''
import json, pickle, sys
import numpy as np
import srcgrad
assert "dask" not in sys.modules, "import srcgrad imported dask"
from srcgrad import pipeline


def flat(v):
    parts = v.values() if isinstance(v, dict) else v if isinstance(v, tuple) else (v,)
    return np.concatenate([np.ravel(np.asarray(x, dtype=float)) for x in parts])


with open(sys.argv[2], "rb") as handle:
    first = pickle.load(handle)  # the value_and_grad, alone
report = {"transforms": pipeline.STATS["transforms"]}
with open(sys.argv[1], "rb") as handle:
    blob = handle.read()
cases, non_scalar = pickle.loads(blob)
report["model_importable"] = "model" in sys.modules
for name, (obj, args, expected) in cases.items():
    report[name] = float(np.max(np.abs(flat(obj(*args)) - flat(expected))))
report["backend"] = cases["value_and_grad"][0].backend
report["same_object"] = pickle.loads(blob)[0]["value_and_grad"][0] is cases["value_and_grad"][0]
report["same_as_first"] = first is cases["value_and_grad"][0]
try:
    non_scalar(np.ones(3))
except srcgrad.NonScalarOutputError as exc:
    report["error"] = str(exc)
print(json.dumps(report))
'''


@pytest.fixture
def model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("defining")
    (folder / "model.py").write_text(MODEL)
    sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module("model")
    finally:
        sys.path.remove(str(folder))
    yield module, folder / "model.py"
    sys.modules.pop("model", None)


def _cases(model):
    rng = np.random.default_rng(19)
    w = rng.normal(size=3)
    X, y = rng.normal(size=(6, 3)), (rng.random(6) < 0.5).astype(float)
    energy = model.scaled(1.5)
    _, vjp_fn = srcgrad.vjp(model.vector, w, jit=False)
    cosine = srcgrad.grad(lambda x: np.sum(np.cos(x) * model.CENTRE), jit=False)
    params = {"W1": rng.normal(size=(2, 3)), "b1": np.zeros(2), "W2": rng.normal(size=(1, 2))}
    objects = {
        "value_and_grad": (srcgrad.value_and_grad(model.loss), (w, X, y)),
        "grad_closure": (srcgrad.grad(energy, jit=False), (w,)),
        "grad_two": (srcgrad.grad(model.scalar, wrt=(0, 1), jit=False), (0.7, 1.3)),
        "custom_rule": (srcgrad.grad(model.clipped, jit=False), (w,)),
        "custom_forward": (srcgrad.jacfwd(model.clipped_each, jit=False), (w,)),
        "lambda": (cosine, (w,)),
        "bound_method": (srcgrad.grad(model.Linear(w, 0.3).loss, jit=False), (X, y)),
        "dict_params": (srcgrad.grad(model.mlp, jit=False), (params, w)),
        "vjp_fn": (vjp_fn, (np.ones(3),)),
        "jacfwd": (srcgrad.jacfwd(model.vector, jit=False), (w,)),
        "jacrev": (srcgrad.jacrev(model.vector, jit=False), (w,)),
        "hessian": (srcgrad.hessian(energy, jit=False), (w,)),
        "hvp": (srcgrad.hvp(model.loss, jit=False), (w, X, y, np.ones(3))),
        "grad_grad": (srcgrad.grad(srcgrad.grad(model.scalar, jit=False), jit=False), (0.7, 1.3)),
        "jacfwd_grad": (srcgrad.jacfwd(srcgrad.grad(model.loss, jit=False), jit=False), (w, X, y)),
    }
    cases = {name: (obj, args, obj(*args)) for name, (obj, args) in objects.items()}
    return cases, (w, X, y)


def test_every_derivative_object_works_in_a_fresh_process(model, tmp_path):
    module, path = model
    cases, (w, X, y) = _cases(module)
    value, grad = cases["value_and_grad"][2]
    assert value == module.loss(w, X, y)
    np.testing.assert_allclose(grad, numerical_grad(module.loss, (w, X, y), 0), rtol=1e-6)
    np.testing.assert_allclose(cases["grad_closure"][2], 4.5 * w ** 2, rtol=1e-12)
    np.testing.assert_allclose(cases["custom_rule"][2], 2.0 / np.cosh(2.0 * w) ** 2, rtol=1e-12)
    np.testing.assert_allclose(cases["custom_forward"][2], np.diag(2.0 / np.cosh(2.0 * w) ** 2),
                               rtol=1e-12)
    size = len(pickle.dumps(cases["value_and_grad"][0]))
    assert size < 100_000, f"a pickled gradient takes {size} bytes"
    blob, first = tmp_path / "objects.pkl", tmp_path / "first.pkl"
    blob.write_bytes(pickle.dumps((cases, srcgrad.grad(module.vector, jit=False))))
    first.write_bytes(pickle.dumps(cases["value_and_grad"][0]))
    os.unlink(path)  # the child could not read it even if it looked
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "fresh-cache")}
    out = subprocess.run([sys.executable, "-c", CHILD, str(blob), str(first)], env=env,
                         cwd=str(tmp_path), capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert not report["model_importable"]
    for name in cases:
        assert report[name] < 1e-12, (name, report[name])
    assert report["backend"] == "numba"
    assert report["transforms"] == 0  # the gradient's generated module was carried
    assert report["same_object"] and report["same_as_first"]
    assert "model.py:" in report["error"] and "vector" in report["error"]


def test_a_round_trip_in_this_process_gives_the_same_numbers(model):
    module, _ = model
    g = srcgrad.grad(module.scaled(2.0), jit=False)
    w = np.array([0.5, -1.0, 2.0])
    blob = pickle.dumps(g)
    copy = pickle.loads(blob)
    assert copy is not g and pickle.loads(blob) is copy
    np.testing.assert_array_equal(copy(w), g(w))
    assert repr(copy) == repr(g)
