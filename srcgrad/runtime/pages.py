"""Large tapes on huge pages (issue 13).

A tape is new memory on every call of a gradient, and the kernel maps it page by page as
the forward sweep first writes into it, 4 KiB at a time: at ode's largest size (320 MB of
tapes) that mapping and zeroing took more than half of the gradient's time (5.6x its
primal; 2.4x with the memory of the last call reused). `on_huge_pages(a)` asks Linux for
transparent huge pages (madvise MADV_HUGEPAGE) for the 2 MiB-aligned part of an array of
at least 32 MiB, before anything is written into it: a 2 MiB page is mapped at once.
Smaller tapes are left alone: they come from the heap, which keeps freed memory between
calls, while glibc maps anything above its mmap threshold (32 MiB, backend/allocator.py)
anew on every call (advised, a 12.8 MB tape of gmm measured no faster, maybe 5% slower).
The kernel honours the advice where transparent huge pages are set to `madvise` or
`always` and ignores it where they are `never`; on other systems the call is nothing. It
changes how the memory is mapped, never what it holds, and is given to srcgrad's own new
tapes only, never to the user's arrays.
"""
from __future__ import annotations

import sys

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

_LINUX = sys.platform.startswith("linux")
_HUGE = 1 << 21  # a transparent huge page on x86-64 and (4 KiB base pages) aarch64
_LEAST = 32 << 20  # M_MMAP_THRESHOLD as backend/allocator.py sets it
_MADV_HUGEPAGE = 14  # Linux's value on every architecture


@intrinsic
def _madvise_huge(typingctx, start, length):
    """madvise(start, length, MADV_HUGEPAGE), its result ignored (advice only)."""
    sig = types.void(types.intp, types.intp)

    def codegen(context, builder, signature, args):
        word = context.get_value_type(types.intp)
        byte_ptr = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(ir.IntType(32), [byte_ptr, word, ir.IntType(32)])
        madvise = cgutils.get_or_insert_function(builder.module, fnty, "madvise")
        builder.call(madvise, [builder.inttoptr(args[0], byte_ptr), args[1],
                               ir.Constant(ir.IntType(32), _MADV_HUGEPAGE)])
        return context.get_dummy_value()
    return sig, codegen


def on_huge_pages(a):
    """Advice about how `a`'s memory is mapped: nothing to do in Python."""


@overload(on_huge_pages)
def _on_huge_pages(a):
    if not _LINUX:
        return lambda a: None

    def impl(a):
        if a.nbytes >= _LEAST:
            start = (a.ctypes.data + _HUGE - 1) & ~(_HUGE - 1)
            end = (a.ctypes.data + a.nbytes) & ~(_HUGE - 1)
            if end > start:
                _madvise_huge(start, end - start)
    return impl
