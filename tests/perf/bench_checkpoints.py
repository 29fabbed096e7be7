"""Benchmark: what checkpoints cost (targets: a 1 MB file < 10 ms; a long session with 500
checkpoints loads within 10 % of its time without them).

Run: ``python tests/perf/bench_checkpoints.py [--runs 9] [--turns 2000] [--checkpoints 500]
[--size 1000000]``.

- **capture**: keeping a file before an edit (read, sha256, write the blob through a
  temporary file and a rename), for new content each time and for content already kept,
  then the hash noted after the edit; in process, ms medians.
- **tool call**: the same through a live session, as an ``edit`` of a 1 MB file is
  checkpointed (the whole ``before`` hook, thread hop and session entry included).
- **load**: a session of ``--turns`` turns (a prompt, a tool call, its 1-6 KB result, an
  answer: 4 entries each) opened and turned into the model's context in a fresh process
  (``SessionManager.open`` + ``build_session_context``), without checkpoints and with
  ``--checkpoints`` of them (an entry per first change of one to three files, and for one
  run in four a ``settle`` entry for a file changed twice): wall and cpu medians, and the
  difference.

Not a pass/fail test (CONTRIBUTING.md, Benchmarks).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

CHILD = r"""
import json, sys, time
from wolli.session.manager import SessionManager
c0 = time.process_time(); t0 = time.perf_counter()
manager = SessionManager.open(sys.argv[1])
context = manager.build_session_context()
t1 = time.perf_counter(); c1 = time.process_time()
print(json.dumps({"wall": t1 - t0, "cpu": c1 - c0, "entries": len(manager.get_entries()),
                  "messages": len(context.messages)}))
