"""Benchmark: memory of a resumed long session beside a new one.

Run: ``python tests/perf/bench_session_memory.py [--runs 3] [--pairs 8000] [--src DIR]``.

Each figure comes from a fresh child process that imports the runtime (as every Wolli
session does) and then either starts a new session or opens a saved one of ``--pairs``
pairs (``bench_session_resume.session_lines``: prompts, tool calls, 1-6 KB tool results)
and builds the context the next request would be sent. Printed per case, medians of
``--runs`` children: peak RSS (MiB, the high-water mark of the whole child), RSS after the
context is built, the Python heap the session holds (tracemalloc, MiB), and the resumed
session's peak as a multiple of the new one's (goal ≤ 2, docs/performance.md). Cases: the
session whole in the context, and compacted down to its last 10 % (a session this long has
been compacted: no model takes 16,000 messages), both as ``wolli --continue`` opens them.
``--src DIR`` imports wolli from DIR instead (``git archive <rev> wolli | tar -x -C DIR``)
to compare two versions. Not a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_session_resume import session_lines  # noqa: E402

CHILD = r"""
import gc, json, resource, sys, tracemalloc
import wolli.runtime.startup.start  # the runtime a session lives in
from wolli.session.manager import SessionManager
def current_rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20
path = sys.argv[1]
trace = sys.argv[2] == "trace"
if trace:
    tracemalloc.start()
if path == "new":
    manager = SessionManager.create("/home/me/project", sys.argv[3])
else:
    manager = SessionManager.open(path)
context = manager.build_session_context()
gc.collect()
held = tracemalloc.get_traced_memory()[0] / 2**20 if trace else 0.0
print(json.dumps({"peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "rss": current_rss(),
                  "held": held, "messages": len(context.messages)}))
"""


def run_child(target: str, src: str | None, trace: bool, scratch: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([p for p in (src, str(ROOT)) if p])
    out = subprocess.run([sys.executable, "-c", CHILD, target, "trace" if trace else "plain", scratch], env=env,
                         capture_output=True, text=True, check=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=8000)
    parser.add_argument("--src", action="append", default=[], help="tree to import wolli from (repeatable)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cases = [("new", "new")]
        for compacted in (False, True):
            path = Path(tmp) / f"s{args.pairs}{'c' if compacted else ''}.jsonl"
            path.write_text("\n".join(session_lines(args.pairs, compaction=compacted)) + "\n")
            label = f"resumed {args.pairs} pairs" + (", compacted" if compacted else "")
            cases.append((label, str(path)))
        print(f"medians of {args.runs} fresh processes; load average {os.getloadavg()[0]:.2f}")
        print(f"{'case':<30}{'tree':<16}{'MB':>6}{'msgs':>7}{'peak':>8}{'RSS':>8}{'held':>8}{'×new':>7}")
        print("  (peak / RSS: MiB, the child's high-water mark / after the context; held: Python heap MiB)")
        for src in args.src or [None]:
            name = "working tree" if src is None else Path(src).name
            new_peak = None
            for label, target in cases:
                plain = [run_child(target, src, False, tmp) for _ in range(args.runs)]
                traced = run_child(target, src, True, tmp)
                peak = statistics.median(r["peak"] for r in plain)
                rss = statistics.median(r["rss"] for r in plain)
                new_peak = peak if new_peak is None else new_peak
                size = Path(target).stat().st_size / 1e6 if target != "new" else 0.0
                print(f"{label:<30}{name:<16}{size:6.1f}{plain[0]['messages']:7d}{peak:8.1f}{rss:8.1f}"
                      f"{traced['held']:8.1f}{peak / new_peak:7.2f}")


if __name__ == "__main__":
    main()
