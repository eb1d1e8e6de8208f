"""The pipeline: a readable list of passes from a Python function to compiled code.

    parse -> check -> resolve -> desugar -> normalize -> analyze -> reverse
          -> optimize -> tape -> emit -> cache (a real .py file) -> compile (numba or Python)

`SRCGRAD_DUMP=anf,reverse,final` prints those stages' code to stderr.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import astor
import gast

from . import cache
from .analyze import analyze
from .check import check
from .compile import Compiled
from .desugar import desugar
from .emit import Emitted, emit
from .normalize import normalize
from .optimize import optimize
from .parse import parse
from .resolve import Resolved, resolve
from .reverse import reverse
from .tape import record


@dataclass
class Program:
    """A generated gradient: its source, where it lives, and how to call it."""

    resolved: Resolved
    emitted: Emitted
    path: object  # pathlib.Path of the cached module
    compiled: Compiled
    mutated_inputs: list  # parameters and globals the function writes into (copied per call)

    @property
    def source(self) -> str:
        return self.emitted.source


def _dump(stage: str, tree) -> None:
    wanted = os.environ.get("SRCGRAD_DUMP", "")
    if stage in wanted.split(","):
        print(f"# ---- srcgrad stage: {stage}", file=sys.stderr)
        print(astor.to_source(gast.gast_to_ast(tree)), file=sys.stderr)


def transform(func, wrt: list[str]):
    """The reverse-mode transformation of `func` with respect to parameter names `wrt`."""
    resolved = desugar(resolve(check(parse(func))))
    norm = normalize(resolved)
    _dump("anf", gast.FunctionDef(name=resolved.tree.name, args=resolved.tree.args, body=norm.body,
                                  decorator_list=[], returns=None, type_comment=None,
                                  type_params=[]))
    rev = reverse(norm, analyze(norm, wrt), wrt)
    _dump("reverse", rev.function())
    rev = record(optimize(rev))
    _dump("final", rev.function())
    return resolved, norm, emit(rev.function(), resolved.parsed, f"gradient wrt {', '.join(wrt)}")


def build(func, wrt: list[str], jit: bool = True) -> Program:
    """Transform, write to the cache, import, and wrap for numba (compiled on first call)."""
    resolved, norm, emitted = transform(func, wrt)
    parsed = resolved.parsed
    key = cache.cache_key(parsed.text, parsed.filename, func.__qualname__, {"wrt": wrt})
    path = cache.store(emitted.function, key, emitted.source)
    module = cache.load(path, resolved.namespace)
    where = f"{os.path.basename(parsed.filename)}:{parsed.first_line}"
    compiled = Compiled(getattr(module, emitted.function), path, emitted.line_map,
                        f"gradient of {func.__qualname__} ({where})", jit=jit)
    return Program(resolved, emitted, path, compiled, sorted(norm.mutated & set(norm.inputs)))
