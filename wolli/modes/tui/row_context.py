"""What tool rows and message renderers need from the app: :class:`RenderContext`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from .app_view import TuiApp

if TYPE_CHECKING:
    from ...agent.tool import ToolDefinition
    from ...config.themes import ThemeSpec


class RenderContext:
    """What tool rows and message renderers need from the app, without the app itself."""

    def __init__(self, app: TuiApp) -> None:
        self._app = app

    @property
    def spec(self) -> ThemeSpec:
        return self._app.theme_spec

    @property
    def ui_theme(self) -> object:
        return self._app.ui_theme

    @property
    def cwd(self) -> str | None:
        session = self._app.controller.session
        return session.cwd if session is not None else None

    @property
    def tools_expanded(self) -> bool:
        return self._app.tools_expanded

    def tool(self, name: str) -> ToolDefinition | None:
        """The tool definition named ``name`` in the active session (its renderers), if any."""
        session = self._app.controller.session
        for tool in getattr(session, "all_tools", None) or []:
            if tool.name == name:
                return tool
        return None

    def renderer_failed(self, owner: str, what: str, exc: BaseException) -> Text:
        """Log a renderer's failure (traceback in the extension log); the line to show."""
        return self._app.extension_failed(owner, what, exc)
