"""Prompt history, persisted per agent in ``<agent home>/prompt-history.jsonl``.

One JSON string per line, newest last, at most ``LIMIT`` kept (the file is rewritten when it
grows past twice that). A line that cannot be read is skipped. The line mode shares it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...base.json_input import parse_json

LIMIT = 500
# The file is read from its end, at most this much (a pasted novel stays one entry).
READ_LIMIT = 16 * 1024 * 1024


class PromptHistory:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: list[str] = self._load()
        self.cursor: int | None = None  # index into entries while browsing; None: not browsing
        self.draft = ""

    def _load(self) -> list[str]:
        if self.path is None:
            return []
        from ...base.safe_files import read_tail

        try:
            data, cut = read_tail(self.path, READ_LIMIT)
        except OSError:
            return []
        lines = data.decode("utf-8", "replace").splitlines()
        if cut and lines:
            lines.pop(0)  # the first line read is the end of a longer one
        out: list[str] = []
        for line in lines:
            try:
                value = parse_json(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, str) and value.strip():
                out.append(value)
        return out[-LIMIT:]

    def add(self, text: str) -> None:
        self.cursor = None
        if not text.strip() or (self.entries and self.entries[-1] == text):
            return
        self.entries.append(text)
        if self.path is None:
            return
        try:
            from ...config.paths import ensure_private_dir

            ensure_private_dir(self.path.parent)
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(text) + "\n")
            if len(self.entries) > 2 * LIMIT:
                self.entries = self.entries[-LIMIT:]
                tmp = self.path.with_suffix(".tmp")
                tmp.write_text("".join(json.dumps(e) + "\n" for e in self.entries), "utf-8")
                os.replace(tmp, self.path)
        except OSError:
            pass  # history is a convenience: a read-only home must not stop a prompt

    def previous(self, current: str) -> str | None:
        if not self.entries:
            return None
        if self.cursor is None:
            self.draft = current
            self.cursor = len(self.entries)
        if self.cursor == 0:
            return None
        self.cursor -= 1
        return self.entries[self.cursor]

    def next(self) -> str | None:
        if self.cursor is None:
            return None
        self.cursor += 1
        if self.cursor >= len(self.entries):
            self.cursor = None
            return self.draft
        return self.entries[self.cursor]
