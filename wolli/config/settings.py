"""Settings: ``WOLLI_HOME/settings.json`` overridden by the agent's own ``settings.json``.

Keys follow pi's settings where they apply (camelCase in the file). Reading merges the two
files deeply (agent wins); writing targets one file (``"agent"`` by default) and notifies
subscribers. A malformed file is reported in ``errors`` and treated as empty, so a typo in
settings never stops Wolli from starting; writing to a malformed file is refused
(:class:`SettingsError`) so the user's text is never replaced.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from ..base.json_input import parse_json
from ..base.safe_files import CONFIG_FILE_LIMIT, read_text_capped
from . import paths
from .errors import config_error, json_syntax_error, locate
from .file_lock import locked
from .paths import ensure_private_dir

Target = Literal["agent", "global"]
TARGETS = ("agent", "global")


class SettingsError(ValueError):
    """A write was refused (unknown target, or the target file cannot be read or parsed)."""

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
    "disabledExtensions": [],
    "packages": [],
    "claudeHooks": {},
    "enabledModels": None,
    "hideThinkingBlock": False,
    "extensionTimeoutMs": 60000,
    "autoReload": False,
    # Rule lists are read file by file (they add up); see wolli/permissions/store.py.
    "permissions": {"additionalDirectories": []},
    "checkpoints": {"enabled": True, "maxFileBytes": 10_000_000},
    "streamIdleTimeoutMs": 30000,
    # docs/subagents.md: the task tool, children at once per session, more definition paths.
    "subagents": {"enabled": True, "maxParallel": 4, "paths": []},
    # docs/server.md: plain `wolli` joins (or starts) the agent's `wolli serve` instead of
    # running in-process; a server started that way exits after idleTimeout seconds alone.
    "server": {"attach": False, "idleTimeout": 600},
}


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``override`` merged into a copy of ``base``: objects merge key by key, anything else
    replaces. Nothing of either argument is shared with the result."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def read_json_file(path: Path, errors: list[str], *, validate: bool = True) -> dict[str, Any]:
    """The object in ``path`` ({} when missing or broken; problems go to ``errors``).
    ``validate`` drops known settings of the wrong type (reading, not rewriting, a file)."""
    try:
        text = read_text_capped(path, CONFIG_FILE_LIMIT)
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        errors.append(config_error(path, f"Could not read it ({exc})", hint="ignoring it"))
        return {}
    if not text.strip():
        return {}
    try:
        data = parse_json(text)
    except json.JSONDecodeError as exc:
        errors.append(json_syntax_error(path, exc, "ignoring the whole file until it is fixed"))
        return {}
    if not isinstance(data, dict):
        errors.append(config_error(path, "must hold a JSON object", line=1, hint="ignoring it"))
        return {}
    if validate:
        errors.extend(drop_invalid(data, path, text))
        errors.extend(unknown_keys(data, path, text))
    return data


# What each setting must be, beside DEFAULTS: a JSON type, or the allowed values.
SCHEMA: dict[str, Any] = {
    "defaultProvider": str,
    "defaultModel": str,
    "defaultThinkingLevel": ("off", "minimal", "low", "medium", "high", "xhigh"),
    "steeringMode": ("one-at-a-time", "all"),
    "followUpMode": ("one-at-a-time", "all"),
    "toolExecution": ("parallel", "sequential"),
    "theme": str,
    "shellPath": str,
    "quietStartup": bool,
    "compaction": {"enabled": bool, "reserveTokens": int, "keepRecentTokens": int},
    "retry": {"enabled": bool, "maxRetries": int, "baseDelayMs": int, "maxDelayMs": int},
    "extensions": list,
    "skills": list,
    "prompts": list,
    "customTools": list,
    # Installed packages (docs/packages.md): records written by `wolli install`.
    "packages": list,
    "disabledExtensions": list,
    # Claude Code hooks imported with `wolli import claude-settings`.
    "claudeHooks": dict,
    "enabledModels": list,
    "hideThinkingBlock": bool,
    "extensionTimeoutMs": int,
    "autoReload": bool,
    "permissions": {"allow": list, "ask": list, "deny": list, "defaultMode": str, "additionalDirectories": list},
    "checkpoints": {"enabled": bool, "maxFileBytes": int},
    "streamIdleTimeoutMs": int,
    "server": {"attach": bool, "idleTimeout": int},
}
_TYPE_NAMES = {str: "a string", bool: "true or false", int: "a whole number", list: "a list", dict: "an object"}


def drop_invalid(data: dict[str, Any], path: Path, text: str, schema: dict[str, Any] = SCHEMA, prefix: str = "") -> list[str]:
    """Remove values of known settings that have the wrong type (the default applies
    instead) and say so, naming the line. Unknown keys are kept: extensions read their own."""
    errors: list[str] = []
    for key in list(data):
        expected = schema.get(key)
        if expected is None:
            continue
        value = data[key]
        field = prefix + key
        if isinstance(expected, dict):
            if isinstance(value, dict):
                errors += drop_invalid(value, path, text, expected, field + ".")
                continue
            problem = f"expected an object, got {json.dumps(value)}"
        elif isinstance(expected, tuple):
            if value in expected or value is None:
                continue
            problem = f"{json.dumps(value)} is not one of {', '.join(expected)}"
        else:
            wrong_bool = expected is int and isinstance(value, bool)
            if value is None or (isinstance(value, expected) and not wrong_bool):
                continue
            problem = f"expected {_TYPE_NAMES[expected]}, got {json.dumps(value)}"
        del data[key]
        errors.append(config_error(path, problem, line=locate(text, field), field=field, hint="using the default"))
    return errors


def unknown_keys(data: dict[str, Any], path: Path, text: str, schema: dict[str, Any] = SCHEMA,
                 prefix: str = "") -> list[str]:
    """Name the keys that look like typos of a setting (``retyr``: did you mean ``retry``?).

    At the top level only keys close to a known one are named: any other key may belong to
    an extension, which reads its own settings. Inside Wolli's own objects (``retry``,
    ``compaction``) every unknown key is named: nothing else reads them.
    """
    import difflib

    errors: list[str] = []
    for key in data:
        field = prefix + key
        expected = schema.get(key)
        if isinstance(expected, dict) and isinstance(data[key], dict):
            errors += unknown_keys(data[key], path, text, expected, field + ".")
            continue
        if key in schema:
            continue
        near = difflib.get_close_matches(key, list(schema), n=1, cutoff=0.8 if not prefix else 0.5)
        if not prefix and (not near or abs(len(near[0]) - len(key)) > 2):
            continue  # not a typo of a setting: an extension's own key
        hint = f"did you mean {prefix + near[0]!r}?" if near else f"known: {', '.join(sorted(schema))}"
        shown = field if field.isprintable() else json.dumps(field)
        errors.append(config_error(path, "unknown setting", line=locate(text, field), field=shown,
                                   hint=hint + (" (kept for extensions)" if not prefix else " (ignored)")))
    return errors


def write_json_atomic(path: Path, data: object, mode: int | None = None) -> None:
    """Write via a temporary file and a rename, so a crash never leaves half a file.

    ``mode`` defaults to the existing file's permissions (0644 for a new file).
    """
    if mode is None:
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            mode = 0o644
    ensure_private_dir(path.parent)  # WOLLI_HOME or an agent home: the user's alone
    import tempfile  # with the first write: not on a run that only reads settings (~5 ms)

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
        """Re-read both files; subscribers hear about it when the merged view changed."""
        before = self._merged
        self.errors = []
        self._global = read_json_file(self.global_path, self.errors)
        self._agent = read_json_file(self.agent_path, self.errors)
        self._remerge()
        if before and self._merged != before:
            self._notify()

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

    def file_values(self, target: Target) -> dict[str, Any]:
        """What one file says, unmerged (settings whose lists add up across files read it)."""
        self._path_of(target)
        return copy.deepcopy(self._agent if target == "agent" else self._global)

    # ------------------------------------------------------------------ writing

    def override(self, values: dict[str, Any]) -> None:
        """Process-only values (CLI flags) that win over both files and are never written."""
        before = self._merged
        self._overrides = deep_merge(self._overrides, values)
        self._remerge()
        if self._merged != before:
            self._notify()

    def _path_of(self, target: str) -> Path:
        if target not in TARGETS:
            raise SettingsError(f"unknown settings target {target!r}; use 'agent' or 'global'")
        return self.agent_path if target == "agent" else self.global_path

    def _current_file(self, target: str) -> tuple[Path, dict[str, Any]]:
        """The target file as it is on disk now (another process may have written it)."""
        path = self._path_of(target)
        problems: list[str] = []
        data = read_json_file(path, problems, validate=False)  # rewrite what the user wrote
        if problems:
            raise SettingsError(f"{problems[0]} Fix or remove the file before changing settings; it was left as it is.")
        return path, data

    def _store(self, target: str, path: Path, data: dict[str, Any]) -> None:
        write_json_atomic(path, data)
        if target == "agent":
            self._agent = data
        else:
            self._global = data
        self._remerge()
        self._notify()

    def update(self, partial: dict[str, Any], target: Target = "agent") -> None:
        """Deep-merge ``partial`` into one file (``"agent"`` or ``"global"``) and save it."""
        if not isinstance(partial, dict):
            raise SettingsError(f"settings updates are objects, got {type(partial).__name__}")
        with locked(self._path_of(target)):  # re-read and replace as one step among processes
            path, current = self._current_file(target)
            self._store(target, path, deep_merge(current, partial))

    def modify(self, change: Callable[[dict[str, Any]], None], target: Target = "agent") -> None:
        """Change one file in place with ``change(data)`` as one locked read-change-write (a
        list another process extended meanwhile keeps its new items)."""
        with locked(self._path_of(target)):
            path, current = self._current_file(target)
            change(current)
            self._store(target, path, current)

    def delete(self, key: str, target: Target = "agent") -> None:
        """Remove a (dotted) key from one file; a key that is not there is a no-op."""
        with locked(self._path_of(target)):
            path, current = self._current_file(target)
            node: Any = current
            parts = key.split(".")
            for part in parts[:-1]:
                node = node.get(part) if isinstance(node, dict) else None
                if node is None:
                    return
            if isinstance(node, dict) and parts[-1] in node:
                del node[parts[-1]]
                self._store(target, path, current)

    def subscribe(self, callback: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """Call ``callback(merged_settings)`` after every change; returns the unsubscribe."""
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback) if callback in self._subscribers else None

    def _notify(self) -> None:
        snapshot = self.all()
        for callback in list(self._subscribers):
            try:
                callback(snapshot)
            except Exception:
                pass
