"""Sparse Jacobians and Hessians (work in progress: not available yet)."""


def sparse_jacobian(*args):
    raise NotImplementedError("sparse=True is not available yet")


def sparse_hessian(*args):
    raise NotImplementedError("sparse=True is not available yet")
