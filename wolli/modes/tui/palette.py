"""The command palette (Ctrl+S or F1): every slash command and the app's common actions.

Each hit reads ``Category: name`` with its description as help. An extension command that
is disabled stays listed with its reason and tells it again when chosen; a hidden one is
not listed. Slash commands run exactly as if typed (arguments are asked for where the
command needs them); actions run the key binding's action. Names and descriptions come from
extensions: they are shown literally (Textual would read a plain string as markup).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content
from textual.markup import escape

if TYPE_CHECKING:
    from .app_view import TuiApp

# (category, title, description, app action)
ACTIONS: tuple[tuple[str, str, str, str], ...] = (
    ("Model", "Choose model", "pick a model with fuzzy search (Ctrl+L)", "select_model"),
    ("Model", "Next model", "the next model in scope (Ctrl+P)", "cycle_model(1)"),
    ("Model", "Previous model", "the previous model in scope", "cycle_model(-1)"),
    ("Model", "Next thinking level", "cycle the thinking level (Shift+Tab)", "cycle_thinking"),
    ("View", "Expand or collapse tools", "tool output in full or short (Ctrl+O)", "toggle_tools"),
    ("View", "Show or hide thinking", "thinking blocks (Ctrl+T)", "toggle_thinking"),
    ("View", "Show earlier messages", "mount older transcript rows (Ctrl+Home)", "show_earlier"),
    ("Editor", "Edit in external editor", "$VISUAL / $EDITOR (Ctrl+G)", "external_editor"),
    ("Session", "Stop the agent", "abort the run; queued messages return (Esc)", "interrupt"),
)


class WolliCommands(Provider):
    def _hits(self) -> list[tuple[str, str, Callable[[], Any]]]:
        """(text, help, callback) for everything the palette offers."""
        app = cast("TuiApp", self.app)  # Textual types it as any App; the palette only runs in Wolli's
        controller = app.controller
        out: list[tuple[str, str, Callable[[], Any]]] = []
        for entry in controller.command_entries():
            help_text = entry.description + (f"  {entry.usage}" if entry.usage else "")
            if entry.availability == "disabled":
                reason = entry.reason or "not available right now"
                help_text = f"(disabled: {reason}) {help_text}"
                run: Callable[[], Any] = partial(app.notify, f"/{entry.name} is disabled: {reason}", severity="warning")
            else:
                run = partial(app.run_slash_command, f"/{entry.name}")
            out.append((f"{entry.category}: /{entry.name}", help_text, run))
        for category, title, description, action in ACTIONS:
            out.append((f"{category}: {title}", description, partial(app.run_action, action)))
        return out

    async def discover(self) -> Hits:
        for text, help_text, run in self._hits():
            yield DiscoveryHit(Content(text), run, text=text, help=escape(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, help_text, run in self._hits():
            score = max(matcher.match(text), matcher.match(help_text) * 0.5)
            if score > 0:
                yield Hit(score, _highlight(matcher, text), run, text=text, help=escape(help_text))


def _highlight(matcher: Matcher, text: str) -> Content:
    """``text`` literally, with the letters the query matched highlighted."""
    content = Content(text)
    _, offsets = matcher.fuzzy_search.match(matcher.query, text)
    for offset in offsets:
        if not text[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content
