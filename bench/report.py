"""Tables and plots from a results JSON file.

    python -m bench.report bench/results/quick.json

writes `<mode>.md` and one plot per problem beside the JSON (`<problem>.png` for
the full suite, `<problem>-quick.png` for --quick) and
prints the summary table. `bench/run.py` calls `write_all` after a run.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .problems import NAMES, TOOLS

STATUS_TEXT = {"skipped": "too slow", "unavailable": "not installed", "timeout": "timeout",
               "error": "error", "invalid": "INVALID"}


def fmt_time(seconds):
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def fmt_ratio(ratio):
    return "-" if ratio is None else f"{ratio:.2g}x" if ratio < 10 else f"{ratio:.0f}x"


def _rows_by(results):
    table = {}
    for row in results["rows"]:
        table[(row["problem"], row["label"], row["tool"])] = row
    return table


def _sizes(results, problem):
    seen, out = set(), []
    for row in results["rows"]:
        if row["problem"] == problem and row["label"] not in seen:
            seen.add(row["label"])
            out.append((row["x"], row["label"]))
    return [label for _, label in sorted(out, key=lambda item: item[0])]


def _tools(results):
    present = {row["tool"] for row in results["rows"]}
    return [t for t in TOOLS if t in present]


def _problems(results):
    present = {row["problem"] for row in results["rows"]}
    return [p for p in NAMES if p in present]


def cell(row):
    """'gradient time (gradient/primal)' or why there is none."""
    if row is None:
        return "-"
    if row["status"] in ("ok", "invalid") and row.get("gradient_s") is not None:
        text = f"{fmt_time(row['gradient_s'])} ({fmt_ratio(row.get('ratio'))})"
        return text + (" INVALID" if row["status"] == "invalid" else "")
    return STATUS_TEXT.get(row["status"], row["status"])


def summary_table(results):
    tools = _tools(results)
    by = _rows_by(results)
    lines = ["| problem | size | " + " | ".join(tools) + " |",
             "|---|---|" + "---|" * len(tools)]
    for problem in _problems(results):
        for label in _sizes(results, problem):
            cells = [cell(by.get((problem, label, t))) for t in tools]
            lines.append(f"| {problem} | {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def srcgrad_table(results):
    by = _rows_by(results)
    lines = ["| problem | gradient / primal (per size) | first call, cold cache | "
             "first call, warm cache (2nd process) | import srcgrad (not included) |",
             "|---|---|---|---|---|"]
    for problem in _problems(results):
        rows = [by.get((problem, label, "srcgrad")) for label in _sizes(results, problem)]
        rows = [r for r in rows if r is not None]
        if not rows:
            continue
        ratios = ", ".join(fmt_ratio(r.get("ratio")) if r.get("ratio") else cell(r) for r in rows)
        first = rows[0].get("first_call_s")
        warm = results.get("warm", {}).get(problem, {})
        warm_text = fmt_time(warm.get("warm_first_call_s")) if "warm_first_call_s" in warm \
            else warm.get("error", "-")
        lines.append(f"| {problem} | {ratios} | {fmt_time(first)} | {warm_text} | "
                     f"{fmt_time(warm.get('import_s'))} |")
    return "\n".join(lines)


def detail_table(results):
    lines = ["| problem | size | tool | primal | gradient | grad/primal | first call | "
             "peak MiB | max error | status | notes |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    by = _rows_by(results)
    for problem in _problems(results):
        for label in _sizes(results, problem):
            for tool in _tools(results):
                r = by.get((problem, label, tool))
                if r is None:
                    continue
                peak = "-" if r.get("peak_mib") is None else f"{r['peak_mib']:.1f}"
                err = "-" if r.get("max_error") is None else f"{r['max_error']:.1e}"
                notes = "; ".join(r.get("notes", [])).replace("|", "/")
                lines.append(
                    f"| {problem} | {label} | {tool} | {fmt_time(r.get('primal_s'))} | "
                    f"{fmt_time(r.get('gradient_s'))} | {fmt_ratio(r.get('ratio'))} | "
                    f"{fmt_time(r.get('first_call_s'))} | {peak} | {err} | {r['status']} | "
                    f"{notes} |")
    return "\n".join(lines)


def references_table(results):
    lines = ["| problem | size | reference | entries checked |", "|---|---|---|---|"]
    for problem, refs in results.get("references", {}).items():
        for ref in refs:
            lines.append(f"| {problem} | {ref['label']} | {ref['kind']} | "
                         f"{ref['entries_checked']} of {ref['entries']} |")
    return "\n".join(lines)


def header(results):
    v = results["versions"]
    peers = ", ".join(f"{k} {v[k]}" for k in ["numba", "jax", "torch", "autograd"] if v.get(k))
    return (f"Mode `{results['mode']}`, {results['date']}, {results['cpu']} "
            f"({results['cores']} cores, each tool on one thread"
            + (f", pinned to CPU {results['pinned_cpu']}" if results.get("pinned_cpu") is not None
               else "") + f"); Python {v['python']}, {peers}. "
            f"The run took {results.get('seconds', 0):.0f} s.")


def markdown(results):
    return "\n\n".join([
        f"# Benchmark results ({results['mode']})",
        header(results),
        "## Gradient time (gradient / primal), medians",
        "Each tool's ratio is against its own primal: srcgrad's against `numba.njit` of the "
        "same function, JAX's against its jitted primal, PyTorch's and autograd's against "
        "their plain forward evaluation. For `ba` the gradient is the whole sparse Jacobian.",
        summary_table(results),
        "## srcgrad: compile and cache",
        "First call = building the gradient (source transformation) + numba compilation + "
        "the call, at the problem's first size, with an empty cache. Warm cache = the same "
        "in a new process once the cache is filled (srcgrad's import is counted "
        "separately).",
        srcgrad_table(results),
        "## Every measurement",
        "Peak MiB = growth of the resident set during one gradient call. First call = the "
        "first gradient call at that size in the worker process, including building and "
        "compiling (JAX recompiles per shape; srcgrad compiles once per problem).",
        detail_table(results),
        "## References",
        "Each gradient is compared with this reference using GradBench's metric "
        "|x - y| / max(1, |x| + |y|) <= 1e-4.",
        references_table(results),
    ]) + "\n"


def plot(results, problem, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .problems import load
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    markers = {"srcgrad": "o", "jax": "s", "torch": "^", "autograd": "D"}
    for tool in _tools(results):
        rows = [r for r in results["rows"] if r["problem"] == problem and r["tool"] == tool
                and r.get("gradient_s") is not None]
        rows.sort(key=lambda r: r["x"])
        if rows:
            ax.plot([r["x"] for r in rows], [r["gradient_s"] for r in rows],
                    marker=markers.get(tool, "o"), label=tool)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(load(problem).XLABEL)
    ax.set_ylabel("gradient time (s, median)")
    ax.set_title(f"{problem}: gradient time ({results['mode']} run)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_all(results, out: Path) -> str:
    out = Path(out)
    (out / f"{results['mode']}.md").write_text(markdown(results))
    try:
        suffix = "" if results["mode"] == "full" else f"-{results['mode']}"
        for problem in _problems(results):
            plot(results, problem, out / f"{problem}{suffix}.png")
    except ImportError as exc:
        print(f"no plots: {exc}", file=sys.stderr)
    return summary_table(results) + "\n\n" + srcgrad_table(results)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.exit("usage: python -m bench.report bench/results/<mode>.json")
    path = Path(argv[0])
    print(write_all(json.loads(path.read_text()), path.parent))


if __name__ == "__main__":
    main()
