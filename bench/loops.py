"""Gradient cost relative to the numba-compiled primal, on loop-heavy problems (issue 3).

    python bench/loops.py [--repeat 15]

For each problem: the primal compiled with `numba.njit(f)`, srcgrad's gradient,
and (for the ODE) a hand-written numba adjoint, all timed in this process;
medians of repeated runs, reported as ratios to the primal.
"""
import argparse
import statistics
import time

import numba
import numpy as np

import srcgrad


def euler(y0, k, n, dt):
    """Explicit Euler for dy/dt = -k y^2 + sin(y)."""
    y = y0
    for i in range(n):
        y = y + dt * (-k * y * y + np.sin(y))
    return y


@numba.njit
def euler_adjoint_by_hand(y0, k, n, dt):
    ys = np.empty(n)
    y = y0
    for i in range(n):
        ys[i] = y
        y = y + dt * (-k * y * y + np.sin(y))
    gy, gk = 1.0, 0.0
    for i in range(n - 1, -1, -1):
        yi = ys[i]
        gk -= gy * dt * yi * yi
        gy = gy * (1.0 + dt * (-2.0 * k * yi + np.cos(yi)))
    return y, gy, gk


def rnn(W, h0, xs):
    """A small recurrent update over a sequence."""
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h)


def median_time(fn, args, repeat):
    fn(*args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=15)
    repeat = parser.parse_args().repeat
    rng = np.random.default_rng(0)
    problems = [
        ("euler ODE, 10^6 steps", euler, (0.5, 0.3, 10**6, 1e-4), (0, 1),
         euler_adjoint_by_hand),
        ("RNN, 16 units, 2000 steps", rnn,
         (rng.normal(size=(16, 16)) * 0.3, rng.normal(size=16), rng.normal(size=(2000, 16))),
         (0, 1), None),
    ]
    print(f"{'problem':28}{'primal':>11}{'gradient':>11}{'ratio':>8}{'by hand':>9}")
    for title, f, args, wrt, by_hand in problems:
        primal = median_time(numba.njit(f), args, repeat)
        grad = srcgrad.value_and_grad(f, wrt=wrt)
        gradient = median_time(grad, args, repeat)
        assert grad.backend == "numba"
        hand = f"{median_time(by_hand, args, repeat) / primal:8.2f}x" if by_hand else ""
        print(f"{title:28}{primal * 1e3:9.2f}ms{gradient * 1e3:9.2f}ms"
              f"{gradient / primal:7.2f}x{hand:>9}")


if __name__ == "__main__":
    main()
