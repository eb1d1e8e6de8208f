"""Command line: `python -m srcgrad show path/to/file.py:function [--wrt 0,1]`, `... rules`,
`python -m srcgrad tape path/to/file.py:function --args "np.ones(100), 10"` (the tape report)."""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np

from .api.gradient import GradFunction, show
from .errors import SrcgradError


def _load_function(target: str):
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise SystemExit(f"srcgrad: expected FILE.py:FUNCTION, got {target!r}")
    file = Path(path)
    if not file.is_file():
        raise SystemExit(f"srcgrad: no such file: {path}")
    sys.path.insert(0, str(file.resolve().parent))
    spec = importlib.util.spec_from_file_location(file.stem, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[file.stem] = module
    spec.loader.exec_module(module)
    func = module
    for part in name.split("."):
        if not hasattr(func, part):
            raise SystemExit(f"srcgrad: {path} has no function {name!r}")
        func = getattr(func, part)
    return getattr(func, "__wrapped__", func)


def _parse_wrt(text: str):
    items = [int(p) if p.strip().lstrip("-").isdigit() else p.strip() for p in text.split(",")]
    return items[0] if len(items) == 1 else tuple(items)


def _tape(func, args):
    """The tape report of `func`'s gradient at the arguments `--args` spells."""
    namespace = {"np": np, **sys.modules[func.__module__].__dict__}
    try:
        values = eval(f"({args.args},)", namespace) if args.args.strip() else ()
    except Exception as exc:
        raise SystemExit(f"srcgrad: --args {args.args!r} did not evaluate: "
                         f"{type(exc).__name__}: {exc}")
    gradient = GradFunction(func, _parse_wrt(args.wrt), jit=False)  # the same report as jit
    try:
        return gradient.tape_report(*values)
    except TypeError as exc:
        if values:
            raise
        raise SystemExit(f"srcgrad: {exc}; give the arguments with --args, for example "
                         "--args \"np.ones(100), 10\"")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m srcgrad",
                                     description="Show the code srcgrad generates.")
    commands = parser.add_subparsers(dest="command", required=True)
    show_cmd = commands.add_parser("show", help="print the generated gradient source")
    show_cmd.add_argument("target", help="path/to/file.py:function")
    show_cmd.add_argument("--wrt", default="0",
                          help="positions or names to differentiate, e.g. 0,1 or x,y (default 0)")
    show_cmd.add_argument("--mode", default="reverse", help="reverse (default)")
    commands.add_parser("rules", help="print the table of supported functions (Markdown)")
    tape_cmd = commands.add_parser("tape", help="print what the gradient records, per line")
    tape_cmd.add_argument("target", help="path/to/file.py:function")
    tape_cmd.add_argument("--args", default="", help="the arguments, a Python expression "
                          "evaluated in the file's namespace, e.g. \"np.ones(1000), 100\"")
    tape_cmd.add_argument("--wrt", default="0", help="as for show (default 0)")
    args = parser.parse_args(argv)
    if args.command == "rules":
        from .frontend.forms import forms_table
        from .rules import table
        print(table() + forms_table(), end="")
        return 0
    func = _load_function(args.target)
    try:
        if args.command == "tape":
            print(_tape(func, args))
            return 0
        show(func, wrt=_parse_wrt(args.wrt), mode=args.mode)
    except (SrcgradError, ValueError, TypeError) as exc:
        print(f"srcgrad: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `python -m srcgrad show f.py:g | head`: the reader left
        sys.stderr.close()
        sys.exit(0)
