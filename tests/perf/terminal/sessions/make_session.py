#!/usr/bin/env python3
"""Write a large saved session for an agent, in that agent's own on-disk format.

    make_session.py pi     [--pairs 2000] [--home $HOME] [--cwd $BENCH_WORKDIR]
    make_session.py claude [--pairs 2000] [--home $HOME] [--cwd $BENCH_WORKDIR]

Each pair is a user message and an assistant reply (about 60 words, a fenced
code block every 10th reply).  The very last assistant reply ends with the
word RESUME-LAST-MESSAGE, so a screen scraper can tell that the resumed
conversation has been drawn.  Prints the path and size of the file written.

Formats (studied from the installed packages):
  pi      ~/.pi/agent/sessions/--<cwd with / -> ->--/<ts>_<uuid>.jsonl, version 3:
          a "session" header line, then entries {type, id (8 hex), parentId,
          timestamp, ...} chained by parentId; messages are pi-ai Message objects
          (user: content blocks; assistant: content, api, provider, model, usage,
          stopReason, timestamp).  See docs/session-format.md in the package.
  claude  ~/.claude/projects/<cwd with non-alphanumerics -> ->/<uuid>.jsonl:
          one entry per line {type: user|assistant, uuid, parentUuid, sessionId,
          timestamp, cwd, version, message: Anthropic message}.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import uuid
from pathlib import Path

WORDS = ("the agent reads the file and then explains what the function does in plain words so that "
         "a reviewer can follow the change without running it first").split()


def user_text(i: int) -> str:
    return f"Question {i}: can you look at module_{i % 97}.py and explain what happens in step {i}?"


def assistant_text(i: int, last: bool) -> str:
    words = [WORDS[(i + k) % len(WORDS)] for k in range(60)]
    para = f"Answer {i}: " + " ".join(words) + "."
    if i % 10 == 0:
        para += f"\n\n```python\ndef step_{i}(x):\n    return x * {i} + 1\n```\n\nThat is all for step {i}."
    if last:
        para += "\n\nRESUME-LAST-MESSAGE"
    return para


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def make_pi(home: Path, cwd: str, pairs: int, root: Path | None = None) -> Path:
    safe = "--" + re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", cwd)) + "--"
    d = (root or home / ".pi" / "agent" / "sessions") / safe
    d.mkdir(parents=True, exist_ok=True)
    start = dt.datetime(2026, 1, 1, 9, 0, 0, tzinfo=dt.UTC)
    sid = str(uuid.uuid4())
    path = d / f"{iso(start).replace(':', '-').replace('.', '-')}_{sid}.jsonl"
    used: set[str] = set()

    def new_id() -> str:
        while True:
            x = uuid.uuid4().hex[:8]
            if x not in used:
                used.add(x)
                return x

    t = start
    lines = [{"type": "session", "version": 3, "id": sid, "timestamp": iso(t), "cwd": cwd}]
    parent = None
    e1 = new_id()
    lines.append({"type": "model_change", "id": e1, "parentId": parent, "timestamp": iso(t),
                  "provider": "fake", "modelId": "fake-model"})
    parent = e1
    e2 = new_id()
    lines.append({"type": "thinking_level_change", "id": e2, "parentId": parent, "timestamp": iso(t),
                  "thinkingLevel": "off"})
    parent = e2
    for i in range(pairs):
        t += dt.timedelta(seconds=7)
        uid = new_id()
        lines.append({"type": "message", "id": uid, "parentId": parent, "timestamp": iso(t),
                      "message": {"role": "user", "content": [{"type": "text", "text": user_text(i)}],
                                  "timestamp": int(t.timestamp() * 1000)}})
        parent = uid
        t += dt.timedelta(seconds=3)
        aid = new_id()
        text = assistant_text(i, i == pairs - 1)
        lines.append({"type": "message", "id": aid, "parentId": parent, "timestamp": iso(t),
                      "message": {"role": "assistant", "content": [{"type": "text", "text": text}],
                                  "api": "openai-completions", "provider": "fake", "model": "fake-model",
                                  "usage": {"input": 1000 + 500 * (i % 100), "output": 90, "cacheRead": 0, "cacheWrite": 0,
                                            "totalTokens": 1090 + 500 * (i % 100),
                                            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                                                     "total": 0}},
                                  "stopReason": "stop", "timestamp": int(t.timestamp() * 1000)}})
        parent = aid
    with open(path, "w") as f:
        for e in lines:
            f.write(json.dumps(e, separators=(",", ":")) + "\n")
    return path


def make_claude(home: Path, cwd: str, pairs: int, version: str) -> Path:
    d = home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", cwd)
    d.mkdir(parents=True, exist_ok=True)
    sid = str(uuid.uuid4())
    path = d / f"{sid}.jsonl"
    t = dt.datetime(2026, 1, 1, 9, 0, 0, tzinfo=dt.UTC)
    parent = None
    base = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid, "version": version,
            "gitBranch": "main"}
    with open(path, "w") as f:
        for i in range(pairs):
            t += dt.timedelta(seconds=7)
            u = str(uuid.uuid4())
            f.write(json.dumps({"parentUuid": parent, **base, "type": "user",
                                "message": {"role": "user", "content": user_text(i)},
                                "uuid": u, "timestamp": iso(t)}) + "\n")
            parent = u
            t += dt.timedelta(seconds=3)
            a = str(uuid.uuid4())
            f.write(json.dumps({"parentUuid": parent, **base, "type": "assistant",
                                "message": {"id": "msg_" + uuid.uuid4().hex[:24], "type": "message",
                                            "role": "assistant", "model": "fake-model",
                                            "content": [{"type": "text", "text": assistant_text(i, i == pairs - 1)}],
                                            "stop_reason": "end_turn", "stop_sequence": None,
                                            "usage": {"input_tokens": 1000 + 500 * (i % 100), "output_tokens": 90,
                                                      "cache_creation_input_tokens": 0,
                                                      "cache_read_input_tokens": 0}},
                                "requestId": "req_" + uuid.uuid4().hex[:20],
                                "uuid": a, "timestamp": iso(t)}) + "\n")
            parent = a
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("agent", choices=["pi", "claude", "wolli"])
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--home", type=Path, default=Path(os.environ.get("HOME", "~")).expanduser())
    ap.add_argument("--cwd", default=os.environ.get("BENCH_WORKDIR") or os.getcwd())
    ap.add_argument("--claude-version", default="2.1.197")
    a = ap.parse_args()
    if a.agent == "pi":
        p = make_pi(a.home, a.cwd, a.pairs)
    elif a.agent == "wolli":  # pi's format v3, in the agent home of WOLLI_HOME (default ~/.wolli)
        wolli_home = Path(os.environ.get("WOLLI_HOME") or a.home / ".wolli")
        p = make_pi(a.home, a.cwd, a.pairs, wolli_home / "agents" / "default" / "sessions")
    else:
        p = make_claude(a.home, a.cwd, a.pairs, a.claude_version)
    print(f"{p} {p.stat().st_size / 2**20:.1f} MiB {a.pairs} pairs")


if __name__ == "__main__":
    main()
