"""The long fuzzing campaign: many random programs, each run in an isolated worker.

    python -m tests.fuzz.campaign --programs 10000 --jit-fraction 0.05 --seed 0 --out /tmp/fuzz

(from the repository root). Program k is drawn from `random.Random(f"{seed}:{k}")`,
so any program can be drawn again alone (`--only k`); a fraction of them
(drawn from the same seed) run with `jit=True`. Programs run in `--workers`
subprocesses (`python -m tests.fuzz.campaign --worker`) that are restarted
after `--restart-every` programs; a program that runs longer than `--timeout`
seconds is a `crash: timeout`, one that kills its worker (a segfault) a
`crash: worker died`. The generated code and numba's cache go to a fresh
temporary `SRCGRAD_CACHE_DIR`.

Printed and written to `<out>/summary.json`: counts per outcome, clear errors
and crashes grouped by message (names, numbers and paths replaced), numba
fallbacks; every failing program is written to `<out>/<outcome>_NNNN.py`
with its numbers in comments and a `__main__` block that reproduces it, and
the first program of each kind of numba fallback to `<out>/fallback_NNNN.py`.
"""
from __future__ import annotations

import argparse
import atexit
import collections
import json
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from . import checkpointed
from .programs import random_program

FAILING = ("wrong_value", "wrong_gradient", "crash")


def draw(seed, k, jit_fraction, checkpoint=False):
    if checkpoint:  # its loops marked srcgrad.checkpointed (checkpointed.py)
        program = checkpointed.draw(seed, k)
    else:
        program = random_program(random.Random(f"{seed}:{k}"))
    jit = random.Random(f"{seed}:{k}:jit").random() < jit_fraction
    return program, jit


def encode(a):
    return {"array": a.tolist()} if isinstance(a, np.ndarray) else a


def decode(a):
    return np.array(a["array"], dtype=float) if isinstance(a, dict) else a


def normalize(message: str) -> str:
    """A message with what varies between programs (paths, names, numbers, code) replaced."""
    m = re.sub(r"[\w./-]+\.py(:\d+)?", "FILE", message)
    m = re.sub(r"`[^`]*`", "`...`", m)
    m = re.sub(r"'[^'\s]*'", "'...'", m)
    m = re.sub(r"\b_[A-Za-z]\w*", "_NAME", m)  # srcgrad's internal names
    m = re.sub(r"\b(?:[svmw]\d+|lst\d+|[xyzpqtun]\d*|[ijk]|it\d*|h\d+)(?:__\w+)?\b", "NAME", m)
    m = re.sub(r"\b\d+(\.\d+)?(e-?\d+)?\b", "N", m)
    return m


# ---------------------------------------------------------------- the worker

def worker_main():
    """Read one JSON job per line from stdin, answer one JSON result per line."""
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything printed by the code under test goes to the log, not the protocol
    from .oracle import run
    if os.environ.get("FUZZ_OUTLINE_SITES"):  # --outline-sites: call helpers through f__vjp
        import srcgrad.frontend.calls
        srcgrad.frontend.calls.OUTLINE_SITES = int(os.environ["FUZZ_OUTLINE_SITES"])
    for line in sys.stdin:
        job = json.loads(line)
        try:
            given = (job["source"], job["fname"], [decode(a) for a in job["args"]], job["wrt"], job["jit"])
            r = checkpointed.run(*given, plain=job["plain"]) if "plain" in job else run(*given)
            out = {"outcome": r.outcome, "message": r.message, "details": r.details, "notes": r.notes}
        except BaseException as exc:  # the oracle itself failed: report it as a crash
            out = {"outcome": "crash", "message": f"oracle: {type(exc).__name__}: {exc}"[:300],
                   "details": "", "notes": []}
        proto.write(json.dumps(out) + "\n")
        proto.flush()


class Worker:
    def __init__(self, env, log):
        self.env, self.log, self.proc, self.done = env, log, None, 0

    def start(self):
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.fuzz.campaign", "--worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     env=self.env, text=True, bufsize=1)
        self.done = 0

    def stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def run(self, job, timeout, restart_every):
        if self.proc is None or self.done >= restart_every:
            self.stop()
            self.start()
        self.done += 1
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            line = self.proc.stdout.readline() if ready else None
        except (BrokenPipeError, OSError):
            line = ""
        if line is None:
            self.stop()
            return {"outcome": "crash", "message": f"timeout (> {timeout:g} s)", "details": "", "notes": []}
        if not line:
            code = self.proc.wait()
            self.proc = None
            how = f"signal {-code}" if code < 0 else f"exit code {code}"
            return {"outcome": "crash", "message": f"worker died ({how})", "details": "", "notes": []}
        return json.loads(line)


# ---------------------------------------------------------------- the driver

def write_failure(out_dir, serial, k, seed, program, jit, result):
    path = os.path.join(out_dir, f"{result['outcome']}_{serial:04d}.py")
    head = [f"# srcgrad fuzz campaign: seed {seed}, program {k} (--only {k}), jit={jit}",
            f"# outcome: {result['outcome']}", f"# message: {result['message']}"]
    head += ["# " + line for line in result["details"].splitlines()[-60:]]
    call = f"{program.fname}({program.args_source()})"
    tail = ["", "", "", 'if __name__ == "__main__":', "    import srcgrad",
            f"    print('numpy  ', {call})",
            f"    print('srcgrad', srcgrad.value_and_grad({program.fname}, wrt={program.wrt!r}, "
            f"jit={jit})({program.args_source()}))"]
    with open(path, "w") as fh:
        fh.write("\n".join(head) + "\n" + program.source + "\n".join(tail) + "\n")
    return path


