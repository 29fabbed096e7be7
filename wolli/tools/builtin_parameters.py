"""The built-in tools' parameters: the written-out schema now, the pydantic class on first use."""

from __future__ import annotations

from typing import Any

from ..agent.tool import LazyParameters
from .schemas import TOOL_SCHEMAS


def builtin_parameters(tool: str, model: str) -> LazyParameters:
    """``tool``'s schema now, its parameter class ``params.<model>`` on the first call."""

    def load() -> Any:
        from . import params

        return getattr(params, model)

    return LazyParameters(TOOL_SCHEMAS[tool], load)
