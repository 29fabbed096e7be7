"""Steering and follow-up messages waiting to be delivered, shown above the editor."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class QueuedMessages(Static):
    DEFAULT_CLASSES = "queued-messages"

    def __init__(self) -> None:
        super().__init__("")
        self.steering: list[str] = []
        self.follow_up: list[str] = []
        self.display = False

    def set_queue(self, steering: list[str], follow_up: list[str]) -> None:
        self.steering, self.follow_up = list(steering), list(follow_up)
        self.display = bool(self.steering or self.follow_up)
        text = Text()
        for label, items in (("steer", self.steering), ("follow-up", self.follow_up)):
            for item in items:
                first = item.strip().split("\n", 1)[0]
                text.append(f"⏵ {label}: ", style="bold")
                text.append(first[:200] + "\n")
        text.rstrip()
        self.update(text)
