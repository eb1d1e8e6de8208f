"""lstm: ADBench's LSTM with diagonal weights, predicting each character of a text from
the previous one (GradBench `lstm`); the loss is the mean negative log-likelihood
with ADBench's log(sum(exp(y)) + 2) normalization.

main_params: 2 rows per layer (weights, biases), each 4*b long (forget, input,
output gates, change); extra_params: input weight, output weight, output bias
(b each); state: hidden and cell rows per layer; sequence: c characters of b
bits. ADBench generates the parameters with np.random.random; here they come
after np.random.seed(31337), and the text is made by `textgen` (b = 7 bits).
"""
from __future__ import annotations

import numpy as np

from ..common import fd_gradient, flat, njit_with, once
from . import Impl, textgen
from .peers import jax_sync, to_numpy

SIZES = {
    "quick": [{"l": 2, "c": 1024}],
    "full": [{"l": 2, "c": 1024}, {"l": 2, "c": 4096}, {"l": 4, "c": 1024}, {"l": 4, "c": 4096}],
}
XLABEL = "l * c (layers x characters)"


def label(size):
    return f"l={size['l']},c={size['c']}"


def x(size):
    return size["l"] * size["c"]


def generate(size):
    layers, chars = size["l"], size["c"]
    txt = textgen.text(chars)
    bits = textgen.char_bits(txt)
    np.random.seed(31337)
    state = np.random.random((2 * layers, bits))
    main_params = np.random.random((2 * layers, 4 * bits))
    extra_params = np.random.random((3, bits))
    return {"main_params": main_params, "extra_params": extra_params, "state": state,
            "sequence": textgen.to_matrix(txt, bits)}


ARGS = ("main_params", "extra_params", "state", "sequence")


# --- the natural loop form srcgrad differentiates --------------------------------------

def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def lstm_objective(main_params, extra_params, state, sequence):
    layers = main_params.shape[0] // 2
    c = sequence.shape[0]
    b = sequence.shape[1]
    hidden = np.zeros((layers, b))
    cell = np.zeros((layers, b))
    for layer in range(layers):
        hidden[layer] = state[2 * layer]
        cell[layer] = state[2 * layer + 1]
    total = 0.0
    for t in range(c - 1):
        inp = sequence[t] * extra_params[0]
        for layer in range(layers):
            w = main_params[2 * layer]
            bias = main_params[2 * layer + 1]
            h = hidden[layer]
            c_prev = cell[layer]  # (named once to work around a srcgrad bug, fixed since:
            #                       bench/README.md, "srcgrad issues")
            forget = sigmoid(inp * w[:b] + bias[:b])
            ingate = sigmoid(h * w[b:2 * b] + bias[b:2 * b])
            outgate = sigmoid(inp * w[2 * b:3 * b] + bias[2 * b:3 * b])
            change = np.tanh(h * w[3 * b:] + bias[3 * b:])
            new_cell = c_prev * forget + ingate * change
            cell[layer] = new_cell
            hidden[layer] = outgate * np.tanh(new_cell)
            inp = hidden[layer]
        ypred = inp * extra_params[1] + extra_params[2]
        lse = np.log(np.sum(np.exp(ypred)) + 2.0)
        total += np.sum(sequence[t + 1] * (ypred - lse))
    return -total / ((c - 1) * b)


def _args(data):
    return tuple(data[a] for a in ARGS)


def srcgrad_impl(data):
    import srcgrad
    args = _args(data)
    primal = njit_with(lstm_objective, sigmoid)

    def make_gradient():
        g = srcgrad.grad(lstm_objective, wrt=(0, 1))
        return lambda: g(*args)
    return Impl(lambda: primal(*args), make_gradient, lambda gs: flat(*gs))


# --- peers: vector operations per step, a loop (JAX: lax.scan) over the text -----------

def _cell(xp_tanh, sig, params, layers, b, hidden, cell, inp):
    """One step of every layer; returns the new hidden and cell lists and the output."""
    main, extra = params
    new_h, new_c = [], []
    for layer in range(layers):
        w, bias, h = main[2 * layer], main[2 * layer + 1], hidden[layer]
        forget = sig(inp * w[:b] + bias[:b])
        ingate = sig(h * w[b:2 * b] + bias[b:2 * b])
        outgate = sig(inp * w[2 * b:3 * b] + bias[2 * b:3 * b])
        change = xp_tanh(h * w[3 * b:] + bias[3 * b:])
        cl = cell[layer] * forget + ingate * change
        hl = outgate * xp_tanh(cl)
        new_h.append(hl)
        new_c.append(cl)
        inp = hl
    return new_h, new_c, inp * extra[1] + extra[2]