def campaign(args):
    os.makedirs(args.out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="srcgrad-fuzz-run-")  # workers' files and cache
    atexit.register(shutil.rmtree, scratch, True)
    env = dict(os.environ, SRCGRAD_CACHE_DIR=os.path.join(scratch, "cache"), TMPDIR=scratch,
               PYTHONPATH=os.pathsep.join([os.getcwd()] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    if args.outline_sites is not None:
        env["FUZZ_OUTLINE_SITES"] = str(args.outline_sites)
    ks = [args.only] if args.only is not None else list(range(args.start, args.start + args.programs))
    jobs = iter(ks)
    lock = threading.Lock()
    counts, by_jit = collections.Counter(), collections.Counter()
    clear, crashes, fallbacks, failures = collections.Counter(), collections.Counter(), collections.Counter(), []
    examples, serial, fallback_files = {}, collections.Counter(), {}
    forms = collections.Counter()  # compiled forms: ran, or why not; outlined calls
    start = time.time()
    log = open(os.path.join(args.out, "workers.log"), "w")

    def loop(worker):
        while True:
            with lock:
                k = next(jobs, None)
            if k is None:
                worker.stop()
                return
            program, jit = draw(args.seed, k, args.jit_fraction, args.checkpoint)
            if args.jit is not None:
                jit = args.jit
            job = {"source": program.source, "fname": program.fname,
                   "args": [encode(a) for a in program.args], "wrt": list(program.wrt), "jit": jit}
            if args.checkpoint:
                job["plain"] = program.plain
            r = worker.run(job, args.timeout, args.restart_every)
            with lock:
                counts[r["outcome"]] += 1
                by_jit[(jit, r["outcome"])] += 1
                key = normalize(r["message"])
                if r["outcome"] in ("clear_error", "refused", "unmarked_fails"):  # --checkpoint's
                    clear[key if r["outcome"] == "clear_error" else f"{r['outcome']}: {key}"] += 1
                    examples.setdefault((r["outcome"], key), k)
                if r["outcome"] == "crash":
                    crashes[key] += 1
                for note in r["notes"]:
                    if note.startswith(("form:", "outlined:")):
                        forms[normalize(note)[:120]] += 1
                    if note.startswith("fallback"):
                        fallbacks[normalize(note)] += 1
                        if normalize(note) not in fallback_files:  # one reproducer per kind
                            serial["fallback"] += 1
                            fallback_files[normalize(note)] = write_failure(
                                args.out, serial["fallback"], k, args.seed, program, jit,
                                dict(r, outcome="fallback", message=note))
                if r["outcome"] in FAILING:
                    serial[r["outcome"]] += 1
                    path = write_failure(args.out, serial[r["outcome"]], k, args.seed, program, jit, r)
                    failures.append({"program": k, "jit": jit, "outcome": r["outcome"],
                                     "message": r["message"], "file": path})
                n = sum(counts.values())
                if n % args.progress == 0 or args.only is not None:
                    print(f"[{n}/{len(ks)} {time.time() - start:.0f}s] {dict(counts)}", flush=True)

    threads = [threading.Thread(target=loop, args=(Worker(env, log),)) for _ in range(args.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    summary = {"seed": args.seed, "programs": len(ks), "seconds": round(time.time() - start, 1),
               "outcomes": dict(counts),
               "jit": {str(j): {o: c for (jj, o), c in by_jit.items() if jj == j} for j in (False, True)},
               "clear_errors": dict(clear.most_common()), "crashes": dict(crashes.most_common()),
               "numba_fallbacks": dict(fallbacks.most_common()), "fallback_files": fallback_files,
               "compiled_forms": dict(forms.most_common()),
               "failures": failures,
               "clear_error_examples": {m: k for (_, m), k in examples.items()}}
    with open(os.path.join(args.out, "summary.json"), "w") as fh:
        json.dump(summary, fh, indent=1)
    print_summary(summary)
    return summary


def print_summary(s):
    print(f"\n{s['programs']} programs in {s['seconds']} s")
    for name in ("outcomes",):
        print("outcomes:", ", ".join(f"{o} {c}" for o, c in sorted(s[name].items(), key=lambda x: -x[1])))
    print("by jit:", json.dumps(s["jit"]))
    for title, key in (("clear errors", "clear_errors"), ("crashes", "crashes"),
                       ("numba fallbacks (jit=True)", "numba_fallbacks"),
                       ("compiled forms (jit=True); outlined calls (all programs)", "compiled_forms")):
        if s.get(key):
            print(f"{title}:")
            for m, c in s[key].items():
                print(f"  {c:5d}  {m}")
    if s["failures"]:
        print("failures:")
        for f in s["failures"]:
            print(f"  {f['file']}: {f['outcome']}: {f['message']}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--programs", type=int, default=1000)
    p.add_argument("--start", type=int, default=0, help="first program number")
    p.add_argument("--only", type=int, default=None, help="run program number ONLY alone")
    p.add_argument("--jit-fraction", type=float, default=0.05)
    p.add_argument("--jit", type=lambda s: s.lower() in ("1", "true", "yes"), default=None,
                   help="force jit on or off for every program")
    p.add_argument("--seed", default="0")
    p.add_argument("--out", default="/tmp/fuzz")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--restart-every", type=int, default=200)
    p.add_argument("--progress", type=int, default=100)
    p.add_argument("--checkpoint", action="store_true",
                   help="mark the top-level loops srcgrad.checkpointed (tests/fuzz/checkpointed.py)")
    p.add_argument("--outline-sites", type=int, default=None,
                   help="call a helper through its own f__vjp from this many call sites on "
                        "(srcgrad.frontend.calls.OUTLINE_SITES; 1: every helper that can be)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker_main()
    summary = campaign(args)
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
