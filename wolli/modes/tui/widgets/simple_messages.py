"""Transcript rows with no streaming: bash executions, summaries, notices, custom messages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from ....base.text_safety import terminal_safe

if TYPE_CHECKING:
    from rich.console import RenderableType

    from ....agent.messages import BashExecutionMessage, CustomMessage


class BashExecutionView(Static):
    """``!cmd`` typed by the user: the command, its output tail and exit code."""

    DEFAULT_CLASSES = "message bash-execution"

    def __init__(self, message: BashExecutionMessage) -> None:
        text = Text()
        text.append(("!! " if message.exclude_from_context else "! ") + terminal_safe(message.command) + "\n",
                    style="bold")
        output = terminal_safe(message.output)
        lines = output.rstrip("\n").split("\n") if output.strip() else []
        if len(lines) > 20:
            text.append(f"… {len(lines) - 20} earlier lines\n", style="dim italic")
            lines = lines[-20:]
        for line in lines:
            text.append(line + "\n")
        status = "cancelled" if message.cancelled else f"exit {message.exit_code}"
        text.append(status, style="dim")
        super().__init__(text)


class SummaryView(Static):
    """A compaction or branch summary: what older messages were condensed into."""

    DEFAULT_CLASSES = "message summary"

    def __init__(self, title: str, summary: str) -> None:
        text = Text(title + "\n", style="bold")
        text.append(terminal_safe(summary.strip()))
        super().__init__(text)


class NoticeView(Static):
    """A line from Wolli itself: retries, compaction, extension errors, warnings."""

    DEFAULT_CLASSES = "notice"

    def __init__(self, text: str, level: str = "info") -> None:
        super().__init__(terminal_safe(text), markup=False)  # it may quote a server or a file
        self.add_class(f"notice-{level}")


class CustomMessageView(Static):
    """A custom message an extension sent, with no renderer of its own: the boxed
    ``[customType]`` label above the content."""

    DEFAULT_CLASSES = "message custom-message"

    def __init__(self, message: CustomMessage, body: RenderableType | None = None, error: Text | None = None) -> None:
        if body is None:  # no renderer, or it failed: the label and the text, then the error
            from ....ai.types import content_text

            text = Text(f"[{terminal_safe(message.custom_type)}]\n", style="bold")
            text.append(terminal_safe(content_text(message.content) if not isinstance(message.content, str)
                                      else message.content))
            if error is not None:
                text.append("\n")
                text.append_text(error)
            body = text
        super().__init__(body)


class InfoView(Static):
    """What ``/session``, ``/hotkeys`` and ``/extensions`` show: a titled block of text."""

    DEFAULT_CLASSES = "info-block"

    def __init__(self, title: str, text: str) -> None:
        super().__init__(text, markup=False)
        self.border_title = title
