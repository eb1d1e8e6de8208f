"""One problem x one tool, every size, in a process of its own.

    python -m bench.worker --problem lse --tool jax --mode quick --refs DIR --out FILE

Writes one JSON line per size to FILE as soon as it is measured, so a crash
or a time-out loses only the sizes not reached. `bench/run.py` starts it with
the thread settings in its environment; run by hand it sets them itself.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
import warnings

from .settings import MODES, apply_thread_env

apply_thread_env(os.environ)  # before NumPy, numba, JAX or PyTorch are imported

import numpy as np  # noqa: E402

from . import measure  # noqa: E402
from .common import TOLERANCE, mismatch  # noqa: E402
from .problems import implementation, load  # noqa: E402


def short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def validate(flat_grad, ref_file):
    ref = np.load(ref_file)
    expected, coords = ref["grad"], ref["coords"]
    got = np.asarray(flat_grad, dtype=np.float64).reshape(-1)
    if got.shape != expected.shape:
        return False, float("inf"), f"gradient has {got.size} entries, expected {expected.size}"
    if coords.size:
        got, expected = got[coords], expected[coords]
    if not np.all(np.isfinite(got)):
        return False, float("inf"), "gradient has NaN or inf"
    err = float(np.max(mismatch(got, expected))) if got.size else 0.0
    return err <= TOLERANCE, err, None


def measure_size(problem, tool, size, index, mode, refs):
    row = {"problem": problem.__name__.rsplit(".", 1)[-1], "tool": tool, "size": size,
           "label": problem.label(size), "x": problem.x(size), "status": "ok", "notes": []}
    data = problem.generate(size)
    impl = implementation(problem, tool, data)
    row["notes"] += impl.notes

    t, _ = measure.timed(lambda: impl.sync(impl.primal()))
    row["primal_first_s"] = t
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        gradient = impl.make_gradient()
        made = time.perf_counter()
        out = impl.sync(gradient())
        done = time.perf_counter()
    row["transform_s"] = made - start
    row["first_call_s"] = done - start
    for w in caught:
        if w.category.__name__ == "SrcgradWarning":
            row["notes"].append("SrcgradWarning: " + str(w.message).splitlines()[0][:200])
            row["fallback"] = True

    valid, err, why = validate(impl.to_flat(out), os.path.join(refs, f"{row['problem']}_{index}.npz"))
    row["valid"], row["max_error"] = valid, err
    if why:
        row["notes"].append(why)
    if not valid:
        row["status"] = "invalid"

    settings = dict(MODES[mode])
    second, _ = measure.timed(lambda: impl.sync(gradient()))  # compiled: what a call costs
    if second > settings["slow_call"]:  # one more round is all we can afford
        settings.update(min_runs=1, max_runs=1)
    primal_s, gradient_s, runs = measure.interleaved(
        lambda: impl.sync(impl.primal()), lambda: impl.sync(gradient()),
        min_runs=settings["min_runs"], max_runs=settings["max_runs"], budget=settings["budget"])
    row.update(primal_s=primal_s, gradient_s=gradient_s, runs=runs,
               ratio=gradient_s / primal_s if primal_s else None)
    peak = measure.peak_growth(lambda: impl.sync(gradient()))
    row["peak_mib"] = None if peak is None else peak / 2 ** 20
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--problem", required=True)
    parser.add_argument("--tool", required=True)
    parser.add_argument("--mode", choices=sorted(MODES), default="quick")
    parser.add_argument("--refs", required=True, help="folder of reference gradients")
    parser.add_argument("--out", required=True, help="JSON-lines file to append rows to")
    parser.add_argument("--pin", type=int, default=None, help="run on this CPU only")
    args = parser.parse_args(argv)
    if args.pin is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {args.pin})
    measure.steady_allocator()

    problem = load(args.problem)
    sizes = problem.SIZES[args.mode]
    limit = MODES[args.mode]["slow_call"]
    too_slow = None

    def emit(row):
        with open(args.out, "a") as handle:
            handle.write(json.dumps(row) + "\n")

    for index, size in enumerate(sizes):
        base = {"problem": args.problem, "tool": args.tool, "size": size,
                "label": problem.label(size), "x": problem.x(size)}
        if too_slow is not None:
            emit(base | {"status": "skipped", "notes": [too_slow]})
            continue
        try:
            row = measure_size(problem, args.tool, size, index, args.mode, args.refs)
        except ImportError as exc:
            emit(base | {"status": "unavailable", "notes": [short(exc)]})
            continue
        except Exception as exc:  # a failure at one size is a result, not the end
            traceback.print_exc(file=sys.stderr)
            emit(base | {"status": "error", "notes": [short(exc)]})
            continue
        emit(row)
        # A call's own time predicts the next size's; a first call's compilation does not
        # grow with the size (srcgrad compiled gmm in just over the quick limit, skipping
        # its second size).
        slowest = row.get("gradient_s") or row["first_call_s"]
        if slowest > limit:
            too_slow = (f"not run: the gradient at {row['label']} took {slowest:.1f} s, over "
                        f"this mode's {limit:.0f} s limit for one call")


if __name__ == "__main__":
    main()
