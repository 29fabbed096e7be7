"""Start-up figures: interpreter baseline, ``wolli --version``, ``import wolli, wolli.ai``.

Run as a script (pytest ignores ``tests/perf``)::

    python tests/perf/bench_startup.py [--runs 15] [--importtime]

Prints medians over N child processes: wall time, CPU (user+sys of the child, from
``os.wait4``, so a busy machine inflates wall time more than CPU) and peak RSS. Then, for a
few entry modules, which heavy third-party packages each import pulls in: the headless
path must not load Textual or pygments, and ``import wolli.ai`` must not load httpx.
``--importtime`` adds the slowest modules of ``import wolli.ai`` and of the print-mode
import chain according to ``python -X importtime``. Never a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYCACHE = os.path.join(tempfile.gettempdir(), "wolli-perf-pycache")
HEAVY = ("textual", "rich", "pygments", "httpx", "httpcore", "anyio", "h11", "ssl", "pydantic", "pydantic_core")
ENTRY_MODULES = (
    "wolli",
    "wolli.ai",
    "wolli.cli.main",
    "wolli.agent.agent",
    "wolli.session.manager",
    "wolli.runtime.host.agent_host",
    "wolli.modes.headless.print_mode",
    "wolli.ai.providers.openai_completions",
)


@dataclass
class Sample:
    wall: float
    cpu: float
    rss_mib: float
    returncode: int
    stdout: str
    stderr: str


def run_child(cmd: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None) -> Sample:
    """Run ``cmd`` to completion; per-child CPU and peak RSS come from ``wait4``."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Sample(
            wall=wall,
            cpu=usage.ru_utime + usage.ru_stime,
            rss_mib=usage.ru_maxrss / 1024,  # KiB on Linux
            returncode=proc.returncode,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
        )


