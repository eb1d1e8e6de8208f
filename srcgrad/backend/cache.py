"""The on-disk cache of generated modules, and the directory it lives in.

Each generated module is a real `.py` file, so tracebacks show its lines and
numba's own `cache=True` can persist compiled code across processes (numba
needs a real source file). The file name carries a hash of everything the
generated text depends on: the user's source, where it lives, the options,
srcgrad's version and the rule registry. Writes are atomic (write a temporary
file, then `os.replace`), so concurrent processes never see half a module.
The directory's `index/` subdirectory holds the cache index (index.py), through
which a new process finds a module without transforming the function again.

The cache holds code srcgrad executes (generated modules, numba's pickled index
and data files), so `directory()` uses the configured directory
(`config.configured_cache_dir()`: `SRCGRAD_CACHE_DIR`, else `~/.cache/srcgrad`)
only if it is a directory owned by the current user, not writable by group or
others (its `index/` and `__pycache__/` too, made with mode 700; as with SSH
keys), and writable.
Otherwise it warns once, naming the directory, the reason and
`SRCGRAD_CACHE_DIR`, and uses a private temporary directory for the rest of the
process (deleted at exit), so nothing planted in an unsafe directory is ever
imported and a read-only or missing home never stops srcgrad.
"""
from __future__ import annotations

import atexit
import hashlib
import importlib.util
import json
import os
import shutil
import stat
import sys
import tempfile
import threading
import warnings
from pathlib import Path

from .. import config
from ..config import __version__
from ..errors import SrcgradWarning, outside
from ..rules import fingerprint

_CHECKED: dict[str, Path] = {}  # configured directory -> the directory in use
_LOCK = threading.Lock()
_SUBDIRS = ("index", "__pycache__")


def cache_key(user_source: str, filename: str, qualname: str, options: dict) -> str:
    blob = json.dumps([__version__, fingerprint(), user_source, filename, qualname, options],
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def directory() -> Path:
    """The cache directory in use (see the module docstring), created if needed."""
    configured = config.configured_cache_dir()
    chosen = _CHECKED.get(str(configured))
    if chosen is not None and chosen.is_dir():
        return chosen
    with _LOCK:
        problem = unsafe(configured)
        chosen = configured if problem is None else _private(configured, problem)
        _CHECKED[str(configured)] = chosen
    return chosen


def unsafe(path: Path) -> str | None:
    """Why `path` must not hold the cache, or None if it may. It is created if missing, and
    so are its `index/` and `__pycache__/`, with mode 700 (numba would make `__pycache__`
    with the umask's mode)."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except FileExistsError:
        return "it is a file, not a directory"
    except OSError as exc:
        return f"it cannot be created ({exc.strerror or exc})"
    problem = _foreign(path)
    if problem is not None:
        return problem
    try:
        fd, probe = tempfile.mkstemp(dir=path, prefix=".probe_")
        os.close(fd)
        os.unlink(probe)
        for sub in _SUBDIRS:
            try:
                (path / sub).mkdir(mode=0o700)
            except FileExistsError:  # there already, or another process made it just now:
                pass                 # _foreign checks below what it is
    except OSError as exc:
        return f"it is not writable ({exc.strerror or exc})"
    for sub in _SUBDIRS:
        problem = _foreign(path / sub)
        if problem is not None:
            return problem
    return None


def _foreign(path: Path) -> str | None:
    """Why another user could change what is in `path`, or None."""
    info = os.stat(path)
    if not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory"
    if not hasattr(os, "geteuid"):  # Windows: no owners and modes to check
        return None
    if info.st_uid != os.geteuid():
        return f"{path} belongs to user id {info.st_uid}, not to you (user id {os.geteuid()})"
    if info.st_mode & 0o022:
        return (f"{path} is writable by {'group and others' if info.st_mode & 0o002 else 'group'}"
                f" (mode {stat.S_IMODE(info.st_mode):o})")
    return None


def _private(configured: Path, problem: str) -> Path:
    private = Path(tempfile.mkdtemp(prefix="srcgrad-cache-"))
    atexit.register(shutil.rmtree, private, ignore_errors=True)
    config.REPLACED[str(configured)] = private
    warnings.warn(
        f"srcgrad: not using the cache directory {configured}: {problem}. The cache holds code "
        f"srcgrad runs, so it must be a directory of yours that only you can write to. Using "
        f"the private directory {private} for this process instead (compiled code is not kept "
        "for the next process). Set SRCGRAD_CACHE_DIR to a directory you own with mode 700 "
        "(`chmod -R go-w` one that is yours) to keep it.", SrcgradWarning, stacklevel=outside())
    return private


def store(stem: str, key: str, source: str) -> Path:
    """The cached module's path, writing `source` there first if it is not cached yet."""
    return store_file(f"{stem}_{key}.py", source)


def store_file(name: str, source: str) -> Path:
    """`store` by the module's file name (a module carried from another process)."""
    if os.path.basename(name) != name or not name.endswith(".py"):
        raise ValueError(f"not a generated module's file name: {name!r}")
    folder = directory()
    path = folder / name
    if path.exists() and path.read_text() == source:
        return path  # unchanged: keep the mtime, which numba's cache index depends on
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{path.stem}_", suffix=".tmp")
    with os.fdopen(fd, "w") as handle:
        handle.write(source)
    os.replace(tmp, path)
    return path


def load(path: Path, namespace: dict):
    """Import the module at `path`, with `namespace` added to its globals first."""
    name = f"srcgrad_generated.{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(namespace)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
