"""`python -m bench [--quick]`: the benchmark suite (see bench/run.py and bench/README.md)."""
import os

from .settings import apply_thread_env

apply_thread_env(os.environ)  # one thread per tool, set before anything imports NumPy

from .run import main  # noqa: E402

main()
