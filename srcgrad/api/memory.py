"""`memory_limit=` of `grad` and `value_and_grad`: a size in bytes from what users write.

Accepts an int (bytes) or a string such as "200MB", "1.5 GB", "512KiB" (kB, MB, GB, TB
are powers of 1000; KiB, MiB, GiB, TiB powers of 1024); anything else, or a size below
one byte, is a clear error. None means no limit.
"""
from __future__ import annotations

import re

_UNITS = {"": 1, "b": 1, "kb": 10 ** 3, "mb": 10 ** 6, "gb": 10 ** 9, "tb": 10 ** 12,
          "kib": 2 ** 10, "mib": 2 ** 20, "gib": 2 ** 30, "tib": 2 ** 40}


def parse_memory_limit(limit) -> int | None:
    if limit is None:
        return None
    if isinstance(limit, bool):
        raise TypeError(f"memory_limit must be a number of bytes or a size such as '200MB', "
                        f"not {limit!r}")
    if isinstance(limit, (int, float)):
        size = limit
    else:
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(limit))
        unit = match.group(2).lower() if match else None
        if match is None or unit not in _UNITS:
            raise ValueError(f"memory_limit={limit!r}: write a size such as '200MB', '1.5GB' "
                             "or '512MiB', or a number of bytes")
        size = float(match.group(1)) * _UNITS[unit]
    if size < 1:
        raise ValueError(f"memory_limit={limit!r} is less than one byte")
    return int(size)
