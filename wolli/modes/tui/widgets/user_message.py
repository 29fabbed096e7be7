"""A message the user sent (or a steering/follow-up message once delivered)."""

from __future__ import annotations

from textual.widgets import Static

from ....base.text_safety import terminal_safe


class UserMessageView(Static):
    DEFAULT_CLASSES = "message user-message"

    def __init__(self, text: str, images: int = 0) -> None:
        suffix = f"\n[{images} image{'s' if images != 1 else ''}]" if images else ""
        super().__init__(terminal_safe(text) + suffix, markup=False)
        self.text = text
