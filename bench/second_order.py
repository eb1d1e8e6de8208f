"""Second-order benchmark (issue 17): HVP / gradient, Hessians against JAX, sparse
Jacobians, and the nested-derivative problems, written to bench/results/second_order.md.

    python -m bench.second_order

Times are medians of interleaved runs in this process (the first call, which
transforms and compiles, is not counted). The HVP / gradient tables time srcgrad's
single-threaded compiled code by the thread's CPU time (time.thread_time): on a shared
machine wall time adds whole scheduler slices (4 ms) to some runs and not others, which
made kmeans's ratio read 10x in one session and 1.9x in the next.

PyTorch (optional: its columns say "not installed" without it) runs single-threaded
(bench.problems.peers.torch) and eagerly: HVPs are torch.func.jvp over torch.func.grad,
Hessians torch.func.hessian (jacfwd over jacrev), nested derivatives eager loops.
"""
from __future__ import annotations

import statistics
import time
import warnings

import numpy as np

import srcgrad

from .problems import kmeans, lse, particle, saddle
from .report import fmt_time


def _median(calls: dict, runs: int = 7, clock=time.perf_counter) -> dict:
    for call in calls.values():
        call()  # transform and compile
    times = {name: [] for name in calls}
    for _ in range(runs):
        for name, call in calls.items():
            start = clock()
            call()
            times[name].append(clock() - start)
    return {name: statistics.median(t) for name, t in times.items()}


NOT_INSTALLED = "not installed"


def _torch():
    """Single-threaded torch, or None when it is not importable."""
    try:
        from .problems.peers import torch
        return torch()
    except ImportError:
        return None


