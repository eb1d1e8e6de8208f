"""The on-disk cache under faults (backend/cache.py, backend/compile.py, backend/index.py):
several processes building one gradient at once on a cold cache, a corrupted cached
module, corrupted numba cache files, a cache directory that cannot be written, a path
that is a file, an unwritable home, and a directory another user could write to or owns,
whose planted module is never imported.

Each case gets its own cache directory (SRCGRAD_CACHE_DIR); the directory in use is
decided once per process per configured path, so no two cases share a path.
"""
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import warnings

import numpy as np
import pytest

import srcgrad
from srcgrad import config, pipeline
from srcgrad.backend import cache

X = np.array([0.3, -1.2, 2.0])


def wave(x):
    return np.sum(np.sin(x) * x)


def wave_grad(x):
    return np.sin(x) + x * np.cos(x)


def _warnings(action):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = action()
    return result, [w for w in caught if issubclass(w.category, srcgrad.SrcgradWarning)]


@pytest.fixture
def cache_at(monkeypatch):
    def use(path):
        monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(path))
        return path
    return use


RUN = '''
import json, sys
sys.path.insert(0, {folder!r})
import numpy as np
import srcgrad, wavy
g = srcgrad.grad(wavy.wave)
print(json.dumps({{"grad": g(np.array([0.3, -1.2, 2.0])).tolist(), "backend": g.backend}}))
'''


def test_processes_building_one_gradient_at_once_on_a_cold_cache(tmp_path):
    (tmp_path / "wavy.py").write_text("import numpy as np\n\n\ndef wave(x):\n"
                                      "    return np.sum(np.sin(x) * x)\n")
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "cold")}
    code = RUN.format(folder=str(tmp_path))
    runs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(3)]
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
        assert "SrcgradWarning" not in err, err
        got = json.loads(out.strip().splitlines()[-1])
        assert got["backend"] == "numba"
        np.testing.assert_allclose(got["grad"], wave_grad(X), rtol=1e-13)


