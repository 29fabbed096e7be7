"""Benchmark: list 2,000 sessions of ~50 entries each, and load one 2,000-pair session.

Run: ``python tests/perf/bench_session_listing.py [--sessions N] [--entries N]``.
Prints medians; not a pass/fail test (CONTRIBUTING.md, Benchmarks). Files are written to a temporary
folder (the OS page cache is warm: this measures Wolli's work, not the disk).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from wolli.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage
from wolli.config.paths import cwd_slug
from wolli.session import listing
from wolli.session.entries import MessageEntry, SessionHeader, SessionInfoEntry, TagsEntry, new_entry_id
from wolli.session.manager import SessionManager

CWD = "/home/me/project"


def _body(entries: int, seed: int) -> list[str]:
    """Realistic entry lines: prompts, assistant turns with tool calls, tool results."""
    lines: list[str] = []
    parent: str | None = None

    def add(entry_cls, **fields):
        nonlocal parent
        entry = entry_cls(id=new_entry_id(), parent_id=parent, **fields)
        parent = entry.id
        lines.append(entry.to_json())

    usage = Usage(input=1200, output=300, total_tokens=1500)
    i = 0
    while len(lines) < entries:
        add(MessageEntry, message=UserMessage(content=f"Session {seed}: please fix bug number {i} in parser.py " * 3))
        add(MessageEntry, message=AssistantMessage(
            content=[TextContent(text="Let me look at the file. " * 10),
                     ToolCall(id=f"call_{i}", name="read", arguments={"path": "src/parser.py"})],
            api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5", usage=usage,
            stop_reason="toolUse"))
        add(MessageEntry, message=ToolResultMessage(
            tool_call_id=f"call_{i}", tool_name="read", content=[TextContent(text="def parse(x):\n    return x\n" * 40)]))
        add(MessageEntry, message=AssistantMessage(
            content=[TextContent(text="Fixed it by changing the return value. " * 8)],
            api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5", usage=usage))
        if i == 1:
            add(SessionInfoEntry, name=f"Parser fixes {seed}")
            add(TagsEntry, tags={"ticket": str(seed)})
        i += 1
    return lines[:entries]


def write_sessions(root: Path, count: int, entries: int) -> None:
    folder = root / cwd_slug(CWD)
    folder.mkdir(parents=True)
    template = _body(entries, 0)
    now = time.time()
    for n in range(count):
        sid = str(uuid.uuid4())
        header = SessionHeader(id=sid, cwd=CWD).to_json()
        body = "\n".join(template).replace("Session 0:", f"Session {n}:").replace('"ticket":"0"', f'"ticket":"{n}"')
        path = folder / f"2025-01-01T00-00-00-000Z_{sid}.jsonl"
        path.write_text(header + "\n" + body + "\n")
        os.utime(path, (now - n, now - n))


def timed(fn, repeat: int) -> tuple[float, object]:
    samples, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--entries", type=int, default=50)
    parser.add_argument("--pairs", type=int, default=2000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "sessions"
        write_sessions(root, args.sessions, args.entries)
        total = sum(p.stat().st_size for p in root.rglob("*.jsonl"))
        print(f"{args.sessions} sessions x {args.entries} entries, {total / 1e6:.1f} MB")

        def cold_list():
            listing.clear_cache()
            return listing.list_sessions(CWD, root)

        t, infos = timed(cold_list, 5)
        print(f"list_sessions, cold cache:      {t * 1000:7.1f} ms  ({len(infos)} sessions)")
        t, _ = timed(lambda: listing.list_sessions(CWD, root), 5)
        print(f"list_sessions, warm cache:      {t * 1000:7.1f} ms")

        def cold_all():
            listing.clear_cache()
            return listing.list_all_sessions(root)

        t, _ = timed(cold_all, 5)
        print(f"list_all_sessions, cold cache:  {t * 1000:7.1f} ms")

        def cold_find():
            listing.clear_cache()
            return listing.find_sessions({"ticket": "1234"}, root)

        t, found = timed(cold_find, 5)
        print(f"find_sessions by tag, cold:     {t * 1000:7.1f} ms  ({len(found)} match)")
        t, _ = timed(lambda: listing.find_sessions({"ticket": "1234"}, root), 5)
        print(f"find_sessions by tag, warm:     {t * 1000:7.1f} ms")

        big = Path(tmp) / "big.jsonl"
        lines = _body(args.pairs * 2, 7)  # a pair: a prompt and a reply (tool turns included)
        header = json.dumps({"type": "session", "version": 3, "id": str(uuid.uuid4()), "timestamp": "2025-01-01T00:00:00.000Z", "cwd": CWD})
        big.write_text(header + "\n" + "\n".join(lines) + "\n")
        t, manager = timed(lambda: SessionManager.open(big), 3)
        print(f"open a {len(lines)}-entry session ({big.stat().st_size / 1e6:.1f} MB): {t * 1000:7.1f} ms")
        t, ctx = timed(manager.build_session_context, 3)
        print(f"build_session_context ({len(ctx.messages)} messages): {t * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
