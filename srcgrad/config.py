"""What srcgrad reads from its environment: its version, where the cache lives, which
pipeline stages to dump.

Every layer may import this module; it imports nothing from srcgrad.
- `SRCGRAD_CACHE_DIR`: the directory of generated modules (default
  `$XDG_CACHE_HOME/srcgrad`, else `~/.cache/srcgrad`).
- `SRCGRAD_DUMP`: comma-separated stage names whose tree the pipeline prints to
  stderr (pipeline.py lists the stages).
"""
from __future__ import annotations

import os
from pathlib import Path

__version__ = "0.1.0"


def cache_dir() -> Path:
    env = os.environ.get("SRCGRAD_CACHE_DIR")
    if env:
        path = Path(env)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = Path(base) / "srcgrad"
    path.mkdir(parents=True, exist_ok=True)
    return path


def dumped_stages() -> list[str]:
    return os.environ.get("SRCGRAD_DUMP", "").split(",")
