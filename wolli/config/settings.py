"""Settings: ``WOLLI_HOME/settings.json`` overridden by the agent's own ``settings.json``.

Keys follow pi's settings where they apply (camelCase in the file). Reading merges the two
files deeply (agent wins); writing targets one file (``"agent"`` by default) and notifies
subscribers. A malformed file is reported in ``errors`` and treated as empty, so a typo in
settings never stops Wolli from starting.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from . import paths

Target = Literal["agent", "global"]

DEFAULTS: dict[str, Any] = {
    "defaultProvider": None,
    "defaultModel": None,
    "defaultThinkingLevel": "medium",
    "steeringMode": "one-at-a-time",
    "followUpMode": "one-at-a-time",
    "toolExecution": "parallel",
    "theme": "dark",
    "shellPath": None,
    "quietStartup": False,
    "compaction": {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000},
    "retry": {"enabled": True, "maxRetries": 3, "baseDelayMs": 2000, "maxDelayMs": 60000},
    "extensions": [],
    "skills": [],
    "prompts": [],
    "customTools": [],
    "enabledModels": None,
    "hideThinkingBlock": False,
}


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def read_json_file(path: Path, errors: list[str]) -> dict[str, Any]:
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        errors.append(f"Could not read {path}: {exc}")
        return {}
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        errors.append(f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); ignoring it.")
        return {}
    if not isinstance(data, dict):
        errors.append(f"{path} must hold a JSON object; ignoring it.")
        return {}
    return data


def write_json_atomic(path: Path, data: Any, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, ensure_ascii=False)
            fh.write("\n")
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Settings:
    """Merged, writable view of the global and agent settings files."""

    def __init__(self, agent: str | None = None, *, global_path: Path | None = None, agent_path: Path | None = None) -> None:
        self.global_path = global_path or paths.settings_path()
        self.agent_path = agent_path or (paths.agent_home(agent) / "settings.json")
        self.errors: list[str] = []
        self._global: dict[str, Any] = {}
        self._agent: dict[str, Any] = {}
        self._merged: dict[str, Any] = {}
        self._subscribers: list[Callable[[dict[str, Any]], None]] = []
        self._overrides: dict[str, Any] = {}
        self.reload()

    def reload(self) -> None:
        self.errors = []
        self._global = read_json_file(self.global_path, self.errors)
        self._agent = read_json_file(self.agent_path, self.errors)
        self._remerge()

    def _remerge(self) -> None:
        merged = deep_merge(DEFAULTS, self._global)
        merged = deep_merge(merged, self._agent)
        self._merged = deep_merge(merged, self._overrides)

    # ------------------------------------------------------------------ reading

    def get(self, key: str, default: Any = None) -> Any:
        """A value by key; dotted keys reach into objects (``compaction.reserveTokens``)."""
        node: Any = self._merged
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return copy.deepcopy(node) if node is not None else default

    def all(self) -> dict[str, Any]:
        return copy.deepcopy(self._merged)

    def __getitem__(self, key: str) -> Any:
        return self.get(key)

    # ------------------------------------------------------------------ writing

    def override(self, values: dict[str, Any]) -> None:
        """Process-only values (CLI flags) that win over both files and are never written."""
        self._overrides = deep_merge(self._overrides, values)
        self._remerge()

    def update(self, partial: dict[str, Any], target: Target = "agent") -> None:
        path = self.agent_path if target == "agent" else self.global_path
        current = self._agent if target == "agent" else self._global
        updated = deep_merge(current, partial)
        write_json_atomic(path, updated)
        if target == "agent":
            self._agent = updated
        else:
            self._global = updated
        self._remerge()
        self._notify()

    def delete(self, key: str, target: Target = "agent") -> None:
        path = self.agent_path if target == "agent" else self.global_path
        current = copy.deepcopy(self._agent if target == "agent" else self._global)
        node = current
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
            if node is None:
                return
        if isinstance(node, dict) and parts[-1] in node:
            del node[parts[-1]]
            write_json_atomic(path, current)
            if target == "agent":
                self._agent = current
            else:
                self._global = current
            self._remerge()
            self._notify()

    def subscribe(self, callback: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def _notify(self) -> None:
        snapshot = self.all()
        for callback in list(self._subscribers):
            try:
                callback(snapshot)
            except Exception:
                pass
