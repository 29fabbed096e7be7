"""Model and thinking level of a live session: restore, clamp, record, switch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...agent.agent import Agent
from ...ai.types import THINKING_LEVELS, Model, ThinkingLevel
from ...config.settings import Settings
from ..events import ModelSelectEvent, ThinkingLevelSelectEvent
from .services import SessionServices
from .settings_view import default_thinking_level

if TYPE_CHECKING:
    from ...session.manager import SessionManager


class ModelSelection:
    """Part of :class:`~.live_session.LiveSession`: the members it reads are declared here."""

    agent: Agent
    services: SessionServices
    session_manager: SessionManager
    settings: Settings

    if TYPE_CHECKING:
        async def emit(self, event: object) -> None: ...

    def _find_model(self, stored: tuple[str, str] | None) -> Model | None:
        return self.services.model_registry.find(stored[0], stored[1]) if stored else None

    def _clamp_level(self, level: str | None) -> ThinkingLevel:
        if level not in THINKING_LEVELS:
            level = "off"
        model = self.agent.state.model
        if model is not None and not model.reasoning:
            return "off"
        return level  # type: ignore[return-value]

    def _record_model_and_level(self) -> None:
        model = self.agent.state.model
        if model is not None:
            self.session_manager.append_model_change(model.provider, model.id)
        self.session_manager.append_thinking_level_change(self.agent.state.thinking_level)

    def _record_overrides(self, stored_model: tuple[str, str] | None, stored_level: str | None) -> None:
        """A resumed session run with another model or level (``-c --model X --thinking Y``)
        records the change, so the next plain resume continues with what was used last."""
        model = self.agent.state.model
        if model is not None and stored_model != (model.provider, model.id):
            self.session_manager.append_model_change(model.provider, model.id)
        resumed_level = self._clamp_level(stored_level or default_thinking_level(self.settings))
        if self.agent.state.thinking_level != resumed_level:
            self.session_manager.append_thinking_level_change(self.agent.state.thinking_level)

    async def set_model(self, model: Model, source: str = "set") -> bool:
        """Switch models; False (nothing changes) when no API key is available for it."""
        if self.services.get_api_key(model) is None and not self.services.model_registry.is_available(model):
            return False
        previous = self.agent.state.model
        self.agent.set_model(model)
        self.session_manager.append_model_change(model.provider, model.id)
        clamped = self._clamp_level(self.agent.state.thinking_level)
        if clamped != self.agent.state.thinking_level:
            await self.set_thinking_level(clamped)
        await self.emit(ModelSelectEvent(model, previous, source))  # type: ignore[arg-type]
        return True

    async def set_thinking_level(self, level: str) -> ThinkingLevel:
        previous = self.agent.state.thinking_level
        clamped = self._clamp_level(level)
        self.agent.set_thinking_level(clamped)
        if clamped != previous:
            self.session_manager.append_thinking_level_change(clamped)
            await self.emit(ThinkingLevelSelectEvent(clamped, previous))
        return clamped
