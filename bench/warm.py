"""srcgrad's first call in a fresh process whose cache is already warm.

    python -m bench.warm --problem lse --mode quick

Run by `bench/run.py` after the srcgrad worker has filled the cache
(SRCGRAD_CACHE_DIR): builds the gradient of the problem's natural form at its
first size and times building it plus the first call, as a user's second run
of a script would. Prints one JSON object.
"""
from __future__ import annotations

import argparse
import json
import os
import time

from .settings import apply_thread_env

apply_thread_env(os.environ)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--problem", required=True)
    parser.add_argument("--mode", default="quick")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    import srcgrad  # noqa: F401  (timed apart from the first call)
    imported = time.perf_counter()
    from .problems import load
    problem = load(args.problem)
    data = problem.generate(problem.SIZES[args.mode][0])
    impl = problem.srcgrad_impl(data)
    ready = time.perf_counter()
    gradient = impl.make_gradient()
    gradient()
    done = time.perf_counter()
    print(json.dumps({"import_s": imported - start, "setup_s": ready - imported,
                      "warm_first_call_s": done - ready}))


if __name__ == "__main__":
    main()
