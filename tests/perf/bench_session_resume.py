"""Benchmark: resume a long session: ``SessionManager.open`` + ``build_session_context``.

Run: ``python tests/perf/bench_session_resume.py [--runs 7] [--pairs 500,2000,5000]
[--src DIR] [--preload MODULES] [--profile PAIRS]``.

Each measurement runs in a fresh child process (page cache warm, imports done before the
clock starts), so the figures include first-use costs and the child's peak RSS is the
real high-water mark of a resume. The table shows medians over ``--runs`` children: wall
ms for ``open``, for ``build_session_context``, both together, the cpu ms of both, the
child's RSS (MiB) just before ``open`` and after the context, and its peak RSS. Importing
pydantic and the models peaks at about 62 MiB on its own, so a resume that stays under
that shows 62 as its peak; RSS1 - RSS0 is what the loaded session holds.

``--src DIR`` puts DIR first on the children's ``sys.path``: point it at an unpacked older
tree (``git archive <rev> wolli | tar -x -C DIR``) to compare two versions side by side;
``--src`` may be given twice, and the runs alternate between the trees.
``--preload textual.app`` imports modules in the child first, so the heap the garbage
collector walks is as large as in the TUI. ``--profile PAIRS`` prints a cProfile of open +
context for one session of that size.

A "pair" is two entries (a prompt and a reply, tool turns included): a 2,000-pair session
holds 4,000 entries. Content is realistic: user prompts of a few lines, assistant turns
with text, some thinking and tool calls, tool results of 1-6 KB, a model change and a
thinking-level change at the start, a name and tags. The ``+compaction`` row adds a
compaction that keeps the last 10 % of the entries. Not a pass/fail test (CONTRIBUTING.md, Benchmarks).
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
CWD = "/home/me/project"

CHILD = r"""
import gc, importlib, json, resource, sys, time
path = sys.argv[1]
for name in filter(None, sys.argv[2].split(",")):
    importlib.import_module(name)
from wolli.session.manager import SessionManager
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
def current_rss():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() / 2**20
    except OSError:
        return rss()
before = current_rss()
c0 = time.process_time()
t0 = time.perf_counter()
manager = SessionManager.open(path)
t1 = time.perf_counter()
context = manager.build_session_context()
t2 = time.perf_counter()
c1 = time.process_time()
print(json.dumps({"open": t1 - t0, "context": t2 - t1, "cpu": c1 - c0, "rss0": before, "rss1": current_rss(), "rss": rss(),
                  "messages": len(context.messages), "errors": len(manager.load_errors),
                  "entries": len(manager.get_entries())}))
