"""The TUI's face for the built-in slash commands (:class:`..interactive.commands.front.Front`).

Questions are the same modal dialogs ``ctx.ui`` uses (one at a time); the three pickers are
screens of their own under ``screens/``. Messages from commands go into the transcript, so
what a command did stays readable after the fact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..interactive.commands.front import SessionSource, TreeChoice
from ..interactive.settings_form import SettingField
from .ui_bridge import AppWithUI

if TYPE_CHECKING:
    from ...ai.types import Model
    from ..interactive.tree_source import TreeSource


class TuiFront:
    mode = "tui"
    shows_model_changes = False  # the footer shows the model; commands say when they changed it
    shows_mode_changes = False

    def __init__(self, app: AppWithUI) -> None:
        self.app = app

    def notify(self, text: str, level: str = "info") -> None:
        self.app.add_notice(text, level)

    def show_text(self, title: str, text: str) -> None:
        self.app.add_info(title, text)

    def set_editor_text(self, text: str) -> None:
        self.app.surface.set_editor_text(text)

    def copy_to_clipboard(self, text: str) -> str:
        from ..interactive.clipboard import copy_with_tool

        tool = copy_with_tool(text)
        if tool is not None:
            return tool
        self.app.copy_to_clipboard(text)  # Textual writes OSC 52 to the terminal
        return "OSC 52 (the terminal's clipboard)"

    def request_quit(self) -> None:
        self.app.exit(0)

    def session_changed(self) -> None:
        self.app.reload_transcript()

    def settings_changed(self, changed: dict[str, Any]) -> None:
        if "theme" in changed:
            spec = self.app.themes.get(changed["theme"])
            if spec is not None:
                self.app.surface.switch_theme(spec)
        if "hideThinkingBlock" in changed:
            self.app.set_thinking_visible(not changed["hideThinkingBlock"])

    async def select(self, title: str, options: list[str]) -> str | None:
        chosen = await self.app.ui.select(title, options)  # one of the strings, or None
        return chosen if isinstance(chosen, str) else None

    async def input(self, title: str, placeholder: str = "", *, secret: bool = False) -> str | None:
        from .screens.input_dialog import InputDialog

        typed: str | None = await self.app.ui.dialog(lambda: InputDialog(title, placeholder, password=secret))
        return typed

    async def confirm(self, title: str, message: str) -> bool:
        return bool(await self.app.ui.confirm(title, message))

    async def pick_model(self, models: list[Model], current: Model | None, search: str) -> Model | None:
        from .screens.model_picker import ModelPicker

        return await self.app.ui.dialog(lambda: ModelPicker(models, current, search))

    async def pick_session(self, source: SessionSource) -> str | None:
        from .screens.session_picker import SessionPicker

        return await self.app.ui.dialog(lambda: SessionPicker(source))

    async def pick_tree_entry(self, tree: TreeSource) -> TreeChoice | None:
        from .screens.tree_picker import TreePicker

        return await self.app.ui.dialog(lambda: TreePicker(tree))

    async def edit_settings(self, fields: list[SettingField], values: dict[str, Any]) -> dict[str, Any] | None:
        from .screens.settings_form import SettingsForm

        return await self.app.ui.dialog(lambda: SettingsForm(fields, values))
