"""Bridges to the frameworks users' code already lives in: `to_jax` (jax_bridge.py) and
`to_torch` (torch_bridge.py), both over the NumPy side in host.py.

Importing this package imports neither JAX nor PyTorch: each is imported when its bridge is
called. numba functions need no bridge: every transform takes a `@numba.njit` dispatcher
for the Python function it compiles (frontend/parse.numba_function).
"""
from .jax_bridge import to_jax  # noqa: F401
from .torch_bridge import to_torch  # noqa: F401
