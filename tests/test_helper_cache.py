"""numba's compiled code of the runtime helpers is kept on disk (backend/helper_cache.py).

A new function in a process whose cache directory an earlier process used loads the
helpers numba compiled there: no helper cache file is written again, and the gradient is
bit-for-bit the one a process with an empty cache directory computes. Unreadable helper
cache files are dropped and compiled again; numba's settings are as before outside
srcgrad's compilation. No timings are checked (bench/cold.py has them).
"""
import json
import os
import subprocess
import sys
import warnings

import numba
import numpy as np
import pytest

import srcgrad
from srcgrad.backend import helper_cache

MODEL = '''
import numpy as np


def first(x, w):  # ends as second does: np.sum(u * u) would need fewer helpers (squares.py)
    y = np.zeros(x.shape[0])
    for i in range(4):
        y = y + np.tanh(x * w + i)
    return np.sum(y * x)


def second(x, w):
    z = np.zeros(x.shape[0])
    for k in range(3):
        z = z + np.tanh(x * w - k) * 0.5
    return np.sum(z * x)
'''

RUN = '''
import json, sys, warnings
sys.path.insert(0, {folder!r})
import numpy as np
import srcgrad, model
x = np.linspace(-1.0, 1.0, 5)
with warnings.catch_warnings(record=True) as said:
    warnings.simplefilter("always")
    g = srcgrad.grad(getattr(model, {name!r}), wrt=(0, 1))
    gx, gw = g(x, 0.7)
print(json.dumps({{"gx": [float(v).hex() for v in gx], "gw": float(gw).hex(),
                  "backend": g.backend,
                  "said": [str(w.message) for w in said
                           if issubclass(w.category, srcgrad.SrcgradWarning)]}}))
'''


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("helper-cache-project")
    (folder / "model.py").write_text(MODEL)

    def run_in(cache, name):
        env = {**os.environ, "SRCGRAD_CACHE_DIR": str(cache), "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("SRCGRAD_DUMP", None)
        out = subprocess.run([sys.executable, "-c", RUN.format(folder=str(folder), name=name)],
                             env=env, capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])
    return run_in


def _helper_files(cache):
    """{path: (size, mtime)} of the helpers' numba files under `cache`."""
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in cache.glob("numba-*/*/*") if p.suffix in (".nbi", ".nbc")}


def test_a_new_function_loads_the_helpers_compiled_by_an_earlier_process(run, tmp_path):
    used, empty = tmp_path / "used", tmp_path / "empty"
    first = run(used, "first")
    before = _helper_files(used)
    assert first["backend"] == "numba" and before, "the first process cached its helpers"
    again = run(used, "second")
    assert _helper_files(used) == before  # every helper second needs came from the cache
    alone = run(empty, "second")  # the same function compiled in a new cache directory
    assert again["backend"] == alone["backend"] == "numba"
    assert (again["gx"], again["gw"]) == (alone["gx"], alone["gw"])  # bit for bit
    assert not again["said"] and not alone["said"]
    x = np.linspace(-1.0, 1.0, 5)
    z = sum(np.tanh(x * 0.7 - k) * 0.5 for k in range(3))
    dz = sum((1 - np.tanh(x * 0.7 - k) ** 2) * 0.5 for k in range(3))
    np.testing.assert_allclose([float.fromhex(v) for v in alone["gx"]], z + x * dz * 0.7,
                               rtol=1e-13)
    np.testing.assert_allclose(float.fromhex(alone["gw"]), np.sum(x * dz * x), rtol=1e-13)


def test_damaged_helper_cache_files_are_compiled_again(run, tmp_path):
    cache = tmp_path / "hurt"
    clean = run(cache, "second")
    files = _helper_files(cache)
    for path in files:  # truncated indexes, garbage data
        with open(path, "r+b") as handle:
            if path.endswith(".nbi"):
                handle.truncate(40)
            else:
                handle.write(b"garbage\n")
    for stale in cache.glob("second__grad_*.py"):  # build second again, reading the helpers
        stale.unlink()
    again = run(cache, "second")
    assert again["backend"] == "numba" and not again["said"]
    assert (again["gx"], again["gw"]) == (clean["gx"], clean["gw"])


def wavy(x):
    return np.sum(np.sin(x) * np.exp(x * 0.5))


def test_numba_settings_and_overload_options_are_restored_after_compiling():
    from numba.core.typing.templates import builtin_registry
    options = {t: dict(t._jit_options) for t in builtin_registry.functions
               if isinstance(getattr(t, "_jit_options", None), dict)}
    before = numba.config.CACHE_DIR
    with warnings.catch_warnings():
        warnings.simplefilter("error", srcgrad.SrcgradWarning)
        g = srcgrad.grad(wavy)
        g(np.linspace(0.0, 1.0, 4))
    assert g.backend == "numba"
    assert numba.config.CACHE_DIR == before
    assert {t: t._jit_options for t in options} == options
    assert helper_cache.folder(srcgrad.config.cache_dir()).is_dir()


def _lane(kind):  # as runtime/reductions.py makes one loop per reduction
    def total(v):
        return v * 2 if kind == "double" else v
    return total


def test_closures_of_one_factory_get_names_by_their_code_and_cells():
    """numba names compiled code after the qualified name and a counter private to the
    process, and a cached library carries its callees' code under those names: without
    content in the name, np.sum's and np.min's closures compiled by two processes under
    one number were one symbol (found by two fuzz workers sharing a cache directory)."""
    double, same, plain = _lane("double"), _lane("double"), _lane("plain")
    named = [helper_cache.named_by_content(f) for f in (double, same, plain)]
    assert named[0].__qualname__ == named[1].__qualname__ != named[2].__qualname__
    assert named[0].__qualname__.startswith("_lane.<locals>.total__")
    assert double.__qualname__ == "_lane.<locals>.total"  # the function itself is untouched
    assert named[0](3.0) == double(3.0) == 6.0 and named[2](3.0) == 3.0


def test_a_save_never_reuses_a_data_file_another_save_may_have_written(tmp_path):
    """numba numbers a new entry's data file by the index it read; two processes saving at
    once took one number for two signatures. Each save now writes its own file first."""
    from numba.core.caching import IndexDataCacheFile
    from srcgrad.backend import shared_cache

    class Cache:  # what shared() reads of a dispatcher
        pass

    files = []
    for _ in range(2):  # two processes' views of one function's cache, made before saving
        cache = Cache()
        cache._cache_file = IndexDataCacheFile(str(tmp_path), "f-1.py311", ("stamp", 1))
        holder = Cache()
        holder._cache = cache
        shared_cache.shared(holder)
        files.append(cache._cache_file)
    files[0].save("sig-a", ("code", "a"))
    files[1].save("sig-b", ("code", "b"))
    files[0].save("sig-a", ("code", "a2"))  # saved again: the old file goes
    assert files[1].load("sig-a") == ("code", "a2") and files[0].load("sig-b") == ("code", "b")
    assert len(list(tmp_path.glob("*.nbc"))) == 2
