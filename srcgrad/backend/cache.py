"""The on-disk cache of generated modules.

Each generated module is a real `.py` file, so tracebacks show its lines and
numba's own `cache=True` can persist compiled code across processes (numba
needs a real source file). The file name carries a hash of everything the
generated text depends on: the user's source, where it lives, the options,
srcgrad's version and the rule registry. Writes are atomic (write a temporary
file, then `os.replace`), so concurrent processes never see half a module.
The directory is `config.cache_dir()`; its `index/` subdirectory holds the cache
index (index.py), through which a new process finds a module without
transforming the function again.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path

from ..config import __version__, cache_dir
from ..rules import fingerprint


def cache_key(user_source: str, filename: str, qualname: str, options: dict) -> str:
    blob = json.dumps([__version__, fingerprint(), user_source, filename, qualname, options],
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def store(stem: str, key: str, source: str) -> Path:
    """The cached module's path, writing `source` there first if it is not cached yet."""
    directory = cache_dir()
    path = directory / f"{stem}_{key}.py"
    if path.exists() and path.read_text() == source:
        return path  # unchanged: keep the mtime, which numba's cache index depends on
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{stem}_", suffix=".tmp")
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
