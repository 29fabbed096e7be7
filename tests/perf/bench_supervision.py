"""What supervising tool processes costs (``wolli/tools/supervisor.py``).

Run as a script (pytest ignores ``tests/perf``)::

    python tests/perf/bench_supervision.py [--runs 300]

Prints medians for:

- the bash tool running ``echo hi`` in process, with supervision and with it stubbed out
  (interleaved A/B, so machine load hits both alike), and the watchdog's own CPU per command;
- the first supervised spawn of a fresh process: starting the watchdog (``posix_spawn``) and
  the first ``echo`` with and without supervision;
- the idle watchdog's memory (RSS and PSS);
- how long after ``kill -9`` of its owner a supervised tree is gone.

Never a pass/fail test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from wolli.tools import process, supervisor  # noqa: E402
from wolli.tools.bash import create_bash_tool  # noqa: E402
from wolli.tools.environment import create_host_environment  # noqa: E402


class _Unsupervised:
    """Stands in for a Supervision: the code path without the watchdog."""

    def env(self, base):
        return dict(base)

    def add(self, pid, *, group=True):
        pass

    def release(self):
        pass


def _cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    return int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])  # incl. children


def _memory_kb(pid: int) -> tuple[int, int]:
    values = {}
    with open(f"/proc/{pid}/smaps_rollup") as fh:
        for line in fh:
            key, _, rest = line.partition(":")
            if key in ("Rss", "Pss"):
                values[key] = int(rest.split()[0])
    return values.get("Rss", 0), values.get("Pss", 0)


async def per_command(runs: int) -> None:
    tool = create_bash_tool(create_host_environment(tempfile.gettempdir()))
    params = tool.validate({"command": "echo hi"})
    real = process.supervise
    stub = lambda: _Unsupervised()  # noqa: E731
    timings: dict[str, list[float]] = {"supervised": [], "unsupervised": []}
    for _ in range(20):  # warm up both paths (and start the watchdog)
        await tool.execute("w", params, None, None, None)
    watchdog = supervisor.watchdog_pid()
    ticks = _cpu_ticks(watchdog) if watchdog else 0
    for index in range(runs * 2):
        label = "supervised" if index % 2 == 0 else "unsupervised"
        process.supervise = real if label == "supervised" else stub  # type: ignore[assignment]
        start = time.perf_counter()
        await tool.execute("c", params, None, None, None)
        timings[label].append(time.perf_counter() - start)
    process.supervise = real  # type: ignore[assignment]
    sup, unsup = (statistics.median(timings[k]) * 1e3 for k in ("supervised", "unsupervised"))
    print(f"bash tool `echo hi`, median of {runs} each (interleaved):")
    print(f"  supervised    {sup:6.3f} ms")
    print(f"  unsupervised  {unsup:6.3f} ms")
    print(f"  difference    {sup - unsup:+6.3f} ms per command")
    if watchdog:
        spent = (_cpu_ticks(watchdog) - ticks) / os.sysconf("SC_CLK_TCK")
        print(f"  watchdog cpu  {spent / runs * 1e3:6.3f} ms per command (3 state lines each, read by sh)")
        rss, pss = _memory_kb(watchdog)
        print(f"idle watchdog (sh): RSS {rss} KiB, PSS {pss} KiB")


FIRST = textwrap.dedent(
    """
    import asyncio, sys, time
    from wolli.tools import process, supervisor
    from wolli.tools.environment import create_host_environment

    class Unsupervised:
        def env(self, base): return dict(base)
        def add(self, pid, *, group=True): pass
        def release(self): pass

    if sys.argv[1] == "off":
        process.supervise = lambda: Unsupervised()
    if sys.argv[1] == "start":
        start = time.perf_counter()
        supervisor.supervise().release()
        print((time.perf_counter() - start) * 1e3)
        sys.exit(0)

    async def main():
        env = create_host_environment("/tmp")
        start = time.perf_counter()
        await env.exec("echo hi")
        print((time.perf_counter() - start) * 1e3)

    asyncio.run(main())
    """
)


def first_spawn(runs: int) -> None:
    results: dict[str, list[float]] = {"start": [], "on": [], "off": []}
    for _ in range(runs):
        for label in results:
            out = subprocess.run([sys.executable, "-c", FIRST, label], capture_output=True, text=True, check=True)
            results[label].append(float(out.stdout.strip()))
    print(f"first supervised spawn of a fresh process, median of {runs}:")
    print(f"  starting the watchdog (first supervise())   {statistics.median(results['start']):6.3f} ms")
    print(f"  first `echo hi` through exec, supervised     {statistics.median(results['on']):6.3f} ms")
    print(f"  first `echo hi` through exec, unsupervised   {statistics.median(results['off']):6.3f} ms")


VICTIM = textwrap.dedent(
    """
    import asyncio, sys
    from wolli.tools.environment import create_host_environment

    async def main():
        env = create_host_environment(sys.argv[1])
        await env.exec("sleep 60 & setsid sleep 61 & echo > ready; wait")

    asyncio.run(main())
    """
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _children(pid: int) -> set[int]:
    from wolli.tools.proctree import snapshot

    table = snapshot()
    return table.tree([pid]) if table else set()


def sweep_latency(runs: int) -> None:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as work:
            victim = subprocess.Popen([sys.executable, "-c", VICTIM, work])
            while not os.path.exists(os.path.join(work, "ready")):
                time.sleep(0.002)
            tree = _children(victim.pid)
            start = time.perf_counter()
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            while any(_alive(p) for p in tree if p != supervisor.watchdog_pid()):
                time.sleep(0.001)
            times.append(time.perf_counter() - start)
    print(f"kill -9 of the owner until its tree is gone (incl. watchdog), median of {runs}: "
          f"{statistics.median(times) * 1e3:.1f} ms (max {max(times) * 1e3:.1f})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    asyncio.run(per_command(args.runs))
    first_spawn(max(5, args.runs // 30))
    sweep_latency(max(5, args.runs // 30))


if __name__ == "__main__":
    main()
