"""Suggestions for the editor: asks the provider stack, shows the menu, applies a choice.

Queries run as one exclusive worker (a newer keystroke cancels an older query), and only
where completion applies (a ``/`` line, an ``@`` word, a trigger character of an extension
provider, Tab), so typing plain text costs nothing.

Keys can arrive faster than suggestions (a slow provider, a loaded machine, a paste): every
answer is tied to the text and cursor it was asked for. An answer for a text that is no
longer there is dropped, and Tab or Enter on a menu that shows an earlier text's answer asks
again for the text as it is now before acting (else '/model' + Enter applied the '/m' menu's
'/model' at the new cursor and left '/mod/model ').

The menu (an ``OptionList``) is made when first asked for and joins the screen, above the
editor, with the first suggestions it shows: a start pays neither for the widget nor for
its stylesheet (~1.7 % of the instructions to the footer). The TUI's warm-up imports its
module once the session is up.
"""

from __future__ import annotations

import asyncio
import re
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from ..interactive import completion
from .ui_bridge import AppWithUI

if TYPE_CHECKING:
    from textual.dom import DOMNode
    from textual.widget import AwaitMount

    from .widgets.completion_menu import CompletionMenu

_LAST_WORD = re.compile(r"(?:^|\s)(\S*)$")
_State = tuple[str, int, int]  # editor text, cursor row, cursor column
_RETRIES = 3  # fresh queries for one key while the text keeps changing under it
# How long Tab/Enter wait for a fresh answer (the app's queue waits too): a slower provider
# leaves the text as typed (Enter sends it) rather than freeze the app.
FRESH_ANSWER_TIMEOUT_S = 0.5


