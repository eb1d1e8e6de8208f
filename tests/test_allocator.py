"""backend/allocator.py: glibc's thresholds are set once, when the first gradient is made,
and left alone where the user asked (SRCGRAD_MALLOC=system, a MALLOC_* variable)."""

import os
import platform
import subprocess
import sys

import pytest

_PROBE = """
import numpy as np, srcgrad
from srcgrad.backend import allocator


def f(x):
    return np.sum(x * x)


print(allocator._done, end=" ")
g = srcgrad.grad(f)
print(allocator._done, end=" ")
g(np.ones(3))
print(allocator.steady())
"""


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")
def test_set_once_when_the_first_gradient_is_made(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(_PROBE)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    clean.pop("SRCGRAD_MALLOC", None)
    out = subprocess.run([sys.executable, str(probe)], env=clean, capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == ["False", "True", "False"]  # set by the call, not again


@pytest.mark.parametrize("env", [{"SRCGRAD_MALLOC": "system"}, {"MALLOC_ARENA_MAX": "2"}])
def test_left_alone_when_asked(env):
    from srcgrad.backend import allocator
    code = "from srcgrad.backend import allocator; print(allocator.steady())"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run([sys.executable, "-c", code], env={**clean, **env},
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False" and allocator is not None