def jax_impl(data):
    from .peers import jax
    jx = jax()
    import jax.numpy as jnp
    main, extra = jnp.asarray(data["main_params"]), jnp.asarray(data["extra_params"])
    state, seq = jnp.asarray(data["state"]), jnp.asarray(data["sequence"])
    layers, (c, b) = data["main_params"].shape[0] // 2, data["sequence"].shape

    def f(main, extra):
        def step(carry, xs):
            hidden, cell = carry
            now, target = xs
            h2, c2, y = _cell(jnp.tanh, jx.nn.sigmoid, (main, extra), layers, b,
                              hidden, cell, now * extra[0])
            lse = jnp.log(jnp.sum(jnp.exp(y)) + 2.0)
            return (jnp.stack(h2), jnp.stack(c2)), jnp.sum(target * (y - lse))
        _, terms = jx.lax.scan(step, (state[0::2], state[1::2]), (seq[:-1], seq[1:]))
        return -jnp.sum(terms) / ((c - 1) * b)
    primal = jx.jit(f)

    def make_gradient():
        g = jx.jit(jx.grad(f, argnums=(0, 1)))
        return lambda: g(main, extra)
    return Impl(lambda: primal(main, extra), make_gradient,
                lambda gs: flat(*[to_numpy(v) for v in gs]), jax_sync)


def _loop(xp_tanh, sig, xsum, xlog, xexp, main, extra, state, seq, layers, c, b):
    hidden = [state[2 * i] for i in range(layers)]
    cell = [state[2 * i + 1] for i in range(layers)]
    total = 0.0
    for t in range(c - 1):
        hidden, cell, y = _cell(xp_tanh, sig, (main, extra), layers, b, hidden, cell,
                                seq[t] * extra[0])
        lse = xlog(xsum(xexp(y)) + 2.0)
        total = total + xsum(seq[t + 1] * (y - lse))
    return -total / ((c - 1) * b)


def torch_impl(data):
    from .peers import torch
    th = torch()
    main, extra = (th.from_numpy(data[a].copy()) for a in ("main_params", "extra_params"))
    state, seq = (th.from_numpy(data[a].copy()) for a in ("state", "sequence"))
    layers, (c, b) = data["main_params"].shape[0] // 2, data["sequence"].shape

    def f(main, extra):
        return _loop(th.tanh, th.sigmoid, th.sum, th.log, th.exp, main, extra, state, seq,
                     layers, c, b)

    def primal():
        with th.no_grad():
            return f(main, extra)

    def make_gradient():
        def g():
            leaves = [main.detach().requires_grad_(), extra.detach().requires_grad_()]
            return th.autograd.grad(f(*leaves), leaves)
        return g
    return Impl(primal, make_gradient, lambda gs: flat(*[to_numpy(v) for v in gs]))


def autograd_impl(data):
    import autograd
    import autograd.numpy as anp
    main, extra, state, seq = _args(data)
    layers, (c, b) = main.shape[0] // 2, seq.shape

    def sig(z):
        return 1.0 / (1.0 + anp.exp(-z))

    def f(main, extra):
        return _loop(anp.tanh, sig, anp.sum, anp.log, anp.exp, main, extra, state, seq,
                     layers, c, b)

    def make_gradient():
        g = autograd.grad(f, argnum=(0, 1))
        return lambda: g(main, extra)
    return Impl(lambda: f(main, extra), make_gradient, lambda gs: flat(*gs))


# --- reference: finite differences of the compiled primal -----------------------------

def reference(data):
    primal = once("lstm.fd_primal", lambda: njit_with(lstm_objective, sigmoid))
    vector = fd_gradient(primal, list(_args(data)), (0, 1))
    return vector, None, "central differences (4-point) of numba.njit(lstm_objective)"


# --- GradBench -----------------------------------------------------------------------------

def _parse(inp):
    return tuple(np.asarray(inp[a], dtype=np.float64) for a in ARGS)


def _gb_objective(inp):
    args = _parse(inp)
    f = once("lstm.primal", lambda: njit_with(lstm_objective, sigmoid))
    return (lambda: f(*args)), float


def _gb_jacobian(inp):
    import srcgrad
    args = _parse(inp)
    g = once("lstm.grad", lambda: srcgrad.grad(lstm_objective, wrt=(0, 1)))
    return (lambda: g(*args)), lambda gs: flat(*gs).tolist()


gradbench = {"objective": _gb_objective, "jacobian": _gb_jacobian}
_TINY = {"main_params": [[0.1] * 8, [0.2] * 8], "extra_params": [[0.3] * 2, [0.4] * 2, [0.5] * 2],
         "state": [[0.6] * 2, [0.7] * 2], "sequence": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]}
GRADBENCH_WARMUP = [("objective", _TINY), ("jacobian", _TINY)]