def _max_rel(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def _torch_hvp_cases(th):
    """Torch forms of kmeans's cost and lse, vectorised (bench/problems' own forms)."""
    def kmeans_cost(c, p):
        d = th.sum((p[:, None, :] - c[None, :, :]) ** 2, dim=2)
        return th.sum(th.min(d, dim=1).values)

    def lse_value(v):
        a = th.max(v).detach()
        return a + th.log(th.sum(th.exp(v - a)))
    return [kmeans_cost, lse_value]


def _torch_hvp_calls(th, func, args, v):
    from torch.func import grad, jvp
    targs = [th.from_numpy(np.ascontiguousarray(a)) for a in args]
    tv = th.from_numpy(np.ascontiguousarray(v))
    g = grad(func)

    def hvp():
        return jvp(lambda x_: g(x_, *targs[1:]), (targs[0],), (tv,))[1]
    return (lambda: g(*targs)), hvp


def energy(x, W):
    return np.sum(np.tanh(W @ x) ** 2) + np.sum(x ** 3) * 0.5


def stencil(u, h):
    n = u.shape[0]
    r = np.zeros(n)
    r[0] = u[0]
    r[n - 1] = u[n - 1]
    for i in range(1, n - 1):
        r[i] = (u[i - 1] - 2.0 * u[i] + u[i + 1]) / (h * h) + np.exp(u[i])
    return r


def hvp_rows() -> list[str]:
    rows = []
    th = _torch()
    data = kmeans.generate({"k": 10, "n": 1000, "d": 8})
    c, p = data["centroids"], data["points"]
    x = lse.generate({"n": 160000})["x"]
    cases = [("kmeans k=10 n=1000 d=8", kmeans.cost, (c, p), np.ones_like(c)),
             ("lse n=160000", lse.lse, (x,), np.ones_like(x))]
    torch_funcs = _torch_hvp_cases(th) if th is not None else [None] * len(cases)
    for (label, func, args, v), tfunc in zip(cases, torch_funcs):
        g, h = srcgrad.grad(func), srcgrad.hvp(func)
        calls = {"grad": lambda: g(*args), "hvp": lambda: h(*args, v)}
        if tfunc is not None:
            calls["torch grad"], calls["torch hvp"] = _torch_hvp_calls(th, tfunc, args, v)
        t = _median(calls, 15, time.thread_time)
        row = (f"| {label} | {fmt_time(t['grad'])} | {fmt_time(t['hvp'])} | "
               f"{t['hvp'] / t['grad']:.2f} |")
        if tfunc is None:
            row += f" {NOT_INSTALLED} |" * 4
        else:
            # lse's H v along ones is 0 (shift invariance): compare against the gradient's scale
            ours, theirs = h(*args, v), calls["torch hvp"]().numpy()
            scale = max(float(np.max(np.abs(ours))), float(np.max(np.abs(g(*args)))))
            diff = float(np.max(np.abs(ours - theirs))) / scale
            row += (f" {fmt_time(t['torch grad'])} | {fmt_time(t['torch hvp'])} | "
                    f"{t['torch hvp'] / t['torch grad']:.2f} | {diff:.1e} |")
        rows.append(row)
    return rows


def chain(x, n):
    """A recursive function: one call per level, its argument changed on the way down."""
    if n == 0:
        return np.sum(np.sin(x) * x)
    return np.cos(chain(x * 0.9, n - 1)) + np.sum(x ** 3) * 0.1


def recursive_rows() -> list[str]:
    """HVP / gradient of a recursive function (depth 20), against the n second-order JVPs
    its HVP took before reverse mode went through the forward code's recursion."""
    from srcgrad.api.second_order import _hvp_by_second_order
    rows = []
    for n in (10, 100, 1000):
        x, v = np.random.default_rng(0).normal(size=n) * 0.1, np.ones(n)
        g, h = srcgrad.grad(chain), srcgrad.hvp(chain)
        t = _median({"grad": lambda: g(x, 20), "hvp": lambda: h(x, 20, v),
                     "jvps": lambda: _hvp_by_second_order(h, (x, 20), v, x.shape)},
                    5, time.thread_time)
        rows.append(f"| n={n} | {fmt_time(t['grad'])} | {fmt_time(t['hvp'])} | "
                    f"{t['hvp'] / t['grad']:.2f} | {fmt_time(t['jvps'])} | "
                    f"{t['jvps'] / t['grad']:.1f} |")
    return rows


def hessian_rows() -> list[str]:
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    th = _torch()
    rows = []
    for n in (10, 50, 200):
        rng = np.random.default_rng(0)
        x, W = rng.normal(size=n), rng.normal(size=(n, n)) / n

        def f(x_, W_):
            return jnp.sum(jnp.tanh(W_ @ x_) ** 2) + jnp.sum(x_ ** 3) * 0.5
        jh, jfr = jax.jit(jax.hessian(f)), jax.jit(jax.jacfwd(jax.jacrev(f)))
        sh, product = srcgrad.hessian(energy), srcgrad.hvp(energy)
        xj, Wj = jnp.asarray(x), jnp.asarray(W)
        eye = np.eye(n)
        calls = {"srcgrad": lambda: sh(x, W),
                 "columns": lambda: np.stack([product(x, W, e) for e in eye], axis=-1),
                 "jax.hessian": lambda: jh(xj, Wj).block_until_ready(),
                 "jax.jacfwd(jacrev)": lambda: jfr(xj, Wj).block_until_ready()}
        if th is not None:
            def ft(x_, W_):
                return th.sum(th.tanh(W_ @ x_) ** 2) + th.sum(x_ ** 3) * 0.5
            th_hessian, xt, Wt = th.func.hessian(ft), th.from_numpy(x), th.from_numpy(W)
            calls["torch"] = lambda: th_hessian(xt, Wt)
        t = _median(calls)
        H = sh(x, W)
        assert np.allclose(H, np.asarray(jh(xj, Wj)), rtol=1e-9, atol=1e-12)
        if th is None:
            torch_cells = f"{NOT_INSTALLED} | {NOT_INSTALLED} | {NOT_INSTALLED}"
        else:
            torch_cells = (f"{fmt_time(t['torch'])} | {t['srcgrad'] / t['torch']:.2f} | "
                           f"{_max_rel(calls['torch']().numpy(), H):.1e}")
        rows.append(f"| n={n} | {fmt_time(t['srcgrad'])} | {fmt_time(t['columns'])} | "
                    f"{fmt_time(t['jax.hessian'])} | {fmt_time(t['jax.jacfwd(jacrev)'])} | "
                    f"{t['srcgrad'] / t['jax.hessian']:.2f} | "
                    f"{t['columns'] / t['jax.hessian']:.2f} | {torch_cells} |")
    return rows


def sparse_rows() -> list[str]:
    rows = []
    for n in (1000, 10000):
        u = np.random.default_rng(1).normal(size=n) * 0.1
        sj = srcgrad.jacfwd(stencil, sparse=True)
        jvp_once = lambda: srcgrad.jvp(stencil, (u, 0.1), (u, 0.0))  # noqa: E731
        t = _median({"sparse": lambda: sj(u, 0.1), "jvp": jvp_once}, runs=3)
        products = sj(u, 0.1).srcgrad_products
        rows.append(f"| stencil n={n} | {products} | {n} | {fmt_time(t['sparse'])} | "
                    f"{fmt_time(t['jvp'])} | {fmt_time(t['jvp'] * n)} (estimated) |")
    return rows


def nested_rows() -> list[str]:
    rows = []
    for label, run, want in [
            ("particle rr", lambda: particle.srcgrad_particle(0.0, "r"), particle.EXPECTED),
            ("particle ff", lambda: particle.srcgrad_particle(0.0, "f"), particle.EXPECTED),
            ("particle ff, JAX (jit, lax.while_loop)", lambda: particle.jax_particle(0.0, "f"),
             particle.EXPECTED),
            ("saddle rr", lambda: saddle.srcgrad_saddle([1.0, 1.0], "r"), saddle.EXPECTED),
            ("saddle ff", lambda: saddle.srcgrad_saddle([1.0, 1.0], "f"), saddle.EXPECTED)]:
        t = _median({label: run}, runs=3)[label]
        err = float(np.max(np.abs(np.asarray(run()) - np.asarray(want))))
        rows.append(f"| {label} | {fmt_time(t)} | {err:.1e} |")
    return rows + torch_nested_rows()


def torch_nested_rows() -> list[str]:
    """PyTorch's eager runs, timed once each (nothing to compile; 4-60 s a run)."""
    runs = [("particle rr, PyTorch (eager, autograd.grad of create_graph gradients)",
             lambda: particle.torch_particle(0.0, "r"), particle.EXPECTED),
            ("particle ff, PyTorch (eager, func.jvp over func.grad)",
             lambda: particle.torch_particle(0.0, "f"), particle.EXPECTED),
            ("saddle rr, PyTorch (eager, autograd.grad of create_graph gradients)",
             lambda: saddle.torch_saddle([1.0, 1.0], "r"), saddle.EXPECTED),
            ("saddle ff, PyTorch (eager, func.jvp per element over func.jvp)",
             lambda: saddle.torch_saddle([1.0, 1.0], "f"), saddle.EXPECTED)]
    if _torch() is None:
        return [f"| {label} | {NOT_INSTALLED} | {NOT_INSTALLED} |" for label, _, _ in runs]
    rows = []
    for label, run, want in runs:
        with warnings.catch_warnings():  # float() of a tensor in the solver's tests
            warnings.simplefilter("ignore", UserWarning)
            start = time.perf_counter()
            got = run()
            elapsed = time.perf_counter() - start
        err = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
        rows.append(f"| {label} | {fmt_time(elapsed)} | {err:.1e} |")
    return rows


def main():
    lines = ["# Second order (issue 17)", "", "Generated by `python -m bench.second_order`.", "",
             "## HVP / gradient (srcgrad, numba)", "",
             "PyTorch: torch.func.jvp over torch.func.grad (eager, one thread), thread CPU "
             "time like srcgrad's; 'torch H v diff' is the largest |difference| from "
             "srcgrad's H v over the largest |entry| of srcgrad's H v or gradient.", "",
             "| function | gradient | hvp | hvp / gradient | torch gradient | torch hvp | "
             "torch hvp / gradient | torch H v diff |", "|---|---|---|---|---|---|---|---|"]
    lines += hvp_rows()
    lines += ["", "## Recursive function (depth 20): HVP / gradient", "",
              "| size | gradient | hvp | hvp / gradient | n second-order JVPs (before) | "
              "JVPs / gradient |", "|---|---|---|---|---|---|"]
    lines += recursive_rows()
    lines += ["", "## Dense Hessian against JAX (jit)", "",
              "srcgrad.hessian runs its loop over columns in compiled code; 'one call per column' "
              "is the earlier way, an hvp call from Python per column.", "",
              "torch.func.hessian is jacfwd(jacrev) run eagerly (no jit); its error is the "
              "largest |difference| from srcgrad's Hessian over its largest |entry|.", "",
              "| size | srcgrad.hessian | one call per column | jax.hessian | jax.jacfwd(jacrev) "
              "| srcgrad / jax.hessian | one call per column / jax.hessian "
              "| torch.func.hessian | srcgrad / torch | torch error |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    lines += hessian_rows()
    lines += ["", "## Sparse Jacobian (jacfwd(sparse=True), pattern detection included)", "",
              "| problem | products | dense products | sparse time | one JVP | dense by JVPs |",
              "|---|---|---|---|---|---|"]
    lines += sparse_rows()
    lines += ["", "## Nested derivatives (GradBench particle, saddle)", "",
              "srcgrad and JAX: medians of 3 runs after a first; PyTorch: one run each (eager, "
              "nothing compiled). rr = reverse over reverse, ff = forward over forward.", "",
              "| run | time | error against GradBench's answer |", "|---|---|---|"]
    lines += nested_rows()
    text = "\n".join(lines) + "\n"
    print(text)
    from pathlib import Path
    (Path(__file__).parent / "results" / "second_order.md").write_text(text)


if __name__ == "__main__":
    main()