def child_env(pyc: bool = True, **extra: str) -> dict[str, str]:
    """The environment for measured children: the repo importable, bytecode cached.

    This sandbox sets PYTHONDONTWRITEBYTECODE, so wolli's modules would be recompiled on every
    start; an installed wolli has .pyc files. The cache goes to a temporary prefix so the
    working tree stays clean. ``pyc=False`` measures the sandbox default (wolli uncached).
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["PYTHONPATH"] = str(ROOT)
    if pyc:
        env["PYTHONPYCACHEPREFIX"] = PYCACHE
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # site-packages keep their .pyc; wolli compiles each time
    env.update(extra)
    return env


def load_note() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} on {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}"


def measure(cmd: list[str], runs: int, **kwargs: object) -> list[Sample]:
    run_child(cmd, **kwargs)  # warm the page cache and .pyc files
    samples = [run_child(cmd, **kwargs) for _ in range(runs)]
    bad = [s for s in samples if s.returncode != 0]
    if bad:
        raise SystemExit(f"{' '.join(cmd)} failed ({bad[0].returncode}): {bad[0].stderr.strip()[-500:]}")
    return samples


def table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join("-" * w for w in widths)

    def fmt(row: tuple[str, ...]) -> str:
        cells = zip(row, widths, strict=True)
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(cells))

    return "\n".join([fmt(header), line, *map(fmt, rows)])


def med(values: list[float]) -> float:
    return statistics.median(values)


def timing_row(label: str, samples: list[Sample]) -> tuple[str, ...]:
    walls = [s.wall for s in samples]
    return (
        label,
        f"{med(walls) * 1000:.0f}",
        f"{min(walls) * 1000:.0f}",
        f"{med([s.cpu for s in samples]) * 1000:.0f}",
        f"{med([s.rss_mib for s in samples]):.1f}",
    )


_PROBE = """\
import sys, time
before = set(sys.modules)
t = time.perf_counter()
import {module}
dt = time.perf_counter() - t
new = set(sys.modules) - before
import json
print(json.dumps({{"ms": dt * 1000, "count": len(new), "new": sorted(new)}}))
"""


def probe_imports(python: str, runs: int) -> list[tuple[str, ...]]:
    rows = []
    env = child_env()
    for module in ENTRY_MODULES:
        results = []
        for _ in range(max(3, runs // 3)):
            sample = run_child([python, "-c", _PROBE.format(module=module)], env=env)
            if sample.returncode != 0:
                rows.append((module, "error", "", sample.stderr.strip().splitlines()[-1][:60]))
                break
            results.append(json.loads(sample.stdout))
        else:
            loaded = {name.partition(".")[0] for name in results[0]["new"]}
            heavy = [name for name in HEAVY if name in loaded]
            rows.append((module, f"{med([r['ms'] for r in results]):.1f}", str(results[0]["count"]),
                         ", ".join(heavy) or "-"))
    return rows


def importtime(python: str, code: str, top: int = 12) -> str:
    """The ``top`` slowest modules (cumulative µs) of ``code`` per ``-X importtime``."""
    env = child_env()
    sample = run_child([python, "-X", "importtime", "-c", code], env=env)
    entries = []
    for line in sample.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        head, cumulative, name = line.split("|", 2)
        entries.append((int(cumulative), int(head.split(":", 1)[1]), name.rstrip()))
    entries.sort(reverse=True)
    rows = [(name, f"{cum / 1000:.1f}", f"{own / 1000:.1f}") for cum, own, name in entries[:top]]
    return table(rows, ("module", "cumul ms", "self ms"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--importtime", action="store_true", help="also list the slowest imports")
    args = parser.parse_args()

    python = sys.executable
    script = Path(python).parent / "wolli"
    # pyenv puts its shims (bash scripts that pick a Python version) first on the user's PATH;
    # inside a pyenv-run process the real bin folder comes first, so look for them directly.
    shims = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "shims"
    shim_python, shim_wolli = shims / "python", shims / "wolli"
    env = child_env()
    chain = "import wolli.modes.headless.print_mode, wolli.runtime.live.live_session, wolli.ai.providers.openai_completions"

    rows = []
    if shim_python.exists():
        rows.append(timing_row("python -c pass (pyenv shim)", measure([str(shim_python), "-c", "pass"], args.runs,
                                                                      env=env)))
    rows += [
        timing_row("python -c pass (interpreter)", measure([python, "-c", "pass"], args.runs, env=env)),
        timing_row("python -I -S -c pass (no site hooks)", measure([python, "-I", "-S", "-c", "pass"], args.runs)),
    ]
    if shim_wolli.exists():
        rows.append(timing_row("wolli --version (pyenv shim)", measure([str(shim_wolli), "--version"], args.runs,
                                                                      env=env)))
    if script.exists():
        rows.append(timing_row("wolli --version (script)", measure([str(script), "--version"], args.runs, env=env)))
    rows.append(timing_row("python -m wolli --version", measure([python, "-m", "wolli", "--version"], args.runs,
                                                                env=env)))
    rows.append(timing_row('python -c "import wolli, wolli.ai"',
                           measure([python, "-c", "import wolli, wolli.ai"], args.runs, env=env)))
    rows.append(timing_row("import print-mode chain (*)", measure([python, "-c", chain], args.runs, env=env)))
    rows.append(timing_row("the same, wolli without .pyc", measure([python, "-c", chain], args.runs,
                                                                   env=child_env(pyc=False))))

    print(f"Start-up, {args.runs} runs each (medians; target: wolli --version <= 100 ms); {load_note()}\n")
    print(table(rows, ("command", "wall ms", "min ms", "cpu ms", "rss MiB")))
    print(f"(*) {chain}")
    print("\nWhat each import pulls in (import time measured inside the child, after start-up)\n")
    print(table(probe_imports(python, args.runs), ("import", "ms", "modules", "heavy packages loaded")))
    if args.importtime:
        print("\nSlowest modules of `import wolli.ai` (python -X importtime)\n")
        print(importtime(python, "import wolli.ai"))
        print("\nSlowest modules of the print-mode import chain\n")
        print(importtime(python, "import wolli.modes.headless.print_mode, wolli.runtime.live.live_session, "
                                 "wolli.ai.providers.openai_completions"))


if __name__ == "__main__":
    main()
