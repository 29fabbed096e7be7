"""Claude Code hook configuration: ``{"hooks": {Event: [{"matcher", "hooks": [...]}]}}``.

The same shape comes from a plugin's ``hooks/hooks.json`` (or ``hooks`` in its
``plugin.json``), from a Claude Code ``settings.json`` given with ``--claude-settings``, and
from ``claudeHooks`` in the agent's settings (written by ``wolli import claude-settings``).
Only ``command`` hooks run; other types (``prompt``, ``http``...) are reported and skipped.
Running them is :mod:`wolli.runtime.handlers.claude_hooks`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..base.json_input import parse_json
from ..base.safe_files import read_text_capped

# The events Wolli runs; others are reported once as not supported.
SUPPORTED_EVENTS = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart", "SessionEnd",
                    "PreCompact", "Notification")
KNOWN_UNSUPPORTED = ("SubagentStop", "SubagentStart", "PermissionRequest", "PermissionDenied",
                     "PostToolUseFailure", "PreCompactEnd", "PostCompact")
DEFAULT_TIMEOUT_S = 60.0
_LIMIT = 1024 * 1024


@dataclass(frozen=True)
class CommandHook:
    event: str  # Claude Code's event name
    matcher: str  # "" matches everything
    command: str
    timeout_s: float
    source: str  # the file it came from
    plugin_root: str | None = None  # CLAUDE_PLUGIN_ROOT for a plugin's hooks

    def matches(self, *names: str | None) -> bool:
        """Whether the matcher accepts any of ``names`` (a tool name, a start source...):
        empty or ``*`` accepts all; otherwise the whole name must match it as a regular
        expression (``Edit|Write``, ``mcp__.*``), as in Claude Code."""
        if self.matcher in ("", "*") or not names:  # events without a matcher ignore it, as Claude Code does
            return True
        try:
            pattern = re.compile(self.matcher)
        except re.error:
            return any(self.matcher == n for n in names if n)
        return any(n is not None and pattern.fullmatch(n) for n in names)


def parse_hooks(data: object, where: str, plugin_root: str | None = None) -> tuple[list[CommandHook], list[str]]:
    """The command hooks of a ``hooks`` object and a problem line for each entry left out."""
    hooks: list[CommandHook] = []
    problems: list[str] = []
    if data is None:
        return hooks, problems
    if not isinstance(data, dict):
        return hooks, [f"{where}: \"hooks\" must be an object of events"]
    for event, groups in data.items():
        if event not in SUPPORTED_EVENTS:
            problems.append(f"{where}: the {event} hook event is not supported by Wolli; its hooks are skipped")
            continue
        if not isinstance(groups, list):
            problems.append(f"{where}: hooks.{event} must be a list of {{\"matcher\", \"hooks\"}} objects")
            continue
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                problems.append(f"{where}: hooks.{event}: each entry needs a \"hooks\" list")
                continue
            matcher = group.get("matcher") or ""
            if not isinstance(matcher, str):
                problems.append(f"{where}: hooks.{event}: \"matcher\" must be a string")
                continue
            for hook in group["hooks"]:
                if not isinstance(hook, dict):
                    continue
                kind = hook.get("type", "command")
                command = hook.get("command")
                if kind != "command":
                    problems.append(f"{where}: hooks.{event}: {kind!r} hooks are not supported (only \"command\"); skipped")
                    continue
                if not isinstance(command, str) or not command.strip():
                    problems.append(f"{where}: hooks.{event}: a command hook needs a \"command\" string")
                    continue
                timeout = hook.get("timeout")
                seconds = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else DEFAULT_TIMEOUT_S
                hooks.append(CommandHook(event, matcher, command, seconds, where, plugin_root))
    return hooks, problems


def read_hooks_file(path: Path, plugin_root: str | None = None) -> tuple[list[CommandHook], list[str]]:
    """A ``hooks.json`` or a Claude Code ``settings.json``: its ``hooks`` object."""
    try:
        data = parse_json(read_text_capped(path, _LIMIT))
    except FileNotFoundError:
        return [], [f"{path}: no such file"]
    except (OSError, ValueError) as exc:
        return [], [f"{path}: cannot be read as JSON ({exc}); its hooks are skipped"]
    if not isinstance(data, dict):
        return [], [f"{path}: must hold a JSON object with \"hooks\""]
    return parse_hooks(data.get("hooks"), str(path), plugin_root)
