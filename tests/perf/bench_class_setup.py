"""Benchmark: Textual's set-up of the widget classes a TUI start defines, Textual's own against
the kept one (wolli/modes/tui/dom_class_setup.py).

Run: ``python tests/perf/bench_class_setup.py [--runs 7]``. Prints medians; not a test.

Each run is a fresh interpreter that imports ``wolli.modes.tui`` (which installs the kept
set-up), puts Textual's own back for the ``textual`` rows, then imports the app's module
(``wolli.modes.tui.app``, the classes made before the first frame) with
``DOMNode.__init_subclass__`` timed: how many classes, and the CPU (``time.process_time``)
and wall time their set-up took. The two kinds of run alternate.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import json, sys, time
import wolli.modes.tui
from wolli.modes.tui import dom_class_setup
from textual.dom import DOMNode
if sys.argv[1] == "textual":
    dom_class_setup.uninstall()
elif not dom_class_setup.installed():
    raise SystemExit("the kept set-up is not installed for this Textual")
setup = DOMNode.__dict__["__init_subclass__"].__func__
spent = {"classes": 0, "cpu": 0.0, "wall": 0.0}
def timed(cls, *args, **kwargs):
    cpu, wall = time.process_time(), time.perf_counter()
    setup(cls, *args, **kwargs)
    spent["cpu"] += time.process_time() - cpu
    spent["wall"] += time.perf_counter() - wall
    spent["classes"] += 1
DOMNode.__init_subclass__ = classmethod(timed)
import wolli.modes.tui.app
print(json.dumps(spent))
"""


def one_run(kind: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPYCACHEPREFIX": os.path.join(os.environ.get("TMPDIR", "/tmp"), "wolli-perf-pycache")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([sys.executable, "-c", PROBE, kind], cwd=REPO, env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    one_run("kept")  # bytecode written once
    results: dict[str, list[dict[str, float]]] = {"textual": [], "kept": []}
    for _ in range(args.runs):
        for kind in results:
            results[kind].append(one_run(kind))
    print(f"load average {os.getloadavg()[0]:.2f}, {args.runs} runs each, medians")
    print(f"{'set-up':<10}{'classes':>9}{'cpu ms':>9}{'wall ms':>9}")
    for kind, runs in results.items():
        classes = int(statistics.median(run["classes"] for run in runs))
        cpu = statistics.median(run["cpu"] for run in runs) * 1000
        wall = statistics.median(run["wall"] for run in runs) * 1000
        print(f"{kind:<10}{classes:>9}{cpu:>9.2f}{wall:>9.2f}")


if __name__ == "__main__":
    main()
