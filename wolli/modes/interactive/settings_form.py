"""The settings ``/settings`` edits: which keys, their kinds and choices (pure data).

Only settings a person changes while working are in the form; lists (extensions, skills,
``enabledModels``) and provider configuration are edited in the JSON files, where comments
and order survive. Values are written to the agent's settings file, so they win over the
global one for this agent (docs/settings.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...config.settings import Settings

THINKING_CHOICES = ("off", "minimal", "low", "medium", "high", "xhigh")


@dataclass(frozen=True)
class SettingField:
    """One row of the /settings form: the setting it edits and how."""

    key: str  # dotted for nested values: "compaction.enabled"
    label: str
    kind: str  # "bool" | "choice" | "int" | "text"
    help: str = ""
    choices: tuple[str, ...] = ()


def setting_fields(theme_names: list[str]) -> list[SettingField]:
    return [
        SettingField("defaultThinkingLevel", "Thinking level", "choice", "for new sessions (clamped to the model)",
                     THINKING_CHOICES),
        SettingField("theme", "Theme", "choice", "colours of the full-screen app", tuple(theme_names)),
        SettingField("hideThinkingBlock", "Hide thinking", "bool", "start thinking blocks collapsed (Ctrl+T shows them)"),
        SettingField("steeringMode", "Steering", "choice", "messages sent while the agent works: one at a time or all",
                     ("one-at-a-time", "all")),
        SettingField("followUpMode", "Follow-ups", "choice", "queued follow-ups: one at a time or all",
                     ("one-at-a-time", "all")),
        SettingField("toolExecution", "Tool execution", "choice", "several tool calls of one answer",
                     ("parallel", "sequential")),
        SettingField("compaction.enabled", "Auto-compaction", "bool", "summarise old context near the window's end"),
        SettingField("retry.enabled", "Retry", "bool", "retry failed provider requests"),
        SettingField("retry.maxRetries", "Max retries", "int", "attempts after the first"),
        SettingField("autoReload", "Auto-reload", "bool", "reload extensions when their files change"),
        SettingField("quietStartup", "Quiet start-up", "bool", "no start-up notices"),
        SettingField("extensionTimeoutMs", "Handler timeout (ms)", "int", "time an extension handler may take; 0 = none"),
        SettingField("shellPath", "Shell", "text", "shell for bash and !commands (empty: default)"),
    ]


def read_values(settings: Settings, fields: list[SettingField]) -> dict[str, Any]:
    return {f.key: settings.get(f.key) for f in fields}


def parse_value(field: SettingField, raw: object) -> object:
    """A value as typed (line mode) or chosen (TUI) -> the JSON value; ValueError if wrong."""
    if field.kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("on", "true", "yes", "1"):
            return True
        if text in ("off", "false", "no", "0"):
            return False
        raise ValueError(f"{field.label}: say on or off")
    if field.kind == "int":
        try:
            value = int(str(raw).strip())
        except ValueError:
            raise ValueError(f"{field.label}: a whole number, not {raw!r}") from None
        if value < 0:
            raise ValueError(f"{field.label}: not below 0")
        return value
    if field.kind == "choice":
        text = str(raw).strip()
        if text not in field.choices:
            raise ValueError(f"{field.label}: one of {', '.join(field.choices)}")
        return text
    text = str(raw if raw is not None else "").strip()
    return text or None


def as_update(changes: dict[str, Any]) -> dict[str, Any]:
    """``{"retry.enabled": False}`` -> ``{"retry": {"enabled": False}}`` for Settings.update."""
    out: dict[str, Any] = {}
    for key, value in changes.items():
        node = out
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return out
