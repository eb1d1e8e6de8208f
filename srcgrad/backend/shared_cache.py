"""numba's on-disk cache made safe for processes that compile at the same time.

numba saves a newly compiled signature by reading the function's index file, giving
the new entry the first free data-file number, writing the index and then the data
file. Two processes that compile different signatures of one function at once (two
pytest-xdist workers, two fuzz workers, two Dask workers sharing srcgrad's cache
directory) both pick number 1: the index ends up naming one signature while the data
file holds the other's machine code, and every later load of that signature runs
code compiled for different types (wrong values, or a crash). srcgrad's runtime helpers
are cached for every gradient in one folder (helper_cache.py), and a generated module's
own cache is exposed the same way. (The wrong values two fuzz workers found had another
cause, helper_cache.named_by_content; this race is read from numba's code, not observed.)

`shared(dispatcher)` gives a dispatcher's cache a data file that saves differently:

- every save writes a new data file under a name no other save uses (a random 63-bit
  number in numba's pattern) and only then points the index at it, so the data an
  index entry names is always the data saved for that entry's key;
- the index is read, changed and written under an exclusive `flock` of one lock file
  per cache folder (where `fcntl` exists), so concurrent saves do not drop each
  other's entries (without the lock a dropped entry is only a recompilation later);
- the data file an entry named before is deleted; a process that read the old index
  and opens it afterwards gets numba's "file removed" miss and compiles.

Guarantee: an index entry only ever names a data file written, complete, for its own
key; loading is numba's own. Everything else about numba's cache is unchanged.
"""
from __future__ import annotations

import os
import secrets
from contextlib import contextmanager

from numba.core.caching import IndexDataCacheFile

try:
    import fcntl
except ImportError:  # Windows: unique names still keep entries and data together
    fcntl = None

_LOCK_NAME = ".srcgrad-index.lock"


class _UniqueDataFile(IndexDataCacheFile):
    """numba's index and data files, each save under a fresh data-file name."""

    def save(self, key, data):
        data_name = self._data_name(secrets.randbits(63))
        self._save_data(data_name, data)
        with _locked(self._cache_path):
            overloads = self._load_index()
            old = overloads.get(key)
            overloads[key] = data_name
            self._save_index(overloads)
        if old is not None and old != data_name:
            try:
                os.unlink(self._data_path(old))
            except OSError:
                pass


@contextmanager
def _locked(folder: str):
    """An exclusive lock of `folder`'s index files between processes (none without fcntl
    or where the lock file cannot be opened)."""
    if fcntl is None:
        yield
        return
    try:
        fd = os.open(os.path.join(folder, _LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def shared(dispatcher):
    """`dispatcher` with its numba cache (if it has one of numba's file caches) saving as
    the module docstring says; returns the dispatcher."""
    cache = getattr(dispatcher, "_cache", None)
    cache = getattr(cache, "_cache", cache)  # helper_cache._Guarded wraps numba's cache
    old = getattr(cache, "_cache_file", None)
    if type(old) is IndexDataCacheFile:
        new = _UniqueDataFile.__new__(_UniqueDataFile)
        new.__dict__.update(old.__dict__)
        cache._cache_file = new
    return dispatcher
