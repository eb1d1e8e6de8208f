"""A second process with a warm cache finds its generated module through the cache index
(backend/index.py) without running srcgrad's passes and without numba compiling again:
no file of the cache directory is written, numba's index and data files included. An
edited callee or a rebound global is noticed, and the function is transformed anew.

Each case runs fresh Python processes on a module written to a temporary directory,
with a cache directory of its own; no timings are checked (bench/overhead.py has them).
"""
import functools
import json
import os
import subprocess
import sys

import pytest

MODEL = '''
import numpy as np

SCALE = 0.5


def helper(x, k):
    return np.sin(x) * k


def model(x, k):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + helper(x[i], k) * x[i]
    return SCALE * s
'''

OTHER = '''

def other(x, k):
    return np.cos(x) * k


helper = other
'''

RUN = '''
import json, sys
sys.path.insert(0, {folder!r})
import numpy as np
import srcgrad
from srcgrad import pipeline
from srcgrad.backend import index
import model
gradient = srcgrad.grad(model.model, jit={jit})
result = gradient(np.array([0.5, 1.0, 2.0]), 3.0)
print(json.dumps({{"stats": pipeline.STATS, "backend": gradient.backend,
                  "result": result.tolist(), "srcgrad": index.package_fingerprint()}}))
'''


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "model.py").write_text(MODEL)
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("SRCGRAD_DUMP", None)

    seen = set()

    def run(jit=True):
        code = RUN.format(folder=str(folder), jit=jit)
        out = subprocess.run([sys.executable, "-c", code], env=env,
                             capture_output=True, text=True, check=True)
        got = json.loads(out.stdout.strip().splitlines()[-1])
        seen.add(got["srcgrad"])
        if len(seen) > 1:  # a new key for every entry: nothing to check
            pytest.skip("srcgrad's own sources were edited while the test ran")
        return got
    return folder, tmp_path / "cache", run


def files(directory):
    """Every file under `directory`, with its modification time and size."""
    found = {}
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            stat = os.stat(path)
            found[os.path.relpath(path, directory)] = (stat.st_mtime_ns, stat.st_size)
    return found


def test_a_second_process_neither_transforms_nor_compiles(project):
    folder, cache, run = project
    first = run()
    assert first["stats"] == {"transforms": 1, "index_hits": 0}
    before = files(cache)
    assert any(name.endswith(".nbi") for name in before)  # numba's cache index is there
    assert any(name.startswith("index") for name in before)
    second = run()
    assert second["stats"] == {"transforms": 0, "index_hits": 1}
    assert second["backend"] == "numba"
    assert second["result"] == first["result"]
    assert files(cache) == before  # nothing written: numba loaded its cached code


def test_an_edited_callee_or_rebound_global_is_transformed_again(project):
    folder, cache, run = project
    run = functools.partial(run, jit=False)  # the index is the same; numba would only add time
    first = run()
    source = (folder / "model.py").read_text()
    (folder / "model.py").write_text(source.replace("np.sin(x) * k", "np.cos(x) * k"))
    edited = run()
    assert edited["stats"]["transforms"] == 1
    assert edited["result"] != first["result"]
    (folder / "model.py").write_text(source)  # back as it was: the first entry serves again
    assert run()["stats"] == {"transforms": 0, "index_hits": 1}
    (folder / "model.py").write_text(source + OTHER)  # `helper` rebound, no source edited
    rebound = run()
    assert rebound["stats"]["transforms"] == 1
    assert rebound["result"] == edited["result"]
    moved = source.replace("import numpy as np\n", "import numpy as np\n\n\n")
    (folder / "model.py").write_text(moved)  # lines moved: comments and messages would be off
    assert run()["stats"]["transforms"] == 1


square, triple = (lambda x: x * x), (lambda y: 3.0 * y * y)  # one line, two functions


def test_two_lambdas_on_one_line_are_told_apart():
    import srcgrad
    from srcgrad import pipeline
    assert srcgrad.grad(square, jit=False)(2.0) == 4.0
    hits = pipeline.STATS["index_hits"]
    assert srcgrad.grad(triple, jit=False)(2.0) == 12.0
    assert srcgrad.grad(square, jit=False)(2.0) == 4.0  # the index serves the same lambda
    assert pipeline.STATS["index_hits"] == hits + 1
