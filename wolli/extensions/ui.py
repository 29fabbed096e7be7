"""``ctx.ui`` where no one can answer: the print and json modes (spec "Mode Behavior").

Dialogs resolve at once to their inert defaults (``select``/``input``/``editor`` -> None,
``confirm`` -> False) and fire-and-forget calls do nothing, so an extension never blocks on
UI that cannot appear. The TUI and RPC modes bring their own implementations of the same
methods.
"""

from __future__ import annotations

from typing import Any


class NullUI:
    """The inert ``ctx.ui`` of the headless modes."""

    has_ui = False

    async def select(self, title: str, options: list[Any], *, timeout: float | None = None, signal: Any = None) -> Any:
        return None

    async def confirm(
        self, title: str, message: str = "", *, timeout: float | None = None, signal: Any = None
    ) -> bool:
        return False

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None, signal: Any = None
    ) -> str | None:
        return None

    async def editor(self, title: str, prefill: str | None = None, *, timeout: float | None = None,
                     signal: Any = None) -> str | None:
        return None

    def notify(self, message: str, level: str = "info") -> None:
        pass

    def set_status(self, key: str, text: str | None) -> None:
        pass

    def set_working_message(self, text: str | None = None) -> None:
        pass

    def set_working_visible(self, visible: bool) -> None:
        pass

    def set_working_indicator(self, frames: list[str] | None = None, interval_ms: int | None = None) -> None:
        pass

    def set_widget(self, key: str, content: Any, *, placement: str = "above_editor") -> None:
        pass

    def set_footer(self, factory: Any) -> None:
        pass

    def set_title(self, text: str) -> None:
        pass

    def set_editor_text(self, text: str) -> None:
        pass

    def get_editor_text(self) -> str:
        return ""

    def paste_to_editor(self, text: str) -> None:
        pass

    def open_url(self, url: str) -> None:
        pass
