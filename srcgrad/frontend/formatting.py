"""Part of comprehensions.py's lowering: f-strings and print(...) as runtime helper calls.

Guarantees: an f-string is `format_text(template, values...)` with the same
text (conversions and constant format specifications kept, braces escaped),
and `print(..., sep=, end=)` is `print_values(sep, end, values...)`; a computed
format specification or another print keyword raises SrcgradSyntaxError with
the user's line. Neither carries a gradient (runtime/effects.py).
"""
from __future__ import annotations

import gast

from ..syntax import call as _call, const as _const


class Formatting:
    """Methods of comprehensions._Lowering (which has expr, helper and fail)."""

    def fstring(self, node, pre):
        template, values = [], []
        for part in node.values:
            if isinstance(part, gast.Constant):
                template.append(str(part.value).replace("{", "{{").replace("}", "}}"))
                continue
            spec = part.format_spec
            if spec is not None and not all(isinstance(v, gast.Constant) for v in spec.values):
                self.fail(part, "a computed format specification in an f-string",
                          "write the specification out, e.g. {x:.3f}")
            conversion = {115: "!s", 114: "!r", 97: "!a"}.get(part.conversion, "")
            text = "".join(str(v.value) for v in spec.values) if spec is not None else ""
            template.append("{" + conversion + (":" + text if text else "") + "}")
            values.append(self.expr(part.value, pre))
        return _call(self.helper("format_text"), _const("".join(template)), *values)

    def printing(self, node, pre):
        options = {k.arg: self.expr(k.value, pre) for k in node.keywords}
        unknown = set(options) - {"sep", "end"}
        if unknown:
            self.fail(node, f"print(..., {sorted(unknown)[0]}=...)", "print to standard output")
        values = [self.expr(a, pre) for a in node.args]
        return _call(self.helper("print_values"), options.get("sep", _const(" ")),
                     options.get("end", _const("\n")), *values)
