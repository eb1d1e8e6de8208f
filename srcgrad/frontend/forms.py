"""The Python forms srcgrad differentiates and the ones it refuses, as a Markdown section
generated from check.py's own lists (docs/supported.md; `python -m srcgrad rules`), so the
documentation cannot drift from what check accepts."""
from __future__ import annotations

import gast

from . import check

_SHOWN = {  # how each accepted node type reads in the documentation
    "Assign": "assignment (`a = b = v`, tuple unpacking, `y[i] = v`, `a[i], a[j] = a[j], a[i]`)",
    "AugAssign": "`x op= v`",
    "AnnAssign": "annotated assignment", "Return": "`return` (anywhere)", "Expr": "calls for effect",
    "Pass": "`pass`", "Assert": "`assert`", "For": "`for` over range, arrays, lists, enumerate, zip",
    "While": "`while`", "If": "`if`/`elif`/`else`", "Break": "`break`", "Continue": "`continue`",
    "IfExp": "`a if c else b`", "BoolOp": "`and`/`or`", "List": "list displays (as values too)",
    "ListComp": "list comprehensions", "GeneratorExp": "generator expressions in sum/max/min/list",
    "JoinedStr": "f-strings (printed, never differentiated)",
    "Try": "`try`/`except`/`finally` around code that is not differentiated (run as written; "
           "`raise` inside it)",
}


def forms_table() -> str:
    accepted = [t.__name__ for t in check._STATEMENTS + check._EXPRESSIONS]
    shown = [_SHOWN[n] for n in accepted if n in _SHOWN]
    shown.append("`def` and `name = lambda` at the top of the body (inlined where called; "
                 "`nonlocal` at their top)")
    shown.append("`*args`/`**kwargs` in the functions called (specialised to each call)")
    local = {"FunctionDef", "Lambda", "Nonlocal"}  # accepted at the top of the body only
    qualified = {"Raise": "raise statement (outside try)"}
    refused = sorted({qualified.get(name, words) for name, words in check._NAMES.items()
                      if name not in accepted and name not in local and hasattr(gast, name)})
    return "\n".join([
        "", "## Python forms", "",
        "Generated from `srcgrad/frontend/check.py`.", "",
        "| | forms |", "|---|---|",
        "| differentiated | " + ", ".join(shown) + " |",
        "| refused, with your file:line | " + ", ".join(refused) + " |", ""])