class EditorCompletion:
    def __init__(self, app: AppWithUI) -> None:
        self.app = app
        self._menu: CompletionMenu | None = None
        self._menu_placed = False  # mounted in the editor area and ready
        self._mounting: AwaitMount | None = None
        self._files: completion.ProjectFiles | None = None
        self._stacked: tuple[object, completion.ProviderStack] | None = None
        self._shown_for: _State | None = None  # the text and cursor the open menu answers
        self._applied: _State | None = None  # the state our own insertion left: no new menu for it

    @property
    def menu(self) -> CompletionMenu:
        """The suggestions list: made on first use, on screen from its first suggestions."""
        if self._menu is None:
            from .widgets.completion_menu import CompletionMenu

            self._menu = CompletionMenu()
        return self._menu

    @property
    def _open(self) -> bool:
        return self._menu is not None and self._menu.open

    async def _placed_menu(self) -> CompletionMenu:
        """The menu, mounted first in the editor area (above the editor) the first time."""
        menu = self.menu
        if not self._menu_placed:
            if menu.parent is None:  # mount() registers at once: a second caller only waits
                self._mounting = self.app.editor_area.mount(menu, before=0)
            if self._mounting is not None:
                await self._mounting
            self._menu_placed = True
        return menu

    # ------------------------------------------------------------------ the provider stack

    def provider(self) -> completion.CompletionProvider:
        return self._stack()[0]

    def _stack(self) -> completion.ProviderStack:
        """Built once per folder and set of providers (a factory may preload data)."""
        cwd = self._cwd()
        factories = list(self.app.ui.autocomplete_providers)
        key = (cwd, tuple(id(f) for f in factories))
        if self._stacked is None or self._stacked[0] != key:
            if self._files is None or self._files.cwd != cwd:
                self._files = completion.ProjectFiles(cwd)
            builtin = completion.BuiltinCompletion(self._commands, self._files, self._argument_completions, cwd,
                                                   self._mcp_resources)
            made = completion.stack(builtin, factories, self._provider_failed)
            self._stacked = (key, made)
        return self._stacked[1]

    def _provider_failed(self, factory: object, exc: Exception) -> None:
        from .surface import owner_of

        app = self.app
        app.add_notice(str(app.extension_failed(owner_of(app, factory), completion.PROVIDER_FAILED, exc)), "error")

    def _cwd(self) -> str:
        session = self.app.controller.session
        return session.cwd if session is not None else self.app.request.cwd

    def _commands(self) -> list[dict[str, Any]]:
        """Built-ins (also before the session is up), extension commands, templates, skills."""
        return completion.command_items(self.app.controller.command_entries())

    def _mcp_resources(self) -> list[dict[str, Any]]:
        return list(self.app.controller.mcp_resources())

    async def _argument_completions(self, name: str, prefix: str) -> object:
        return await self.app.controller.argument_completions(name, prefix)

    # ------------------------------------------------------------------ driving

    def _state(self) -> _State:
        editor = self.app.editor
        row, col = editor.cursor_location
        return editor.text, row, col

    def wanted(self, force: bool) -> None:
        state = self._state()
        if not force and state == self._applied:
            self._applied = None
            return
        self._applied = None
        text, row, col = state
        lines = text.split("\n")
        before = lines[row][:col] if row < len(lines) else ""
        if not force and not self._open and not self._applies(before, row, self._stack()[1]):
            return
        # A callable, not a coroutine: a query cancelled by the next keystroke before it
        # started is then never created (no "coroutine was never awaited" on the screen).
        self.app.run_worker(partial(self._suggest, state, force), group="completion", exclusive=True)

    @staticmethod
    def _applies(before: str, row: int, triggers: set[str]) -> bool:
        if row == 0 and before.startswith("/"):
            return True
        word = _LAST_WORD.search(before)
        token = word.group(1) if word else ""
        return bool(token) and any(t in token for t in triggers if t != "/")

    async def _query(self, state: _State, force: bool) -> dict[str, Any] | None:
        text, row, col = state
        try:
            return await completion.suggestions(self.provider(), text.split("\n"), row, col, {"force": force})
        except Exception as exc:  # a provider's bug must not break typing
            self.app.add_notice(f"autocomplete failed: {type(exc).__name__}: {exc}", "error")
            return None

    async def _suggest(self, state: _State, force: bool) -> None:
        found = await self._query(state, force)
        if self._state() != state:
            return  # typed on meanwhile: the answer is for a text no longer there
        if found is not None and force and len(found["items"]) == 1:  # Tab with one candidate completes at once
            self._apply(state, found["items"][0], found["prefix"])
            return
        await self._show(found, state)

    async def _show(self, found: dict[str, Any] | None, state: _State, keep: object = None) -> None:
        if found is None:
            self.close()
            return
        if not found["items"] and not self._menu_placed:
            menu = self.menu  # nothing to list: no need to put the menu on screen for it
        else:
            menu = await self._placed_menu()
        menu.show(found["prefix"], found["items"], keep)
        self._shown_for = state
        self.app.editor.menu_open = menu.open

    async def key(self, action: str) -> None:
        if action in ("up", "down"):
            self.menu.move(-1 if action == "up" else 1)
            return
        if action == "close":
            self.close()
            return
        await self._refresh_stale_menu()
        item = self.menu.current()
        editor = self.app.editor
        if action == "enter" and (item is None or str(item["value"]) == self.menu.prefix):
            self.close()  # nothing to complete, or the word is complete already: Enter sends
            editor.submit()
            return
        if item is not None:
            self._apply(self._state(), item, self.menu.prefix)
        else:
            self.close()

    async def _refresh_stale_menu(self) -> None:
        """Ask again when the menu answers an earlier text, keeping the chosen item if it
        is still offered; no fresh answer closes the menu."""
        for _ in range(_RETRIES):
            state = self._state()
            if state == self._shown_for:
                return
            chosen = self.menu.current()
            self.app.workers.cancel_group(cast("DOMNode", self.app), "completion")  # the app is one
            try:
                found = await asyncio.wait_for(self._query(state, force=False), FRESH_ANSWER_TIMEOUT_S)
            except TimeoutError:
                found = None
            if self._state() == state:
                await self._show(found, state, keep=chosen["value"] if chosen else None)
                return
        self.close()

    def _apply(self, state: _State, item: dict[str, Any], prefix: str) -> None:
        self.close()
        text, row, col = state
        result = self.provider().apply_completion(text.split("\n"), row, col, item, prefix)
        editor = self.app.editor
        editor.text = "\n".join(result["lines"])
        editor.move_cursor((result["cursor_line"], result["cursor_col"]))
        self._applied = self._state()

    def close(self) -> None:
        self._shown_for = None
        if self._menu is not None:
            self._menu.hide()
        self.app.editor.menu_open = False
