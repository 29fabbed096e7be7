"""The ``context`` a tool's ``render_call`` / ``render_result`` receives (TUI and line mode).

Its members (docs/extensions.md, render_call): the call's ``args``, ``tool_call_id``, ``cwd``, whether the
row is ``expanded``, the result ``is_partial`` or ``is_error``, ``execution_started``,
``args_complete``, ``show_images``, the row's ``status`` (pending, running, success, error),
``state`` (a dict the two renderers of one row share), ``last_component`` (what this slot's
renderer returned last time, to update in place) and ``invalidate()`` (draw the row again).
It reads as attributes and as a mapping (``context.expanded``, ``context["expanded"]``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any


def _nothing() -> None:
    return None


@dataclass
class ToolRenderContext:
    tool_call_id: str
    args: object  # the call's arguments as the model sent them (a dict, or None before they are complete)
    cwd: str | None = None
    expanded: bool = False
    is_partial: bool = False
    is_error: bool = False
    execution_started: bool = False
    args_complete: bool = True
    show_images: bool = False
    status: str = "pending"
    state: dict[str, Any] = field(default_factory=dict)
    last_component: object = None
    invalidate: Callable[[], None] = _nothing

    def __getitem__(self, key: str) -> object:
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None

    def get(self, key: str, default: object = None) -> object:
        return getattr(self, key, default)

    def keys(self) -> list[str]:
        return [f.name for f in fields(self)]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self.keys()
