"""The built-in commands' face (``interactive.commands.front.Front``) for a command an RPC
client asks the server to run (``packages``): what the command says goes to that client as
``notice`` events, its questions as extension UI dialogs (to every client of the session on a
server: the first answer wins). What has no counterpart over RPC (pickers, the clipboard, the
editor) is declined the way a cancelled dialog is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..interactive.commands.front import WithoutPickers

if TYPE_CHECKING:
    from ...ai.types import Model
    from .commands import RpcServer


class RpcFront(WithoutPickers):
    mode = "rpc"
    shows_model_changes = False
    shows_mode_changes = False

    def __init__(self, client: RpcServer) -> None:
        self._client = client

    def notify(self, text: str, level: str = "info") -> None:
        self._client.emit_notice(level if level in ("info", "warning", "error") else "info", text)

    def show_text(self, title: str, text: str) -> None:
        self._client.emit_notice("info", f"{title}\n\n{text}")

    def set_editor_text(self, text: str) -> None:
        self._client.emit_notice("info", text)

    def copy_to_clipboard(self, text: str) -> str:
        raise RuntimeError("the server has no clipboard of the client's")

    def request_quit(self) -> None:
        pass  # a command run for a client never ends the server

    def session_changed(self) -> None:
        pass

    def settings_changed(self, changed: dict[str, Any]) -> None:
        pass

    async def select(self, title: str, options: list[str]) -> str | None:
        chosen = await self._client.ui.select(title, options)
        return chosen if isinstance(chosen, str) else None

    async def input(self, title: str, placeholder: str = "", *, secret: bool = False) -> str | None:
        return await self._client.ui.input(title, placeholder or None)

    async def confirm(self, title: str, message: str) -> bool:
        return await self._client.ui.confirm(title, message)

    async def pick_model(self, models: list[Model], current: Model | None, search: str) -> Model | None:
        return None
