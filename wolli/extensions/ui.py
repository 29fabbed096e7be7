"""``ctx.ui`` where no one can answer: the print and json modes (docs/extensions.md, UI factories).

Dialogs resolve at once to their inert defaults (``select``/``input``/``editor`` -> None,
``confirm`` -> False) and fire-and-forget calls do nothing, so an extension never blocks on
UI that cannot appear. The TUI and RPC modes bring their own implementations of the same
methods.

``ask_permission`` puts the permission question (:mod:`wolli.permissions.prompt`); its
fallback here builds it from ``select``/``editor``/``input``, so a front end without a
dialog of its own still asks (headless ones are never asked: the gate refuses instead).

Members that only mean something in the full-screen app (custom components, the editor
component, autocomplete providers, themes, tool expansion) exist here too, so an extension
written for the TUI loads and runs headless: setters are ignored, getters give the neutral
answer, ``custom()`` resolves to None, ``set_theme`` reports that there is no theme to set and
``theme`` styles nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..ai.abort import AbortSignal

if TYPE_CHECKING:
    from ..permissions.prompt import PermissionAnswer, PermissionRequest


def option_label(option: object) -> str:
    """How a ``select`` option is shown: a string, or a dict's ``label``/``title``/``value``."""
    if isinstance(option, dict):
        return str(option.get("label") or option.get("title") or option.get("value"))
    return str(option)


def option_value(option: object) -> object:
    """What choosing a ``select`` option answers: a dict's ``value``, else the option."""
    if isinstance(option, dict) and "value" in option:
        return option["value"]
    return option


T = TypeVar("T")

class NullUI:
    """The inert ``ctx.ui`` of the headless modes."""

    has_ui = False

    async def select(self, title: str, options: Sequence[T], *, timeout: float | None = None, signal: AbortSignal | None = None) -> T | None:
        return None

    async def confirm(
        self, title: str, message: str = "", *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> bool:
        return False

    async def input(
        self, title: str, placeholder: str | None = None, *, timeout: float | None = None, signal: AbortSignal | None = None
    ) -> str | None:
        return None

    async def editor(self, title: str, prefill: str | None = None, *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        return None

    async def ask_permission(self, request: PermissionRequest, *, signal: AbortSignal | None = None) -> PermissionAnswer:
        """May this tool call run? Front ends with a dialog of their own override this."""
        from ..permissions.prompt import ask_with_dialogs

        return await ask_with_dialogs(self, request, signal=signal)

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

    def set_widget(self, key: str, content: object, *, placement: str = "above_editor") -> None:
        pass

    def set_footer(self, factory: object) -> None:
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

    async def custom(self, factory: object, *, overlay: bool = False) -> object:
        return None

    def add_autocomplete_provider(self, factory: object) -> None:
        pass

    def get_tools_expanded(self) -> bool:
        return False

    def set_tools_expanded(self, expanded: bool) -> None:
        pass

    def set_editor_component(self, factory: object) -> None:
        pass

    def get_editor_component(self) -> object:
        return None

    def get_all_themes(self) -> list[dict[str, Any]]:
        return []

    def get_theme(self, name: str) -> object:
        return None

    def set_theme(self, theme: object) -> dict[str, Any]:
        return {"success": False, "error": "themes exist only in the full-screen app (ctx.mode == 'tui')"}

    @property
    def theme(self) -> PlainTheme:
        return PLAIN_THEME

    def reset(self) -> None:
        """Not for extensions: the host calls it on ``/reload``, before the extensions load
        again, so what the old versions registered with the UI (autocomplete providers,
        widgets, statuses, footer, editor) goes with them."""


class PlainTheme:
    """A theme that leaves text as it is: what ``ui.theme`` is without a screen to colour."""

    name = "plain"

    def fg(self, token: str, text: str) -> str:
        return text

    def bg(self, token: str, text: str) -> str:
        return text

    def bold(self, text: str) -> str:
        return text

    def italic(self, text: str) -> str:
        return text

    def underline(self, text: str) -> str:
        return text

    def strikethrough(self, text: str) -> str:
        return text


PLAIN_THEME = PlainTheme()


if TYPE_CHECKING:
    from .context import ExtensionUI

    _conforms: type[ExtensionUI] = NullUI
