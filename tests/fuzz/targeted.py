"""What the targeted campaigns (accumulators.py, indices.py, products.py) share: their
command line, their environment (compiled forms in strict mode, a private cache), a count
of how often the pass they aim at fired, writing and importing each drawn program, and
(accumulators.py, products.py) the check of one gradient against the generated
function's and central differences."""
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


def exact_failure(func, wrt, values, path: str):
    """None if `func`'s gradient at `values` runs compiled (numba), equals the generated
    function's own gradient (compiled forms off) to the last bit and central differences
    to 1e-5; else the line saying how it failed. Every drawn program is differentiable:
    any error is a failure."""
    import numpy as np
    import srcgrad
    from tests.gradcheck import gradient_without_forms, numerical_grad

    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    try:
        g = srcgrad.grad(func, wrt=wrt)
        got, plain = g(*values), gradient_without_forms(func, wrt, values)
        if not isinstance(wrt, tuple):
            got, plain = (got,), (plain,)
        same = all(np.array_equal(a, b) for a, b in zip(got, plain))
        close = all(np.allclose(a, numerical_grad(func, values, j), rtol=1e-5, atol=1e-6)
                    for a, j in zip(got, positions))
        if same and close and g.backend == "numba":
            return None
        return f"MISMATCH {path}: same bits {same}, close to FD {close}, {g.backend}"
    except Exception as exc:
        return f"ERROR {path}: {type(exc).__name__}: {exc}"
