"""The package's layout (docs/design.md, "Layout"): imports point only down the layers,
no module imports itself through others, and files and functions stay small.

Reads the sources with `ast`; imports nothing from srcgrad, so it runs in
milliseconds.
"""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "srcgrad"

# Bottom to top: a module may import its own layer and the layers below.
LAYERS = [
    {"config", "errors", "syntax"},  # shared by every layer
    {"runtime"},  # what generated code calls
    {"rules"},  # derivative rules
    {"frontend"},  # parse .. normalize: the user's function as three-address code
    {"analysis"},  # activity, scopes
    {"transforms"},  # reverse, optimize, record, forward, templates
    {"backend"},  # emit, cache, compile
    {"pipeline"},  # the passes in order
    {"api"},  # what users call
    {"interop"},  # srcgrad.to_jax, srcgrad.to_torch (import JAX or PyTorch when called)
    {"dask"},  # srcgrad.dask: gradients summed across a Dask cluster (imports Dask)
    {"__init__", "__main__"},
]
MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(module: str, path: Path) -> set[str]:
    """srcgrad modules `module` imports anywhere (inside functions too), by dotted name."""
    if module == "__init__":
        package = []
    elif path.name == "__init__.py":
        package = module.split(".")
    else:
        package = module.split(".")[:-1]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1]
            stem = base + (node.module.split(".") if node.module else [])
            for alias in node.names:
                sub = ".".join(stem + [alias.name])
                targets.add(sub if sub in MODULES else ".".join(stem) or "__init__")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            for name in names:
                if name == "srcgrad" or name.startswith("srcgrad."):
                    targets.add(name.removeprefix("srcgrad").lstrip(".") or "__init__")
    targets.discard(module)
    return targets


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _layer(module: str) -> int:
    top = module.split(".")[0]
    return next(k for k, layer in enumerate(LAYERS) if top in layer)


def test_every_module_has_a_layer():
    for module in MODULES:
        _layer(module)


def test_imports_point_down_the_layers():
    upward = [f"{m} imports {t}" for m, targets in GRAPH.items() for t in sorted(targets)
              if _layer(t) > _layer(m)]
    assert not upward, "\n".join(upward)


def test_no_import_cycles():
    state, cycles = {}, []

    def visit(module, trail):
        state[module] = "open"
        for target in sorted(GRAPH.get(module, ())):
            if state.get(target) == "open":
                cycles.append(" -> ".join(trail[trail.index(target):] + [target]))
            elif target not in state:
                visit(target, trail + [target])
        state[module] = "done"

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])
    assert not cycles, "\n".join(cycles)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_files_and_functions_stay_small(module):
    text = MODULES[module].read_text()
    assert text.count("\n") <= MAX_FILE_LINES, f"{module}: split it along a seam"
    long = [f"{n.name} ({n.end_lineno - n.lineno + 1} lines)" for n in ast.walk(ast.parse(text))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, f"{module}: {', '.join(long)}"
