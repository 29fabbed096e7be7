"""Project ``.mcp.json`` approvals: a project's servers run only once the user said yes.

A repository can carry a ``.mcp.json`` that starts programs on the user's machine, so its
servers are not started until the user approves *that file's content* for *that folder*. The
approval is bound to the SHA-256 of the file: any edit asks again. A "no" is remembered the
same way (the user is not asked again until the file changes). Stored per agent in
``mcp-approvals.json`` beside ``settings.json``, written under the file lock every config
file uses.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Literal

from ..base.json_input import parse_json
from ..base.safe_files import read_capped
from ..config.file_lock import locked
from ..config.settings import write_json_atomic

Verdict = Literal["approved", "denied", "unknown"]
FILE = "mcp-approvals.json"
_MAX_BYTES = 4 * 1024 * 1024


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Approvals:
    def __init__(self, agent_home: Path, file: str = FILE) -> None:
        # ``file``: another kind of project content approved the same way (subagent files).
        self.path = agent_home / file

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            data = parse_json(read_capped(self.path, _MAX_BYTES).decode("utf-8"))
        except (OSError, ValueError):
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        return {k: v for k, v in projects.items() if isinstance(v, dict)} if isinstance(projects, dict) else {}

    def verdict(self, folder: str, text: str) -> Verdict:
        entry = self._read().get(os.path.abspath(folder))
        if not entry or entry.get("sha256") != content_hash(text):
            return "unknown"
        return "approved" if entry.get("verdict") == "approved" else "denied"

    def record(self, folder: str, text: str, approved: bool) -> None:
        with locked(self.path):
            projects = self._read()
            projects[os.path.abspath(folder)] = {"sha256": content_hash(text),
                                                 "verdict": "approved" if approved else "denied"}
            write_json_atomic(self.path, {"projects": projects}, mode=0o600)
