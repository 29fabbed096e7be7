"""Typed readings of the settings a live session uses, taken at the moment of use.

Defaults live in one place (``wolli.config.settings.DEFAULTS``); nothing here repeats them.
Each reading is fresh, so a live session follows a settings change (``/settings``, an
extension's ``settings.update``, an edited file after ``/reload``) from its next use on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...base.records import record
from ...config.settings import Settings

if TYPE_CHECKING:
    from ...session.compaction import CompactionSettings


@record(frozen=True)
class RetrySettings:
    enabled: bool
    max_retries: int
    base_delay_ms: int
    max_delay_ms: int


def _int(settings: Settings, key: str) -> int:
    value: Any = settings.get(key)
    try:
        return max(0, int(value))
    except (TypeError, ValueError):  # a wrong type in the file: the settings loader reports it
        from ...config.settings import DEFAULTS

        node: Any = DEFAULTS
        for part in key.split("."):
            node = node[part]
        return int(node)


def retry_settings(settings: Settings) -> RetrySettings:
    return RetrySettings(
        enabled=bool(settings.get("retry.enabled")),
        max_retries=_int(settings, "retry.maxRetries"),
        base_delay_ms=_int(settings, "retry.baseDelayMs"),
        max_delay_ms=_int(settings, "retry.maxDelayMs"),
    )


def compaction_settings(settings: Settings) -> CompactionSettings:
    from ...session.compaction import CompactionSettings

    return CompactionSettings(
        enabled=bool(settings.get("compaction.enabled")),
        reserve_tokens=_int(settings, "compaction.reserveTokens"),
        keep_recent_tokens=_int(settings, "compaction.keepRecentTokens"),
    )


def stream_idle_timeout(settings: Settings) -> float:
    """settings ``streamIdleTimeoutMs`` in seconds; 0 turns the limit off (a day, in effect)."""
    value = _int(settings, "streamIdleTimeoutMs")
    return value / 1000 if value > 0 else 86400.0


def default_thinking_level(settings: Settings) -> str:
    return str(settings.get("defaultThinkingLevel"))
