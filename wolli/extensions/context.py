"""The types of ``ctx`` that extension code is handed: its ``ui`` and its ``mode``.

``ctx.ui`` is one of several implementations (the TUI, the line mode, RPC, the headless
modes, the test harness); :class:`ExtensionUI` is the surface they all offer, as documented
in docs/extensions.md, so the type checker holds every one of them to it. ``ctx`` itself is
:class:`wolli.ExtensionContext` (``session``, ``ui``, ``mode``), defined by the runtime.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from ..ai.abort import AbortSignal

if TYPE_CHECKING:
    from ..permissions.prompt import PermissionAnswer, PermissionRequest

# Where the extension runs: the full-screen app, the line mode, RPC, json and print mode, and
# inside an editor over the Agent Client Protocol (docs/acp.md).
ExtensionMode = Literal["tui", "plain", "rpc", "json", "print", "acp"]
MODES: tuple[ExtensionMode, ...] = ("tui", "plain", "rpc", "json", "print", "acp")
NotifyLevel = Literal["info", "warning", "error"]
WidgetPlacement = Literal["above_editor", "below_editor"]
T = TypeVar("T")


class UITheme(Protocol):
    """``ctx.ui.theme``: styles text with the active theme's colours (ANSI codes in a string;
    the text comes back unchanged where nothing is coloured)."""

    name: str

    def fg(self, token: str, text: str) -> str: ...

    def bg(self, token: str, text: str) -> str: ...

    def bold(self, text: str) -> str: ...

    def italic(self, text: str) -> str: ...

    def underline(self, text: str) -> str: ...

    def strikethrough(self, text: str) -> str: ...


class ExtensionUI(Protocol):
    """``ctx.ui``: questions and notices for the user, in every mode (docs/extensions.md).

    Dialogs answer ``None`` (``False`` for ``confirm``) when cancelled, timed out (``timeout``
    seconds), aborted (``signal``), or where nobody can answer (``has_ui`` is false)."""

    has_ui: bool

    async def select(self, title: str, options: Sequence[T], *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> T | None: ...

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None,
                      signal: AbortSignal | None = None) -> bool: ...

    async def input(self, title: str, placeholder: str | None = None, *, timeout: float | None = None,
                    signal: AbortSignal | None = None) -> str | None: ...

    async def editor(self, title: str, prefill: str | None = None, *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None: ...

    # Answers what the author's component hands back: its type is the author's.
    async def custom(self, factory: Callable[..., Any], *, overlay: bool = False) -> Any: ...

    async def ask_permission(self, request: PermissionRequest, *, signal: AbortSignal | None = None) -> PermissionAnswer:
        """May this tool call run? (docs/permissions.md). The permission gate asks it; an
        answer of ``reject_once`` (also Esc, a closed dialog) stops the turn."""
        ...

    def notify(self, message: str, level: str = "info") -> None: ...

    def set_status(self, key: str, text: str | None) -> None: ...

    def set_working_message(self, text: str | None = None) -> None: ...

    def set_working_visible(self, visible: bool) -> None: ...

    def set_working_indicator(self, frames: list[str] | None = None, interval_ms: int | None = None) -> None: ...

    def set_widget(self, key: str, content: object, *, placement: str = "above_editor") -> None: ...

    def set_footer(self, factory: Callable[..., Any] | None) -> None: ...

    def set_title(self, text: str) -> None: ...

    def set_editor_text(self, text: str) -> None: ...

    def get_editor_text(self) -> str: ...

    def paste_to_editor(self, text: str) -> None: ...

    def open_url(self, url: str) -> None: ...

    def add_autocomplete_provider(self, factory: Callable[[Any], Any]) -> None: ...

    def get_tools_expanded(self) -> bool: ...

    def set_tools_expanded(self, expanded: bool) -> None: ...

    def set_editor_component(self, factory: Callable[..., Any] | None) -> None: ...

    def get_editor_component(self) -> object: ...

    def get_all_themes(self) -> list[dict[str, Any]]: ...

    def get_theme(self, name: str) -> object: ...

    def set_theme(self, theme: object) -> dict[str, Any]: ...

    @property
    def theme(self) -> UITheme: ...
