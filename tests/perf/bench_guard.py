"""The regression guard: the headline figures of the terminal harness beside the floor.

Run as a script (pytest ignores ``tests/perf``)::

    python tests/perf/bench_guard.py [--quick] [--repeat 3] [--scenarios "print tui ..."]

It runs ``tests/perf/terminal/run_peers.sh wolli floor`` (Wolli from this virtual environment,
its bytecode cached as an installed Wolli has it, and the bare stdlib-Python floor agent)
against the scripted loopback model, then prints one row per figure: Wolli, the floor, the
ratio of the two and the goal from docs/performance.md, plus the 15 slowest imports of the
print-mode chain (``python -X importtime``). ``--quick`` (what CI runs) measures each
scenario once after a warm-up. It never fails on a figure: it prints them so each commit's
effect is visible in its log. The scenarios that need a terminal are skipped without tmux.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench_startup import PYCACHE, child_env, importtime

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "tests" / "perf" / "terminal"
TERMINAL_SCENARIOS = ("tui", "tui-paced", "resume")
ALL_SCENARIOS = ("print", "tui", "tui-paced", "resume", "resume-print")


@dataclass(frozen=True)
class Figure:
    label: str
    scenario: str
    key: str  # in the harness's per-scenario summary
    unit: str
    goal: float | None  # an absolute goal, in the figure's unit
    floor_factor: float | None = None  # a goal relative to the floor


FIGURES = (
    Figure("print round trip, 200 tokens: wall", "print", "wall_s", "s", 0.20, 3.0),
    Figure("print round trip: peak RSS", "print", "maxrss_mb", "MiB", 40.0),
    Figure("TUI ready (session up, footer drawn)", "tui", "ready_s", "s", 0.25),
    Figure("TUI: CPU until ready", "tui", "ready_cpu_s", "s", None),
    Figure("TUI: last of 500 tokens on screen", "tui", "reply_s", "s", None),
    Figure("CPU while streaming 5 s at 100 tokens/s", "tui-paced", "reply_cpu_s", "s", 0.40),
    Figure("TUI peak RSS", "tui", "peak_rss_mb", "MiB", 55.0),
    Figure("resume 2,000 pairs to last message", "resume", "ready_s", "s", 0.40),
    Figure("resume 2,000 pairs: CPU until then", "resume", "ready_cpu_s", "s", None),
    Figure("resume 2,000 pairs: peak RSS", "resume", "peak_rss_mb", "MiB", 70.0),
    Figure("--continue -p on that session", "resume-print", "wall_s", "s", 0.25),
)


def run_harness(scenarios: list[str], repeat: int, warmup: int, out: Path) -> Path:
    """Run the harness for wolli and the floor; returns the raw JSON-lines file."""
    raw = out / "raw.jsonl"
    env = child_env()
    env.pop("PYTHONPATH", None)  # the harness runs the installed console script
    env.update(
        WOLLI_BIN=str(Path(sys.executable).parent / "wolli"),
        REPEAT=str(repeat),
        WARMUP=str(warmup),
        SCENARIOS=" ".join(scenarios),
        RESULTS=str(out / "results.md"),
        RAW=str(raw),
        BENCH_RUNS_DIR=str(out / "runs"),
    )
    # the harness's Python children (the floor agent, fakellm) and Wolli share the cache prefix
    env["PYTHONPYCACHEPREFIX"] = PYCACHE
    subprocess.run(["bash", str(HARNESS / "run_peers.sh"), "wolli", "floor"], env=env, cwd=HARNESS,
                   stdin=subprocess.DEVNULL, check=False)
    return raw


def load(raw: Path) -> dict[tuple[str, str], dict[str, float]]:
    """(agent, scenario) → {figure: median} from the harness's raw file (last result wins)."""
    found: dict[tuple[str, str], dict[str, float]] = {}
    if not raw.exists():
        return found
    for line in raw.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        summary = record.get("summary") or {}
        medians = {k: v["median"] for k, v in summary.items() if isinstance(v, dict) and "median" in v}
        found[(record.get("agent", ""), record.get("label") or record.get("scenario", ""))] = medians
    return found


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value:.0f} {unit}" if unit == "MiB" else f"{value:.3f} {unit}"


def report(results: dict[tuple[str, str], dict[str, float]]) -> str:
    header = ("figure", "wolli", "floor", "wolli/floor", "goal", "met")
    rows = []
    for fig in FIGURES:
        wolli = results.get(("wolli", fig.scenario), {}).get(fig.key)
        floor_scenario = "print" if fig.scenario == "resume-print" else fig.scenario
        floor = results.get(("floor", floor_scenario), {}).get(fig.key)
        goal = fig.goal
        if fig.floor_factor is not None and floor is not None:
            goal = min(goal, fig.floor_factor * floor) if goal is not None else fig.floor_factor * floor
        ratio = f"{wolli / floor:.1f}x" if wolli is not None and floor else "-"
        met = "-" if wolli is None or goal is None else ("yes" if wolli <= goal else "no")
        rows.append((fig.label, fmt(wolli, fig.unit), fmt(floor, fig.unit), ratio, fmt(goal, fig.unit), met))
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
             for r in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one measured run per scenario (CI)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scenarios", default=" ".join(ALL_SCENARIOS))
    parser.add_argument("--keep", help="folder for the harness's raw results (default: a temporary one)")
    args = parser.parse_args()
    repeat, warmup = (1, 1) if args.quick else (args.repeat, 1)
    scenarios = args.scenarios.split()
    if shutil.which("tmux") is None:
        print("bench_guard: no tmux, terminal scenarios skipped")
        scenarios = [s for s in scenarios if s not in TERMINAL_SCENARIOS]
    one, five, _ = os.getloadavg()
    print(f"bench_guard: {time.strftime('%Y-%m-%d %H:%M')}, load average {one:.1f} / {five:.1f} on "
          f"{os.cpu_count()} CPUs; {repeat} measured run(s) per scenario", flush=True)
    with tempfile.TemporaryDirectory(prefix="wolli-guard-") as tmp:
        out = Path(args.keep) if args.keep else Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        results = load(run_harness(scenarios, repeat, warmup, out))
    print()
    print("Medians; goals from docs/performance.md (never a pass/fail check)")
    print(report(results))
    print()
    print("Slowest imports of the print-mode chain (python -X importtime)")
    print(importtime(sys.executable, "import wolli.modes.headless.print_mode", top=15))
    return 0


if __name__ == "__main__":
    sys.exit(main())
