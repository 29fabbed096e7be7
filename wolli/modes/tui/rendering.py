"""What an extension renderer may return, made displayable.

Renderers (``render_call``, ``render_result``, message renderers, widget lines) return a
string (plain, or styled with ``ui.theme`` ANSI codes), a list of lines, a Rich renderable or
Textual ``Content``; ``None`` means "use the built-in rendering".
"""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.text import Text


def as_renderable(value: Any) -> RenderableType | None:
    if value is None:
        return None
    if isinstance(value, str):
        return Text.from_ansi(value) if "\x1b[" in value else Text(value)
    if isinstance(value, list | tuple):
        return Text("\n").join(t if isinstance(t, Text) else Text.from_ansi(str(t)) for t in value)
    if hasattr(value, "__rich_console__") or hasattr(value, "__rich__"):
        return value
    return Text(str(value))


class RenderContext:
    """What tool rows and message renderers need from the app, without the app itself."""

    def __init__(self, app: Any) -> None:
        self._app = app

    @property
    def spec(self) -> Any:
        return self._app.theme_spec

    @property
    def ui_theme(self) -> Any:
        return self._app.ui_theme

    @property
    def cwd(self) -> str | None:
        session = self._app.controller.session
        return session.cwd if session is not None else None

    @property
    def tools_expanded(self) -> bool:
        return self._app.tools_expanded

    def tool(self, name: str) -> Any:
        """The tool definition named ``name`` in the active session (its renderers), if any."""
        session = self._app.controller.session
        for tool in getattr(session, "all_tools", None) or []:
            if tool.name == name:
                return tool
        return None

    def report_renderer_error(self, message: str) -> None:
        self._app.add_notice(message, "error")
