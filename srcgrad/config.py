"""What srcgrad reads from its environment: its version, where the cache lives, which
pipeline stages to dump.

Every layer may import this module; it imports nothing from srcgrad.
- `SRCGRAD_CACHE_DIR`: the directory of generated modules (default
  `$XDG_CACHE_HOME/srcgrad`, else `~/.cache/srcgrad`); backend/cache.py uses a
  private temporary one instead if it is unsafe or unwritable.
- `SRCGRAD_DUMP`: comma-separated stage names whose tree the pipeline prints to
  stderr (pipeline.py lists the stages).
"""
from __future__ import annotations

import os
from pathlib import Path

__version__ = "0.1.0"


def configured_cache_dir() -> Path:
    """The cache directory the environment names (backend/cache.py creates and checks it)."""
    env = os.environ.get("SRCGRAD_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "srcgrad"


# configured directory -> the private one backend/cache.py uses instead (it was unsafe)
REPLACED: dict[str, Path] = {}


def cache_dir() -> Path:
    """The cache directory in use: the configured one, unless this process replaced it."""
    path = configured_cache_dir()
    return REPLACED.get(str(path), path)


def dumped_stages() -> list[str]:
    return os.environ.get("SRCGRAD_DUMP", "").split(",")
