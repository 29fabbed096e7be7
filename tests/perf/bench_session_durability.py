"""Benchmark: what syncing session entries to the disk costs, on a 2,000-entry session.

Run: ``python tests/perf/bench_session_durability.py [--entries 2000] [--runs 5] [--dir DIR]``.

Wolli writes every session entry with one ``write`` of a whole line (it survives any death
of the process), and syncs (``fdatasync``) only user messages and a new file (survives a
power loss too). This script appends the same realistic session through
``SessionManager`` under three policies and prints medians over ``--runs``:

* ``none``: no sync at all;
* ``user`` (Wolli's choice): user messages and the new file synced;
* ``every``: every message synced (the alternative that was turned down).

Columns: total ms for the whole session, ms per entry, the number of syncs, and ms per
sync (the difference to ``none`` over the syncs). The policies take turns run by run. One entry in four is a user message (a prompt, an answer, a tool call turn and its
result), with 0.2-6 KB of content. ``--dir`` picks the file system (default: the system's
temporary folder; a tmpfs there makes syncs free, so the header says which file system it
is). Not a pass/fail test (CONTRIBUTING.md, Benchmarks).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from wolli.agent.messages import user_message  # noqa: E402
from wolli.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage  # noqa: E402
from wolli.session import manager as manager_module  # noqa: E402
from wolli.session.manager import SessionManager  # noqa: E402

POLICIES = {
    "none": frozenset(),
    "user": frozenset({"user"}),
    "every": frozenset({"user", "assistant", "toolResult", "bashExecution", "custom"}),
}


def messages(count: int, seed: int = 7) -> list[object]:
    rng = random.Random(seed)
    out: list[object] = []
    while len(out) < count:
        step = len(out) // 4
        out.append(user_message(f"Step {step}: " + "please look at the parser again. " * rng.randint(2, 12)))
        call = ToolCall(id=f"call_{step}", name="read", arguments={"path": f"src/module_{step}.py"})
        out.append(AssistantMessage(content=[TextContent(text="Reading it. " * rng.randint(5, 40)), call],
                                    api="openai-completions", provider="local", model="m", usage=Usage(),
                                    stop_reason="toolUse"))
        out.append(ToolResultMessage(tool_call_id=call.id, tool_name="read",
                                     content=[TextContent(text="x = 1\n" * rng.randint(40, 1000))]))
        out.append(AssistantMessage(content=[TextContent(text="Done. " * rng.randint(10, 200))],
                                    api="openai-completions", provider="local", model="m", usage=Usage(),
                                    stop_reason="stop"))
    return out[:count]


def file_system(path: Path) -> str:
    """The mount's type from /proc/mounts (Linux), else "unknown"."""
    try:
        mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
    except OSError:
        return "unknown"
    best = ("", "unknown")
    target = str(path.resolve())
    for fields in mounts:
        point = fields[1]
        if (target == point or target.startswith(point.rstrip("/") + "/")) and len(point) > len(best[0]):
            best = (point, fields[2])
    return best[1]


def one_run(folder: Path, policy: str, batch: list[object]) -> tuple[float, int]:
    syncs = 0
    real = os.fdatasync if hasattr(os, "fdatasync") else os.fsync
    name = "fdatasync" if hasattr(os, "fdatasync") else "fsync"

    def counting(fd: int) -> None:
        nonlocal syncs
        syncs += 1
        real(fd)

    setattr(os, name, counting)
    manager_module.SYNCED_ROLES = POLICIES[policy]
    try:
        manager = SessionManager.create("/home/me/project", folder)
        start = time.perf_counter()
        for message in batch:
            manager.append_message(message)
        elapsed = time.perf_counter() - start
    finally:
        setattr(os, name, real)
        manager_module.SYNCED_ROLES = POLICIES["user"]
    return elapsed, syncs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    batch = messages(args.entries)
    size = sum(len(m.model_dump_json()) for m in batch)  # type: ignore[attr-defined]
    print(f"{args.entries} entries ({size / 2**20:.1f} MiB) in {args.dir} ({file_system(args.dir)}), "
          f"load average {os.getloadavg()[0]:.2f}, medians of {args.runs} runs")
    print(f"{'policy':8s} {'total ms':>9s} {'ms/entry':>9s} {'syncs':>6s} {'ms/sync':>8s}")
    times: dict[str, list[float]] = {policy: [] for policy in POLICIES}
    syncs: dict[str, int] = {}
    for _ in range(args.runs):  # policies take turns, so a change in load hits them alike
        for policy in POLICIES:
            with tempfile.TemporaryDirectory(dir=args.dir) as folder:
                elapsed, syncs[policy] = one_run(Path(folder), policy, batch)
                times[policy].append(elapsed)
    base = statistics.median(times["none"]) * 1000
    for policy in POLICIES:
        total = statistics.median(times[policy]) * 1000
        per_sync = (total - base) / syncs[policy] if syncs[policy] else 0.0
        print(f"{policy:8s} {total:9.1f} {total / args.entries:9.3f} {syncs[policy]:6d} {per_sync:8.2f}")

if __name__ == "__main__":
    main()
