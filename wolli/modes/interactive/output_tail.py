"""The latest line of a command's output as it runs, for a one-row preview.

Output comes in pieces of any size, split anywhere (inside a line, inside a UTF-8
character). :class:`LastLine` keeps only the unfinished end of what it was fed (bounded), and
each ``feed`` returns the last line with something on it, ready for one row: control
characters, tabs and newlines shown as pictures, cut to :data:`SHOWN_LIMIT` characters. A
carriage return ends a line too, so a progress bar shows its latest state.
"""

from __future__ import annotations

import codecs
import re

from ...base.text_safety import one_line_safe

SHOWN_LIMIT = 200
_KEPT_LIMIT = 4096  # of an unfinished line (a 1 MB line without a newline is not kept whole)
_LINE_END = re.compile(r"\r\n|\r|\n")
_ESCAPE_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")  # colours and cursor moves of a CLI tool


class LastLine:
    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""  # the unfinished end of the output

    def feed(self, data: bytes) -> str | None:
        """The latest non-blank line once ``data`` is added (None: nothing new to show)."""
        text = self._pending + self._decoder.decode(data)
        *done, rest = _LINE_END.split(text)
        self._pending = rest[-_KEPT_LIMIT:]
        for line in [rest, *reversed(done)]:
            shown = _ESCAPE_SEQUENCE.sub("", line).strip()
            if shown:
                return one_line_safe(shown[:SHOWN_LIMIT])
        return None
