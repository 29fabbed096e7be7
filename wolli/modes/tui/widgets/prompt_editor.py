"""The editor: multi-line input with the keys of a chat (Enter sends, Shift+Enter/Ctrl+J add
a line), history at the edges, collapsed pastes and ``$VISUAL``/``$EDITOR`` editing.

The editor only says what the user did (messages ``Submitted``, ``FollowUp``); the app
decides what that means (a prompt, steering while the agent works, a command, ``!cmd``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from ....config.keybindings import current_keys
from ....config.keys import event_canonical
from ...interactive.prompt_history import PromptHistory

PASTE_COLLAPSE_LINES = 10
RECALLED_COLLAPSED = 20  # how many sent prompts Up brings back with their pastes collapsed
_PASTE_MARK = re.compile(r"\[paste #(\d+) \+\d+ lines\]")
_IMAGE_MARK = re.compile(r"\[image #(\d+)\]")


class PromptEditor(TextArea):
    @dataclass
    class Submitted(Message):
        """Enter: the text (and images) to send."""

        text: str
        images: list[Any] = field(default_factory=list)

    @dataclass
    class FollowUp(Message):
        """Alt+Enter: the text (and images) to queue as a follow-up."""

        text: str
        images: list[Any] = field(default_factory=list)

    @dataclass
    class ImagePasted(Message):
        """An image to attach: a pasted image file's path, or None for the clipboard (Ctrl+V)."""

        path: str | None

    @dataclass
    class CompletionWanted(Message):
        """The text changed where completion applies, or Tab asked for it (``force``)."""

        force: bool

    @dataclass
    class CompletionKey(Message):
        """A key for the open suggestions list: ``up``, ``down``, ``accept`` (Tab), ``enter``
        (accept, or send when the word is already complete) or ``close``."""

        action: str

    def __init__(self, history: PromptHistory | None = None, **kwargs) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)
        self.prompt_history = history or PromptHistory(None)
        self.cursor_blink = False  # a blinking cursor is a timer: an idle app must use no CPU
        self.menu_open = False  # set by the app while suggestions are shown
        keys = current_keys()  # keybindings.json may move send / new line / follow-up
        self.submit_keys = set(keys["tui.input.submit"])
        self.newline_keys = set(keys["tui.input.newLine"])
        self.follow_up_keys = set(keys["app.message.followUp"])
        self.paste_image_keys = set(keys.get("app.clipboard.pasteImage", ()))
        self.pastes: dict[int, str] = {}
        self._paste_count = 0  # never reset: a marker's number stays unique for the whole run
        # A prompt sent with collapsed pastes -> how it stood in the editor (markers and their
        # texts), so Up brings it back collapsed. This run's last few only: the history file
        # keeps the text as it was sent.
        self._sent_collapsed: dict[str, tuple[str, dict[int, str]]] = {}
        self.images: dict[int, Any] = {}  # ImageContent by the number in its [image #N] marker
        self._image_count = 0
        self.cwd = os.getcwd()  # where a pasted relative path is looked up (the app sets it)

    # ------------------------------------------------------------------ keys

    async def _on_key(self, event: events.Key) -> None:
        key = event_canonical(event.key)  # one spelling for every key (config/keys.py)
        if self.menu_open and key in ("up", "down", "tab", "enter", "escape"):
            self._consume(event)
            action = {"tab": "accept", "enter": "enter", "escape": "close"}.get(key, key)
            self.post_message(self.CompletionKey(action))
            return
        if key == "tab":
            self._consume(event)
            self.post_message(self.CompletionWanted(force=True))
            return
        if key in self.submit_keys:
            self._consume(event)
            self._send(self.Submitted)
            return
        if key in self.newline_keys:
            self._consume(event)
            self.insert("\n")
            return
        if key in self.follow_up_keys:
            self._consume(event)
            self._send(self.FollowUp)
            return
        if key in self.paste_image_keys:
            self._consume(event)
            self.post_message(self.ImagePasted(None))
            return
        if key == "up" and self.cursor_location[0] == 0:
            previous = self.prompt_history.previous(self.text)
            if previous is not None:
                self._consume(event)
                self._replace(previous, at_end=False)
                return
        if key == "down" and self.cursor_location[0] == self.document.line_count - 1:
            following = self.prompt_history.next()
            if following is not None:
                self._consume(event)
                self._replace(following, at_end=True)
                return
        await super()._on_key(event)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self.post_message(self.CompletionWanted(force=False))

    @staticmethod
    def _consume(event: events.Key) -> None:
        event.prevent_default()
        event.stop()

    def _replace(self, text: str, at_end: bool) -> None:
        collapsed = self._sent_collapsed.get(text)
        if collapsed is not None:  # a prompt of this run that held a long paste
            text, pastes = collapsed
            self.pastes.update(pastes)  # the draft's own pastes stay, for Down back to it
        self.text = text
        if at_end:
            self.move_cursor(self.document.end)
        else:
            self.move_cursor((0, len(self.document.get_line(0))))

    def submit(self) -> None:
        """Send the text as Enter does (the app calls this when Enter only closed a menu)."""
        self._send(self.Submitted)

    def _send(self, message_type: type[Message]) -> None:
        text = self.expanded_text()
        images = [self.images[n] for n in dict.fromkeys(int(m) for m in _IMAGE_MARK.findall(self.text))
                  if n in self.images]
        if not text.strip() and not images:
            return
        if text.startswith("/"):  # an accepted completion leaves a space after the arguments
            text = text.rstrip()
        self.prompt_history.add(text)
        if self.pastes and _PASTE_MARK.search(self.text):
            self._sent_collapsed.pop(text, None)
            self._sent_collapsed[text] = (self.text, dict(self.pastes))
            while len(self._sent_collapsed) > RECALLED_COLLAPSED:
                del self._sent_collapsed[next(iter(self._sent_collapsed))]
        self.clear_all()
        self.post_message(message_type(text, images))  # type: ignore[call-arg]

    # ------------------------------------------------------------------ pastes

    async def _on_paste(self, event: events.Paste) -> None:
        from ..image_paste import image_path_in

        # Terminals (and tmux) send a pasted line end as CR: one kind of line end for the
        # count below, the editor and the model.
        event.text = event.text.replace("\r\n", "\n").replace("\r", "\n")
        image = image_path_in(event.text, self.cwd)
        if image is not None:  # a dropped or pasted image file: attach it, not its path
            event.prevent_default()
            event.stop()
            self.post_message(self.ImagePasted(str(image)))
            return
        lines = event.text.count("\n") + 1
        if lines > PASTE_COLLAPSE_LINES:
            event.prevent_default()
            event.stop()
            self._paste_count += 1
            self.pastes[self._paste_count] = event.text
            self.insert(f"[paste #{self._paste_count} +{lines} lines]")
            return
        await super()._on_paste(event)

    def expanded_text(self) -> str:
        """The text with every collapsed paste marker replaced by what was pasted."""
        return _PASTE_MARK.sub(lambda m: self.pastes.get(int(m.group(1)), m.group(0)), self.text)

    def attach_image(self, image: object) -> None:
        """Keep ``image`` for the next send and show ``[image #N]`` where the cursor is."""
        self._image_count += 1
        self.images[self._image_count] = image
        self.insert(f"[image #{self._image_count}]")

    def clear_all(self) -> None:
        self.text = ""
        self.pastes.clear()
        self.images.clear()
