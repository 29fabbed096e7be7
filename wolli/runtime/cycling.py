"""Stepping through models and thinking levels (Ctrl+P / Shift+Tab in the TUI, RPC's cycle_*).

Models cycle through the *scope*: the available models matching settings ``enabledModels``
(``provider/id`` or ``id`` patterns with ``*``), or every available model when that is not
set. Thinking levels cycle through :data:`THINKING_LEVELS` for a reasoning model only.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from ..ai.types import THINKING_LEVELS, Model


@dataclass(frozen=True)
class ModelCycle:
    model: Model
    thinking_level: str
    is_scoped: bool


def model_scope(session: Any) -> tuple[list[Model], bool]:
    """The models a cycle goes through, and whether ``enabledModels`` narrowed them."""
    available = list(session.services.model_registry.available())
    patterns = session.settings.get("enabledModels")
    if not isinstance(patterns, list) or not patterns:
        return available, False
    wanted = [str(p).lower() for p in patterns]
    scoped = [m for m in available
              if any(fnmatch.fnmatchcase(m.key.lower(), p) or fnmatch.fnmatchcase(m.id.lower(), p) for p in wanted)]
    return scoped, True


async def cycle_model(session: Any) -> ModelCycle | None:
    """Switch ``session`` to the next model of its scope; None when there is no other one."""
    models, scoped = model_scope(session)
    current = session.model
    keys = [m.key for m in models]
    if not models or (len(models) == 1 and current is not None and keys[0] == current.key):
        return None
    index = keys.index(current.key) if current is not None and current.key in keys else -1
    for step in range(1, len(models) + 1):
        candidate = models[(index + step) % len(models)]
        if await session.set_model(candidate, "cycle"):
            return ModelCycle(candidate, session.thinking_level, scoped)
    return None


async def cycle_thinking_level(session: Any) -> str | None:
    """The next thinking level (clamped by the session); None for a model without reasoning."""
    model = session.model
    if model is None or not getattr(model, "reasoning", False):
        return None
    current = session.thinking_level
    index = THINKING_LEVELS.index(current) if current in THINKING_LEVELS else -1
    level: str = await session.set_thinking_level(THINKING_LEVELS[(index + 1) % len(THINKING_LEVELS)])
    return level