def test_a_corrupted_module_is_built_again(tmp_path, cache_at):
    folder = cache_at(tmp_path / "modules")
    expected = srcgrad.grad(wave, jit=False)(X)
    (module,) = folder.glob("wave__grad_*.py")
    text = module.read_text()
    module.write_text(text[: len(text) // 2])  # truncated: a SyntaxError if imported
    before = pipeline.STATS["transforms"]
    np.testing.assert_array_equal(srcgrad.grad(wave, jit=False)(X), expected)
    assert pipeline.STATS["transforms"] == before + 1
    assert module.read_text() == text
    (folder / "index" / next(os.walk(folder / "index"))[2][0]).write_text("{not json")
    np.testing.assert_array_equal(srcgrad.grad(wave, jit=False)(X), expected)


def test_corrupted_numba_cache_files_are_dropped_and_compiled_again(tmp_path, cache_at):
    folder = cache_at(tmp_path / "numba")
    np.testing.assert_allclose(srcgrad.grad(wave)(X), wave_grad(X), rtol=1e-13)
    for suffix, damage in [(".nbi", lambda b: b[:40]), (".nbc", lambda b: b"garbage\n")]:
        (hurt,) = (folder / "__pycache__").glob(f"wave__grad_*{suffix}")
        hurt.write_bytes(damage(hurt.read_bytes()))
        again = srcgrad.grad(wave)  # a new dispatcher: numba reads its cache files
        grad, said = _warnings(lambda: again(X))
        np.testing.assert_allclose(grad, wave_grad(X), rtol=1e-13)
        assert again.backend == "numba", suffix
        assert len(said) == 1, [str(w.message) for w in said]
        message = str(said[0].message)
        assert "could not be read" in message and str(hurt.parent) in message
        _, said = _warnings(lambda: again(X))
        assert not said
    third = srcgrad.grad(wave)  # numba wrote them again, whole
    _, said = _warnings(lambda: third(X))
    assert not said and third.backend == "numba"


def _check_private(configured, reason):
    (grad, said) = _warnings(lambda: srcgrad.grad(wave, jit=False)(X))
    np.testing.assert_allclose(grad, wave_grad(X), rtol=1e-13)
    assert len(said) == 1, [str(w.message) for w in said]
    message = str(said[0].message)
    assert str(configured) in message and "SRCGRAD_CACHE_DIR" in message and reason in message
    in_use = config.cache_dir()
    assert in_use != configured and stat.S_IMODE(os.stat(in_use).st_mode) == 0o700
    assert str(in_use) in message
    _, said = _warnings(lambda: srcgrad.grad(wave, jit=False)(X))
    assert not said  # once
    return in_use


@pytest.fixture
def unwritable(tmp_path):
    """A directory this process cannot write into: mode 555, or immutable under root."""
    path = tmp_path / "read-only"
    path.mkdir(mode=0o700)
    if os.geteuid() != 0:
        path.chmod(0o500)
        yield path
        path.chmod(0o700)
        return
    if shutil.which("chattr") is None or subprocess.run(
            ["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("running as root, and chattr +i (the only way to refuse root a write "
                    "here) is not available on this file system")
    try:
        yield path
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_a_read_only_cache_directory_gives_a_private_one(unwritable, cache_at):
    _check_private(cache_at(unwritable), "not writable")


def test_a_cache_path_that_is_a_file_gives_a_private_one(tmp_path, cache_at):
    path = tmp_path / "a-file"
    path.write_text("not a directory")
    _check_private(cache_at(path), "is a file")


def test_an_unwritable_home_gives_a_private_cache(unwritable, monkeypatch):
    monkeypatch.delenv("SRCGRAD_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(unwritable))
    _check_private(unwritable / ".cache" / "srcgrad", "cannot be created")


def _planted(tmp_path, name, cache_at):
    """A cache directory holding wave's gradient module and index entry, the module
    rewritten to leave a marker file when imported and the entry updated to match (so
    the index would serve it), and the marker's path."""
    safe = cache_at(tmp_path / f"built-{name}")
    srcgrad.grad(wave, jit=False)(X)
    planted = tmp_path / name
    shutil.copytree(safe, planted)
    marker = tmp_path / f"imported-{name}"
    (module,) = planted.glob("wave__grad_*.py")
    text = f"open({str(marker)!r}, 'w').close()\n" + module.read_text()
    module.write_text(text)
    (entry_path,) = (planted / "index").glob("*.json")
    entries = json.loads(entry_path.read_text())
    for entry in entries:
        entry["module_hash"] = hashlib.sha256(text.encode()).hexdigest()
    entry_path.write_text(json.dumps(entries))
    return planted, marker


def test_a_planted_module_is_imported_from_a_safe_directory(tmp_path, cache_at):
    """The plant works: the index serves it when the directory is the user's own."""
    planted, marker = _planted(tmp_path, "own", cache_at)
    planted.chmod(0o700)
    cache_at(planted)
    srcgrad.grad(wave, jit=False)(X)
    assert marker.exists()


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777], ids=["777", "770", "1777"])
def test_a_planted_module_in_a_directory_others_can_write_is_never_imported(tmp_path, cache_at,
                                                                            mode):
    planted, marker = _planted(tmp_path, f"open-{mode:o}", cache_at)
    planted.chmod(mode)
    in_use = _check_private(cache_at(planted), "writable by group")
    assert not marker.exists()
    assert not list(in_use.glob("*.json")) and in_use.parent != planted


def test_a_planted_module_in_another_users_directory_is_never_imported(tmp_path, cache_at):
    if os.geteuid() != 0:
        pytest.skip("making a directory owned by another user needs root")
    planted, marker = _planted(tmp_path, "foreign", cache_at)
    for root, dirs, files in os.walk(planted):
        for name in [root] + [os.path.join(root, n) for n in dirs + files]:
            os.chown(name, 65534, 65534)
    _check_private(cache_at(planted), "belongs to user id 65534")
    assert not marker.exists()


def test_the_cache_subdirectories_are_made_private_and_checked(tmp_path):
    folder = tmp_path / "sub"
    assert cache.unsafe(folder) is None
    for sub in ("", "index", "__pycache__"):  # as numba would not make __pycache__
        assert stat.S_IMODE(os.stat(folder / sub).st_mode) == 0o700
    (folder / "__pycache__").chmod(0o777)
    assert "__pycache__ is writable by group and others" in cache.unsafe(folder)
    (folder / "__pycache__").rmdir()
    (folder / "__pycache__").write_text("a file")
    assert "__pycache__ is not a directory" in cache.unsafe(folder)
