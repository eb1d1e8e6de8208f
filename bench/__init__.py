"""Benchmarks of srcgrad side by side with JAX, PyTorch and autograd (see bench/README.md)."""
