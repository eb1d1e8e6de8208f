"""What the targeted campaigns (accumulators.py, indices.py) share: their command line,
their environment (compiled forms in strict mode, a private cache), a count of how often
the pass they aim at fired, and writing and importing each drawn program."""
from __future__ import annotations

import argparse
import importlib.util
import os
import tempfile


def arguments(doc: str, argv, prefix: str):
    """`--programs` and `--seed`; compiled forms strict, a cache of their own."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    os.environ["SRCGRAD_LOOPS"] = "strict"
    os.environ.setdefault("SRCGRAD_CACHE_DIR", tempfile.mkdtemp(prefix=f"srcgrad-{prefix}-"))
    return args


def counting(owner, attr: str) -> list:
    """Replace `owner.attr` by a wrapper adding what it returns into the list's item."""
    total, plain = [0], getattr(owner, attr)

    def counted(*args):
        done = plain(*args)
        total[0] += done
        return done
    setattr(owner, attr, counted)
    return total


def load(folder: str, name: str, source: str):
    """The module of `source`, written to `folder/name.py` (srcgrad reads its file)."""
    path = os.path.join(folder, f"{name}.py")
    with open(path, "w") as handle:
        handle.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path