"""


def _line(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def session_lines(pairs: int, *, compaction: bool = False, seed: int = 1) -> list[str]:
    """Header plus ``2 * pairs`` entry lines, written the way Wolli writes them."""
    import random

    rng = random.Random(seed)
    lines = [_line({"type": "session", "version": 3, "id": "0b6f8e8c-7d1c-4a4e-9d51-3c0f6d0a1b2c",
                    "timestamp": "2025-01-01T00:00:00.000Z", "cwd": CWD})]
    parent: str | None = None
    counter = 0
    ids: list[str] = []

    def add(kind: str, **fields) -> None:
        nonlocal parent, counter
        counter += 1
        entry_id = f"{counter:08x}"
        stamp = f"2025-01-01T{(counter // 3600) % 24:02d}:{(counter // 60) % 60:02d}:{counter % 60:02d}.000Z"
        lines.append(_line({"type": kind, "id": entry_id, "parentId": parent, "timestamp": stamp, **fields}))
        ids.append(entry_id)
        parent = entry_id

    ms = 1735689600000
    usage = {"input": 1200, "output": 300, "cacheRead": 20000, "cacheWrite": 500, "totalTokens": 22000,
             "cost": {"input": 0.0036, "output": 0.0045, "cacheRead": 0.006, "cacheWrite": 0.0019, "total": 0.016}}
    meta = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5"}
    code = "".join(f"    value_{k} = compute(value_{k - 1}, options)  # step {k}\n" for k in range(1, 200))

    add("model_change", provider="anthropic", modelId="claude-sonnet-4-5")
    add("thinking_level_change", thinkingLevel="medium")
    target = 2 * pairs
    turn = 0
    compacted = False
    while counter < target:
        turn += 1
        add("message", message={"role": "user", "timestamp": ms + counter * 1000,
                                "content": f"Turn {turn}: the parser drops the last token when the input "
                                           f"ends in a comment. Please fix it and add a test.\n" * rng.randint(1, 4)})
        blocks: list[dict] = []
        if turn % 3 == 0:
            blocks.append({"type": "thinking", "thinking": "I should read the parser first. " * 12,
                           "thinkingSignature": "sig" + "A" * 300})
        blocks.append({"type": "text", "text": "Let me look at the parser and its tests. " * rng.randint(2, 8)})
        blocks.append({"type": "toolCall", "id": f"toolu_{turn:06d}", "name": "read",
                       "arguments": {"path": f"src/parser_{turn % 17}.py", "offset": 1, "limit": 400}})
        add("message", message={"role": "assistant", "content": blocks, **meta, "usage": usage,
                                "stopReason": "toolUse", "timestamp": ms + counter * 1000})
        size = rng.randint(1, 6) * 1024
        add("message", message={"role": "toolResult", "toolCallId": f"toolu_{turn:06d}", "toolName": "read",
                                "content": [{"type": "text", "text": (code * 4)[:size]}],
                                "isError": False, "timestamp": ms + counter * 1000})
        add("message", message={"role": "assistant", "content": [
            {"type": "text", "text": "I changed the tokenizer so the final token is flushed. " * rng.randint(2, 10)}],
            **meta, "usage": usage, "stopReason": "stop", "timestamp": ms + counter * 1000})
        if turn == 2:
            add("session_info", name="Parser fixes")
            add("tags", tags={"ticket": "PAR-12"})
        if compaction and not compacted and counter >= target * 0.9:
            compacted = True
            kept = ids[int(len(ids) * 0.9)]
            add("compaction", summary="Fixed the parser's handling of trailing comments. " * 40,
                firstKeptEntryId=kept, tokensBefore=180000, details={"readFiles": [], "modifiedFiles": []})
    return lines


def run_child(path: Path, src: str | None, preload: str) -> dict:
    env = dict(os.environ)
    paths = [p for p in (src, str(ROOT)) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), preload], env=env, capture_output=True, text=True,
                         check=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout.strip().splitlines()[-1])


def profile(path: Path) -> None:
    import cProfile
    import pstats

    from wolli.session.manager import SessionManager

    SessionManager.open(path).build_session_context()  # warm the validators
    prof = cProfile.Profile()
    prof.enable()
    SessionManager.open(path).build_session_context()
    prof.disable()
    pstats.Stats(prof).sort_stats("tottime").print_stats(20)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--pairs", default="500,2000,5000")
    parser.add_argument("--src", action="append", default=[], help="tree to import wolli from (repeatable)")
    parser.add_argument("--profile", type=int, default=0)
    parser.add_argument("--preload", default="", help="modules the child imports first, e.g. textual.app")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        if args.profile:
            path = Path(tmp) / "profile.jsonl"
            path.write_text("\n".join(session_lines(args.profile)) + "\n")
            profile(path)
            return
        cases: list[tuple[str, Path]] = []
        for pairs in [int(p) for p in args.pairs.split(",")]:
            for compacted in (False, True) if pairs == 2000 else (False,):
                path = Path(tmp) / f"s{pairs}{'c' if compacted else ''}.jsonl"
                path.write_text("\n".join(session_lines(pairs, compaction=compacted)) + "\n")
                cases.append((f"{pairs}{' +compaction' if compacted else ''}", path))
        srcs: list[str | None] = args.src or [None]
        load = os.getloadavg()[0]
        print(f"medians of {args.runs} fresh processes; load average {load:.2f}; preloaded: {args.preload or '-'}")
        print(f"{'session':<18}{'tree':<22}{'MB':>6}{'entries':>8}{'msgs':>6}"
              f"{'open ms':>9}{'ctx ms':>8}{'total':>8}{'cpu ms':>8}{'RSS0':>7}{'RSS1':>7}{'peak':>7}")
        print("  (ms: wall medians; RSS0 / RSS1: MiB before open / after the context; peak: peak RSS MiB)")
        for label, path in cases:
            samples: dict[str | None, list[dict]] = {s: [] for s in srcs}
            for _ in range(args.runs):
                for src in srcs:  # interleaved, so load changes hit every tree alike
                    samples[src].append(run_child(path, src, args.preload))
            for src in srcs:
                rows = samples[src]

                def med(key: str, rows: list[dict] = rows) -> float:
                    return statistics.median(r[key] for r in rows)

                name = "working tree" if src is None else Path(src).name
                print(f"{label:<18}{name:<22}{path.stat().st_size / 1e6:6.1f}{rows[0]['entries']:8d}"
                      f"{rows[0]['messages']:6d}{med('open') * 1000:9.1f}{med('context') * 1000:8.1f}"
                      f"{(med('open') + med('context')) * 1000:8.1f}{med('cpu') * 1000:8.1f}"
                      f"{med('rss0'):7.1f}{med('rss1'):7.1f}{med('rss'):7.1f}")


if __name__ == "__main__":
    main()
