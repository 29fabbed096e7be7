"""``/resume`` and ``wolli -r``: the sessions of this folder (Tab: of every folder).

Typing matches names, first messages and folders at once; after a short pause the files
themselves are searched for the text in a thread, and sessions found only that way follow
the others. Ctrl+S switches between newest-first and best-match order. Ctrl+R renames the
highlighted session, Ctrl+D deletes it (after a confirmation; the open session is refused).
"""

from __future__ import annotations

import datetime as dt
import os
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.binding import Binding

from ...interactive.commands.front import SessionSource
from ...interactive.session_search import content_matches, match_sessions, session_title
from .picker_base import PickerScreen

if TYPE_CHECKING:
    from textual.timer import Timer
    from textual.widgets import Input

    from ....session.listing import SessionInfo

CONTENT_SEARCH_DELAY_S = 0.25


def age(when: dt.datetime, now: dt.datetime | None = None) -> str:
    now = now or dt.datetime.now(dt.UTC)
    seconds = max(0, int((now - when).total_seconds()))
    for size, unit in ((86_400 * 365, "y"), (86_400 * 30, "mo"), (86_400 * 7, "w"), (86_400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return "just now"


def short_path(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if path == home or path.startswith(home + os.sep) else path


class SessionPicker(PickerScreen):
    BINDINGS = [
        *PickerScreen.BINDINGS,
        Binding("tab", "toggle_scope", show=False, priority=True),
        Binding("ctrl+s", "toggle_sort", show=False, priority=True),
        Binding("ctrl+r", "rename", show=False, priority=True),
        Binding("ctrl+d", "delete", show=False, priority=True),
    ]
    HINT = "↑↓ move · Enter open · Tab this folder/all · Ctrl+S sort · Ctrl+R rename · Ctrl+D delete · Esc cancel"

    def __init__(self, source: SessionSource) -> None:
        super().__init__("Resume a session")
        self.source = source
        self.scope = "here"
        self.by_date = True
        self.sessions: list[SessionInfo] = []
        self.found_in_content: list[SessionInfo] = []
        self._content_query = ""
        self._content_timer: Timer | None = None

    def on_mount(self) -> None:
        self.load()
        super().on_mount()

    def load(self) -> None:
        self.sessions = self.source.list_here() if self.scope == "here" else self.source.list_all()
        self.found_in_content = []
        self._update_title()

    def _update_title(self) -> None:
        where = "this folder" if self.scope == "here" else "every folder"
        order = "newest first" if self.by_date else "best match first"
        for title in self.query(".dialog-title"):
            title.update(f"Resume a session — {len(self.sessions)} in {where}, {order}")  # type: ignore[attr-defined]

    def rows(self, query: str) -> list[tuple[Text | str, Any]]:
        matched = match_sessions(self.sessions, query)
        if query.strip() and self.by_date:
            order = {id(s): i for i, s in enumerate(self.sessions)}
            matched.sort(key=lambda s: order[id(s)])
        if query.strip() == self._content_query and query.strip():
            shown = {s.path for s in matched}
            matched += [s for s in self.found_in_content if s.path not in shown]
        return [(self._label(info, info in self.found_in_content), info.path) for info in matched]

    def _label(self, info: SessionInfo, by_content: bool) -> Text:
        label = Text()
        current = self.source.current_file is not None and info.path == self.source.current_file
        label.append("● " if current else "  ", style="bold")
        label.append(" ".join(session_title(info).split())[:90], style="bold" if info.name else "")
        details = [age(info.modified)]
        if info.message_count_estimate is not None:
            details.append(f"{info.message_count_estimate} msgs")
        details.append(short_path(info.cwd))
        if by_content:
            details.append("found in the conversation")
        label.append("\n\u200b    " + " · ".join(details), style="dim")  # (leading spaces alone are trimmed)
        return label

    def on_input_changed(self, event: Input.Changed) -> None:
        super().on_input_changed(event)
        if self._content_timer is not None:
            self._content_timer.stop()
        if len(self.search.value.strip()) >= 2:
            self._content_timer = self.set_timer(CONTENT_SEARCH_DELAY_S, self._search_content)

    def _search_content(self) -> None:
        query = self.search.value.strip()
        sessions = list(self.sessions)

        def scan() -> None:
            found = content_matches(sessions, query)
            self.app.call_from_thread(self._content_found, query, found)

        self.run_worker(scan, thread=True, exclusive=True, group="content-search")

    def _content_found(self, query: str, found: list[SessionInfo]) -> None:
        if query != self.search.value.strip():
            return  # typed on meanwhile; a newer search follows
        self._content_query, self.found_in_content = query, found
        self.refill(keep=self.highlighted_value())

    # ------------------------------------------------------------------ actions

    def action_toggle_scope(self) -> None:
        self.scope = "all" if self.scope == "here" else "here"
        self.load()
        self.refill()
        if len(self.search.value.strip()) >= 2:
            self._search_content()

    def action_toggle_sort(self) -> None:
        self.by_date = not self.by_date
        self._update_title()
        self.refill(keep=self.highlighted_value())

    def _highlighted(self) -> SessionInfo | None:
        """The SessionInfo of the highlighted row, if any."""
        path = self.highlighted_value()
        return next((s for s in self.sessions + self.found_in_content if s.path == path), None)

    def action_rename(self) -> None:
        from .input_dialog import InputDialog

        info = self._highlighted()
        if info is None:
            return
        path = info.path

        def renamed(name: str | None) -> None:
            if not name or not name.strip():
                return
            try:
                self.source.rename(path, name.strip())
            except Exception as exc:
                self.app.notify(f"rename failed: {exc}", severity="error")
                return
            info.name = name.strip()
            self.refill(keep=path)

        self.app.push_screen(InputDialog("Rename the session", value=info.name or ""), callback=renamed)

    def action_delete(self) -> None:
        from .confirm_dialog import ConfirmDialog

        info = self._highlighted()
        if info is None:
            return
        path = info.path

        def confirmed(yes: bool | None) -> None:
            if not yes:
                return
            try:
                self.source.delete(path)
            except Exception as exc:
                self.app.notify(f"not deleted: {exc}", severity="error")
                return
            self.sessions = [s for s in self.sessions if s.path != path]
            self.found_in_content = [s for s in self.found_in_content if s.path != path]
            self._update_title()
            self.refill()

        self.app.push_screen(ConfirmDialog("Delete this session?", f"{session_title(info)[:80]}\n{path}"),
                             callback=confirmed)
