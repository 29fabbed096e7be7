"""``/model`` and Ctrl+L: the available models, fuzzy-searched, the current one marked."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from ...interactive.fuzzy import fuzzy_score
from .picker_base import PickerScreen

if TYPE_CHECKING:
    from ....ai.types import Model


def _key(model: Model) -> str:
    return f"{model.provider}/{model.id}"


def _tokens(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1000}K"


class ModelPicker(PickerScreen):
    def __init__(self, models: list[Model], current: Model | None, search: str = "") -> None:
        super().__init__("Choose a model", search)
        self.models = list(models)
        self.current_key = _key(current) if current is not None else None

    def rows(self, query: str) -> list[tuple[Text | str, Any]]:
        if query.strip():
            scored = [(s, m) for m in self.models
                      if (s := max((fuzzy_score(query.strip(), t) or -10**9) for t in (_key(m), m.name))) > -10**9]
            scored.sort(key=lambda pair: -pair[0])
            models = [m for _, m in scored]
        else:
            models = self.models
        rows: list[tuple[Text | str, Any]] = []
        width = max((len(_key(m)) for m in models), default=0) + 2
        for model in models:
            label = Text()
            current = _key(model) == self.current_key
            label.append("● " if current else "  ", style="bold")
            label.append(_key(model).ljust(width), style="bold" if current else "")
            details = [model.name] if model.name and model.name != model.id else []
            details.append(f"{_tokens(model.context_window)} context")
            if getattr(model, "reasoning", False):
                details.append("thinking")
            label.append(" · ".join(details), style="dim")
            rows.append((label, model))
        return rows

    def initial_index(self) -> int:
        if self.search.value.strip():
            return 0
        keys = [_key(m) for m in self.values]
        return keys.index(self.current_key) if self.current_key in keys else 0
