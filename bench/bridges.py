"""srcgrad called from JAX and PyTorch (issue 18): the suite's `ode` model (bench/problems/ode.py,
RK4 over an element loop) through srcgrad.to_jax inside a jitted training step, against JAX's
own lax.scan version in the same step; and through srcgrad.to_torch, against PyTorch eager.

    python bench/bridges.py [--budget 3] [--out bench/results/bridges.md]

Each pair is timed in this process, alternately (bench/measure.interleaved), after warm-up
calls that compile; medians. srcgrad.grad called directly is timed beside the JAX pair, so
the bridge's own cost shows. Not part of the test run.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

import numpy as np  # noqa: E402

import srcgrad  # noqa: E402
from bench.measure import interleaved, steady_allocator  # noqa: E402
from bench.problems import ode  # noqa: E402
from bench.problems.peers import jax as setup_jax, torch as setup_torch  # noqa: E402
from bench.report import fmt_time  # noqa: E402

SIZES = [(1000, 10), (10000, 10), (1000, 100)]
LR = 1e-3


def jax_steps(x0, s):
    """(srcgrad through to_jax, JAX's lax.scan version): jitted x -> x - lr * grad."""
    jax = setup_jax()
    jnp = jax.numpy
    bridged = srcgrad.to_jax(ode.ode_last, x0, s)

    def own(v):
        step = ode._rk4(jnp.concatenate, v, s)
        y, _ = jax.lax.scan(lambda y, _: (step(y), None), jnp.zeros_like(v), None, length=s)
        return y[-1]

    def train(loss):
        return jax.jit(lambda v: v - LR * jax.grad(loss)(v))
    x = jnp.asarray(x0)
    ours, theirs = train(lambda v: bridged(v, s)), train(own)
    check = np.asarray(ours(x)) - np.asarray(theirs(x))
    assert np.max(np.abs(check)) < 1e-9, "the two training steps disagree"
    return (lambda: ours(x).block_until_ready()), (lambda: theirs(x).block_until_ready())


def torch_grads(x0, s):
    """(srcgrad through to_torch, PyTorch eager): the gradient by torch.autograd.grad."""
    torch = setup_torch()
    bridged = srcgrad.to_torch(ode.ode_last)

    def own(v):
        step = ode._rk4(torch.cat, v, s)
        y = torch.zeros_like(v)
        for _ in range(s):
            y = step(y)
        return y[-1]

    def gradient(loss):
        def run():
            v = torch.from_numpy(x0.copy()).requires_grad_()
            return torch.autograd.grad(loss(v), [v])[0]
        return run
    ours, theirs = gradient(lambda v: bridged(v, s)), gradient(own)
    assert torch.allclose(ours(), theirs(), rtol=1e-9, atol=1e-12), "the gradients disagree"
    return ours, theirs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per pair")
    parser.add_argument("--out", default=None, help="also write the table to this file")
    args = parser.parse_args(argv)
    steady_allocator()
    rows = ["| ode size | to_jax step | JAX lax.scan step | ratio | srcgrad.grad | "
            "to_torch grad | PyTorch eager grad | ratio |", "|---" * 8 + "|"]
    for n, s in SIZES:
        x0 = ode.generate({"n": n, "s": s})["x"]
        direct = srcgrad.grad(ode.ode_last)
        direct(x0, s)
        ours, theirs = jax_steps(x0, s)
        t_ours, t_theirs, _ = interleaved(ours, theirs, min_runs=5, max_runs=200,
                                          budget=args.budget)
        t_direct = interleaved(None, lambda: direct(x0, s), min_runs=5, max_runs=200,
                               budget=args.budget / 2)[1]
        tours, ttheirs = torch_grads(x0, s)
        p_ours, p_theirs, _ = interleaved(tours, ttheirs, min_runs=5, max_runs=200,
                                          budget=args.budget)
        rows.append(f"| n={n},s={s} | {fmt_time(t_ours)} | {fmt_time(t_theirs)} | "
                    f"{t_ours / t_theirs:.2g}x | {fmt_time(t_direct)} | {fmt_time(p_ours)} | "
                    f"{fmt_time(p_theirs)} | {p_ours / p_theirs:.2g}x |")
        print(rows[-1], flush=True)
    table = "\n".join(rows)
    print("\n" + table)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write("Gradient time through the bridges, medians (python bench/bridges.py):"
                         " ratio = srcgrad through the bridge / the framework's own.\n\n"
                         + table + "\n")


if __name__ == "__main__":
    main()
