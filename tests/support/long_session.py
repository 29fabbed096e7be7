"""A long saved session written straight to a file, the way Wolli writes one (format v3).

Pairs of a question and an answer; every ``tools_every``-th answer calls a tool whose result
follows it, so a tail that starts at a tool result would lose its call. The last answer
ends with ``LAST-ANSWER``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION_ID = "5e551011-0000-4000-8000-000000000001"


def _usage(i: int) -> dict[str, Any]:
    return {"input": 1000 + i, "output": 50, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1050 + i,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def write_long_session(path: Path, cwd: str, pairs: int, *, provider: str = "local", model: str = "local-model",
                       tools_every: int = 7) -> Path:
    """Write ``pairs`` exchanges to ``path`` (a model change and a thinking level first)."""
    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": SESSION_ID, "timestamp": "2026-01-01T09:00:00.000Z", "cwd": cwd}]
    counter = 0

    def add(entry: dict[str, Any]) -> None:
        nonlocal counter
        counter += 1
        entry_id = f"{counter:08x}"
        parent = lines[-1]["id"] if len(lines) > 1 else None
        kind = entry.pop("type")  # type, id and parentId first, as Wolli writes them (the index reads them so)
        lines.append({"type": kind, "id": entry_id, "parentId": parent, "timestamp": "2026-01-01T09:00:01.000Z", **entry})

    add({"type": "model_change", "provider": provider, "modelId": model})
    add({"type": "thinking_level_change", "thinkingLevel": "low"})
    for i in range(pairs):
        add({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": f"question {i}"}],
                                            "timestamp": 1767258000000 + i}})
        text = f"answer {i}" + ("\n\nLAST-ANSWER" if i == pairs - 1 else "")
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        call = i % tools_every == tools_every - 1
        if call:
            content.append({"type": "toolCall", "id": f"call_{i}", "name": "read", "arguments": {"path": "a.txt"}})
        add({"type": "message", "message": {
            "role": "assistant", "content": content, "api": "openai-completions", "provider": provider,
            "model": model, "usage": _usage(i), "stopReason": "toolUse" if call else "stop",
            "timestamp": 1767258000000 + i}})
        if call:
            add({"type": "message", "message": {
                "role": "toolResult", "toolCallId": f"call_{i}", "toolName": "read",
                "content": [{"type": "text", "text": f"contents {i}"}], "isError": False,
                "timestamp": 1767258000000 + i}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    return path
