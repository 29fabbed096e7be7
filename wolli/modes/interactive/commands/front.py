"""The face a client shows the built-in commands (TUI, line mode).

Generic questions (``select``, ``input``, ``confirm``) are enough for most commands; the
three pickers that need more than a list (models with search, sessions with rename and
delete, the session tree with folding and filters) are their own methods so each client can
draw them as well as its toolkit allows (the TUI as screens, line mode as numbered lists).
Every question returns ``None`` (or ``False``) when the user cancels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..settings_form import SettingField

if TYPE_CHECKING:
    from ....ai.types import Model
    from ....session.listing import SessionInfo
    from ..tree_source import TreeSource


@dataclass
class SessionSource:
    """What the session picker lists, and what it may do to a session besides opening it."""

    cwd: str
    list_here: Callable[[], list[SessionInfo]]  # this folder's, newest first
    list_all: Callable[[], list[SessionInfo]]  # every folder's, newest first
    rename: Callable[[str, str], None]  # (session file, new name)
    delete: Callable[[str], None]  # session file; refuses the open session
    current_file: str | None = None


@dataclass(frozen=True)
class TreeChoice:
    """An entry chosen in ``/tree``."""

    entry_id: str


class Front(Protocol):
    mode: str  # "tui" | "plain"
    # True when the client prints every model change itself (the line mode's scrollback has
    # no footer): commands then do not announce the model again.
    shows_model_changes: bool
    # The same for permission mode changes (``/permissions MODE``, ``/plan``).
    shows_mode_changes: bool

    def notify(self, text: str, level: str = "info") -> None:
        """A short message: ``info``, ``warning`` or ``error``."""

    def show_text(self, title: str, text: str) -> None:
        """A block of text to read (``/session``, ``/hotkeys``, ``/extensions``)."""

    def set_editor_text(self, text: str) -> None: ...

    def copy_to_clipboard(self, text: str) -> str:
        """Copy ``text``; returns how it was done (shown to the user), raises if it could not be."""

    def request_quit(self) -> None: ...

    def session_changed(self) -> None:
        """The active session is another one or was moved in its tree: redraw from it."""

    def settings_changed(self, changed: dict[str, Any]) -> None:
        """Settings were saved by ``/settings`` (theme, thinking display, ...)."""

    async def select(self, title: str, options: list[str]) -> str | None: ...

    async def input(self, title: str, placeholder: str = "", *, secret: bool = False) -> str | None: ...

    async def confirm(self, title: str, message: str) -> bool: ...

    async def pick_model(self, models: list[Model], current: Model | None, search: str) -> Model | None:
        """One of ``models`` (fuzzy search starting from ``search``), or None."""

    async def pick_session(self, source: SessionSource) -> str | None:
        """The file of the session to open, or None."""

    async def pick_tree_entry(self, tree: TreeSource) -> TreeChoice | None:
        """An entry of a session's tree (see :mod:`..tree_source`), or None."""

    async def edit_settings(self, fields: list[SettingField], values: dict[str, Any]) -> dict[str, Any] | None:
        """The changed values by key, or None when cancelled."""


class WithoutPickers:
    """For a front with no full-screen pickers (an editor over ACP, an RPC client): the
    session, tree and settings pickers are declined, as a cancelled picker is."""

    async def pick_session(self, source: SessionSource) -> str | None:
        return None

    async def pick_tree_entry(self, tree: TreeSource) -> TreeChoice | None:
        return None

    async def edit_settings(self, fields: list[SettingField], values: dict[str, Any]) -> dict[str, Any] | None:
        return None