"""


def bench_capture(runs: int, size: int) -> dict[str, float]:
    from wolli.session.checkpoints.blobs import BlobStore
    from wolli.session.checkpoints.records import capture, current

    out: dict[str, list[float]] = {"new content": [], "content kept before": [], "hash after": []}
    with tempfile.TemporaryDirectory() as tmp:
        store = BlobStore(Path(tmp) / "blobs")
        target = Path(tmp) / "big.bin"
        for run in range(runs + 2):
            target.write_bytes(os.urandom(size))
            start = time.perf_counter()
            capture(store, str(target), 10 * size)
            fresh = time.perf_counter() - start
            start = time.perf_counter()
            capture(store, str(target), 10 * size)
            again = time.perf_counter() - start
            start = time.perf_counter()
            current(str(target))
            after = time.perf_counter() - start
            if run >= 2:  # the first ones warm the page cache and the imports
                out["new content"].append(fresh)
                out["content kept before"].append(again)
                out["hash after"].append(after)
    return {k: statistics.median(v) * 1000 for k, v in out.items()}


async def bench_tool_call(runs: int, size: int) -> float:
    from wolli.testing import ExtensionHarness

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HOME"] = tmp
        project = Path(tmp) / "p"
        project.mkdir()
        async with ExtensionHarness([], cwd=project) as h:
            h.reply("ok")
            await h.prompt("start")  # the session file exists from here on
            checkpoints = h.session.checkpoints
            times = []
            for run in range(runs + 2):
                path = project / f"f{run}.bin"
                path.write_bytes(os.urandom(size))
                checkpoints._turn = None  # every call a first change since a new message
                start = time.perf_counter()
                await checkpoints.before(f"call_{run}", "edit", {"path": str(path)})
                if run >= 2:
                    times.append(time.perf_counter() - start)
            return statistics.median(times) * 1000


def session_lines(turns: int, checkpoints: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    lines = [json.dumps({"type": "session", "version": 3, "id": "0b6f8e8c-7d1c-4a4e-9d51-3c0f6d0a1b2c",
                         "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/home/me/project"})]
    parent: str | None = None
    counter = 0

    def add(entry_type: str, **fields: object) -> None:
        nonlocal parent, counter
        counter += 1
        entry_id = f"{counter:08x}"
        lines.append(json.dumps({"type": entry_type, "id": entry_id, "parentId": parent,
                                 "timestamp": "2025-01-01T00:00:00.000Z", **fields}, separators=(",", ":")))
        parent = entry_id

    usage = {"input": 1200, "output": 300, "cacheRead": 20000, "cacheWrite": 500, "totalTokens": 22000,
             "cost": {"input": 0.0036, "output": 0.0045, "cacheRead": 0.006, "cacheWrite": 0.0019, "total": 0.016}}
    meta = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
    code = "".join(f"    value_{k} = compute(value_{k - 1}, options)  # step {k}\n" for k in range(1, 200))
    # Its own generator: the conversation is the same with and without checkpoints.
    with_checkpoint = set(random.Random(seed + 1).sample(range(turns), checkpoints))
    add("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    for turn in range(turns):
        ms = 1735689600000 + turn * 1000
        add("message", message={"role": "user", "timestamp": ms,
                                "content": f"Turn {turn}: fix the parser and add a test.\n" * rng.randint(1, 4)})
        add("message", message={"role": "assistant", "content": [
            {"type": "text", "text": "Let me change the parser. " * rng.randint(2, 8)},
            {"type": "toolCall", "id": f"toolu_{turn:06d}", "name": "edit",
             "arguments": {"path": f"src/parser_{turn % 17}.py", "edits": [{"old_text": "a", "new_text": "b"}]}}],
            **meta, "usage": usage, "stopReason": "toolUse", "timestamp": ms})
        files = [f"/home/me/project/src/parser_{(turn + k) % 17}.py" for k in range(1 + turn % 3)]
        if turn in with_checkpoint:  # one entry per first change: the content before, the hash after
            add("checkpoint", kind="tool", toolCallId=f"toolu_{turn:06d}",
                files=[{"path": f, "before": hashlib.sha256(f"{turn}{f}".encode()).hexdigest(), "mode": 420,
                        "after": hashlib.sha256(f"after{turn}{f}".encode()).hexdigest()} for f in files])
        add("message", message={"role": "toolResult", "toolCallId": f"toolu_{turn:06d}", "toolName": "edit",
                                "content": [{"type": "text", "text": (code * 4)[:rng.randint(1, 6) * 1024]}],
                                "isError": False, "timestamp": ms})
        add("message", message={"role": "assistant", "content": [
            {"type": "text", "text": "Done: the final token is flushed now. " * rng.randint(2, 10)}],
            **meta, "usage": usage, "stopReason": "stop", "timestamp": ms})
        if turn in with_checkpoint and turn % 4 == 0:  # a run that changed a file twice settles it
            add("checkpoint", kind="settle",
                files=[{"path": f, "after": hashlib.sha256(f"after{turn}{f}".encode()).hexdigest()} for f in files])
    return lines


def load_once(path: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(path)], env=env, capture_output=True, text=True,
                          check=True, cwd=tempfile.gettempdir())
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--checkpoints", type=int, default=500)
    parser.add_argument("--size", type=int, default=1_000_000)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"checkpoint of a {args.size / 1e6:g} MB file (ms, medians of {args.runs}):")
    for label, value in bench_capture(args.runs, args.size).items():
        print(f"  {label:<22}{value:8.2f}")
    print(f"  {'edit through a session':<22}{asyncio.run(bench_tool_call(args.runs, args.size)):8.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        plain, marked = Path(tmp) / "plain.jsonl", Path(tmp) / "marked.jsonl"
        plain.write_text("\n".join(session_lines(args.turns, 0)) + "\n")
        marked.write_text("\n".join(session_lines(args.turns, args.checkpoints)) + "\n")
        samples: dict[str, list[dict[str, float]]] = {"plain": [], "marked": []}
        for _ in range(args.runs):  # interleaved: load changes hit both alike
            samples["plain"].append(load_once(plain))
            samples["marked"].append(load_once(marked))
        print(f"load of a {args.turns}-turn session, fresh process (ms, medians of {args.runs}):")
        print(f"  {'':<26}{'entries':>8}{'MB':>6}{'wall':>8}{'cpu':>8}")
        figures = {}
        for label, path in (("plain", plain), ("marked", marked)):
            rows = samples[label]
            wall = statistics.median(r["wall"] for r in rows) * 1000
            cpu = statistics.median(r["cpu"] for r in rows) * 1000
            figures[label] = (wall, cpu)
            name = "no checkpoints" if label == "plain" else f"{args.checkpoints} checkpoints"
            print(f"  {name:<26}{int(rows[0]['entries']):8d}{path.stat().st_size / 1e6:6.1f}{wall:8.1f}{cpu:8.1f}")
        (w0, c0), (w1, c1) = figures["plain"], figures["marked"]
        print(f"  {'difference':<26}{'':8}{'':6}{(w1 / w0 - 1) * 100:+7.1f}%{(c1 / c0 - 1) * 100:+7.1f}%")


if __name__ == "__main__":
    main()
