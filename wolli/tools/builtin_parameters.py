"""The built-in tools' parameters: the written-out schema now, the pydantic class on first use."""

from __future__ import annotations

from typing import Any

from ..agent.tool import LazyParameters
from .schemas import TOOL_SCHEMAS

_MODELS = {"read": "ReadParams", "bash": "BashParams", "edit": "EditParams", "write": "WriteParams",
           "grep": "GrepParams", "find": "FindParams", "ls": "LsParams"}


def builtin_parameters(tool: str) -> LazyParameters:
    """``tool``'s schema now, its parameter class (``tools/params.py``) on the first call."""

    def load() -> Any:
        from . import params

        return getattr(params, _MODELS[tool])

    return LazyParameters(TOOL_SCHEMAS[tool], load)
