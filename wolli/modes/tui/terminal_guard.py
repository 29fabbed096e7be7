"""The last line of defence of the full-screen app: no control character reaches the terminal.

Text from a model, a tool, a file name or a server is made :func:`terminal_safe` where it
enters the transcript (assistant text, tool rows, notices, messages), which shows its
escape sequences as visible symbols. Everything else the app draws (pickers listing
session names and first prompts, the completion menu listing file names, the footer's
folder and branch, an extension's widget) could still carry one, and a single ESC in a
segment is enough for the terminal to clear the screen, retitle the window or set the
clipboard. So every strip the compositor turns into terminal output passes here: control
characters in a text segment (C0 but newline handled by layout, DEL, C1) are dropped, and so
are the bidirectional embeddings, overrides and isolates, which would make the terminal show a
command in an order other than the one it runs in. None of them takes a cell in Rich's width
accounting, so the layout is unchanged. Segments that are
controls by design (cursor moves, which Textual marks as such) are left alone.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rich.segment import Segment
from textual.strip import Strip

if TYPE_CHECKING:
    from rich.console import Console

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_installed = False


def _clean(segments: list[Segment]) -> list[Segment] | None:
    """The segments without control characters in their text, or None when none had any."""
    if not any(not segment.control and _CONTROL.search(segment.text) for segment in segments):
        return None
    return [segment if segment.control else Segment(_CONTROL.sub("", segment.text), segment.style)
            for segment in segments]


def install() -> None:
    """Guard :meth:`Strip.render` (once per process): the one place the compositor's text
    becomes terminal output."""
    global _installed
    if _installed:
        return
    _installed = True
    render = Strip.render

    def guarded_render(self: Strip, console: Console) -> str:
        if self._render_cache is None:
            cleaned = _clean(self._segments)
            if cleaned is not None:
                self._segments = cleaned
        return render(self, console)

    Strip.render = guarded_render  # type: ignore[method-assign]
