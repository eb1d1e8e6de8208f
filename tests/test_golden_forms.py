"""README's compiled-form example ("The compiled form") is what `compiled_source` prints:
the sum added up in the loop and the forward and backward sweeps in one loop. If a
deliberate change to the compiled form breaks it, review the new text and update README."""
import importlib.util
import os
import re

import numpy as np

import srcgrad

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CELL = """import numpy as np


def cell(w, x, h):
    gate = 1.0 / (1.0 + np.exp(-(w * x + h)))
    new = gate * np.tanh(x) + (1.0 - gate) * h
    return np.sum(new * new)
"""


def readme_block() -> str:
    with open(os.path.join(ROOT, "README.md")) as handle:
        text = handle.read()
    found = re.search(r"```python\n(def cell__grad\(w, x, h\):\n.*?)```", text, re.S)
    assert found, "README lost its compiled-form example"
    return found.group(1)


def test_readme_shows_the_compiled_form(tmp_path):
    path = tmp_path / "cell.py"
    path.write_text(CELL)
    spec = importlib.util.spec_from_file_location("cell", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    g = srcgrad.grad(module.cell)
    v = np.linspace(0.1, 0.9, 5)
    g(v, v * 2, v * 3)
    source = g.compiled_source
    assert readme_block() == source[source.index("def cell__grad"):]
