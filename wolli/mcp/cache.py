"""What each server offered last time, so start-up need not wait for servers it already knows.

A server's tools are part of every request, so a run that knows nothing about a server must
wait for it before the first request (print mode, the first message in the TUI). Once a
server has been seen, its list (tools, prompts, resources) is kept here, keyed by a hash of
its configuration: the next start offers the cached definitions at once while the servers
connect in parallel; a call to a server that is not ready yet waits for it, and a server
whose fresh list differs replaces the cached one (and the tools of the next request).

``mcp-cache.json`` in the agent home; bounded: at most :data:`MAX_ENTRIES` servers (the
least recently confirmed go first), an offer larger than :data:`MAX_ENTRY_BYTES` is not kept,
and the file is read up to :data:`MAX_FILE_BYTES`. The key hashes the whole configuration
(command, arguments, environment, working folder, URL, headers), so any change starts
afresh and no secret is stored: only the SHA-256 of the configuration and the server's own
descriptions of its tools.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from ..base.json_input import parse_json
from ..base.safe_files import read_capped
from ..config.file_lock import locked
from ..config.settings import write_json_atomic
from .types import PromptArgumentInfo, PromptInfo, ResourceInfo, ServerConfig, ServerOffer, ToolInfo

FILE = "mcp-cache.json"
VERSION = 1
MAX_ENTRIES = 32
MAX_ENTRY_BYTES = 512 * 1024
MAX_FILE_BYTES = 8 * 1024 * 1024
# A list seen again unchanged is written back (to keep its place) at most this often.
REFRESH_AFTER_S = 24 * 3600


def config_key(config: ServerConfig, cwd: str | None = None) -> str:
    """The SHA-256 of everything that decides what the server offers. A stdio server without
    its own ``cwd`` runs in Wolli's folder (``--repository .``), so that folder counts too."""
    folder = config.cwd or (os.path.abspath(cwd or os.getcwd()) if config.transport == "stdio" else None)
    parts = [config.name, config.transport, config.command, list(config.args), sorted(config.env), folder,
             config.url, sorted(config.headers)]
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()


def offer_to_json(offer: ServerOffer) -> dict[str, Any]:
    """Plain JSON (lists, not tuples), as it reads back from the file."""
    return json.loads(json.dumps({"tools": [dataclasses.asdict(t) for t in offer.tools],
            "prompts": [dataclasses.asdict(p) for p in offer.prompts],
            "resources": [dataclasses.asdict(r) for r in offer.resources],
            "serverName": offer.server_name, "serverVersion": offer.server_version}))


def offer_from_json(data: object) -> ServerOffer | None:
    """The offer back; None for anything malformed (the cache is then ignored for it)."""
    if not isinstance(data, dict):
        return None
    try:
        tools = [ToolInfo(**{**t, "input_schema": dict(t["input_schema"])}) for t in data.get("tools") or []]
        prompts = [PromptInfo(name=p["name"], description=p.get("description", ""), arguments=tuple(
            PromptArgumentInfo(**a) for a in p.get("arguments") or [])) for p in data.get("prompts") or []]
        resources = [ResourceInfo(**r) for r in data.get("resources") or []]
    except (TypeError, KeyError, ValueError, AttributeError):
        return None
    if not all(isinstance(t.name, str) and isinstance(t.description, str) for t in tools):
        return None
    if not all(t.input_schema.get("type") == "object" for t in tools):
        return None  # written by :func:`~.tools.checked_offer`: always an object schema
    return ServerOffer(tools=tools, prompts=prompts, resources=resources, schemas_checked=True,
                       server_name=str(data.get("serverName") or ""), server_version=str(data.get("serverVersion") or ""))


class OfferCache:
    """The file, read once per run and written only when a list is new or changed."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._entries: dict[str, Any] | None = None

    def _read(self) -> dict[str, Any]:
        if self.path is None:
            return {}
        try:
            data = parse_json(read_capped(self.path, MAX_FILE_BYTES).decode("utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("servers"), dict):
            return {}
        return {k: v for k, v in data["servers"].items() if isinstance(v, dict)}

    def entries(self) -> dict[str, Any]:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def get(self, key: str) -> ServerOffer | None:
        entry = self.entries().get(key)
        return offer_from_json(entry.get("offer")) if entry is not None else None

    def put(self, key: str, name: str, offer: ServerOffer) -> bool:
        """Keep ``offer`` for ``key``; returns whether the file was written."""
        if self.path is None:
            return False
        data = offer_to_json(offer)
        if len(json.dumps(data, ensure_ascii=False)) > MAX_ENTRY_BYTES:
            return False
        known = self.entries().get(key)
        now = time.time()
        if known is not None and known.get("offer") == data and now - float(known.get("savedAt") or 0) < REFRESH_AFTER_S:
            return False
        try:
            with locked(self.path):
                entries = self._read()  # another Wolli may have written since
                entries[key] = {"server": name, "savedAt": now, "offer": data}
                if len(entries) > MAX_ENTRIES:
                    oldest = sorted(entries, key=lambda k: float(entries[k].get("savedAt") or 0))
                    for stale in oldest[: len(entries) - MAX_ENTRIES]:
                        del entries[stale]
                write_json_atomic(self.path, {"version": VERSION, "servers": entries}, mode=0o600)
        except OSError:
            return False  # a cache that cannot be written only costs the next start its head start
        self._entries = entries
        return True
