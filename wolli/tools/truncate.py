"""Output truncation shared by the built-in tools and exported to extensions.

Limits are "whichever comes first" of lines and bytes (UTF-8). ``truncate_head`` keeps the
beginning in whole lines (file reads, search results); ``truncate_tail`` keeps the end
(command output) and may keep only the end of a single enormous last line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

DEFAULT_MAX_LINES = 2000
DEFAULT_MAX_BYTES = 50 * 1024
GREP_MAX_LINE_LENGTH = 500


@dataclass(slots=True)
class TruncationResult:
    content: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    # truncate_tail: the kept text starts in the middle of a line that alone exceeded max_bytes.
    last_line_partial: bool
    # truncate_head: the very first line alone exceeds max_bytes, so nothing could be kept.
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int


def format_size(num_bytes: int) -> str:
    if num_bytes < 1024:
        return f"{num_bytes}B"
    if num_bytes < 1024 * 1024:
        return f"{num_bytes / 1024:.1f}KB"
    return f"{num_bytes / (1024 * 1024):.1f}MB"


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def split_lines(content: str) -> list[str]:
    """``"a\nb\n"`` is two lines; ``""`` is one empty line (how editors count)."""
    lines = content.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def truncate_head(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    total_bytes = _nbytes(content)
    lines = split_lines(content)
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return TruncationResult(
            content, False, None, total_lines, total_bytes, total_lines, total_bytes,
            False, False, max_lines, max_bytes,
        )
    if lines and _nbytes(lines[0]) > max_bytes:
        return TruncationResult(
            "", True, "bytes", total_lines, total_bytes, 0, 0, False, True, max_lines, max_bytes
        )
    kept: list[str] = []
    used = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    for line in lines:
        if len(kept) >= max_lines:
            truncated_by = "lines"
            break
        cost = _nbytes(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            break
        kept.append(line)
        used += cost
    out = "\n".join(kept)
    # Every line fitted: only the final newline went over the byte limit, nothing was cut.
    cut = len(kept) < total_lines
    return TruncationResult(
        out, cut, truncated_by if cut else None, total_lines, total_bytes, len(kept), _nbytes(out),
        False, False, max_lines, max_bytes,
    )


def _tail_of_bytes(text: str, max_bytes: int) -> str:
    data = text.encode("utf-8")[-max_bytes:]
    # Drop a leading partial UTF-8 sequence.
    return data.decode("utf-8", "ignore")


def truncate_tail(
    content: str, max_lines: int = DEFAULT_MAX_LINES, max_bytes: int = DEFAULT_MAX_BYTES
) -> TruncationResult:
    total_bytes = _nbytes(content)
    lines = split_lines(content)
    total_lines = len(lines)
    if total_lines <= max_lines and total_bytes <= max_bytes:
        return TruncationResult(
            content, False, None, total_lines, total_bytes, total_lines, total_bytes,
            False, False, max_lines, max_bytes,
        )
    kept: list[str] = []
    used = 0
    truncated_by: Literal["lines", "bytes"] = "lines"
    partial = False
    for line in reversed(lines):
        if len(kept) >= max_lines:
            truncated_by = "lines"
            break
        cost = _nbytes(line) + (1 if kept else 0)
        if used + cost > max_bytes:
            truncated_by = "bytes"
            if not kept:
                kept.append(_tail_of_bytes(line, max_bytes))
                partial = True
            break
        kept.append(line)
        used += cost
    kept.reverse()
    out = "\n".join(kept)
    # Every line fitted whole: only the final newline went over the byte limit.
    cut = partial or len(kept) < total_lines
    return TruncationResult(
        out, cut, truncated_by if cut else None, total_lines, total_bytes, len(kept), _nbytes(out),
        partial, False, max_lines, max_bytes,
    )


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Shorten one line to ``max_chars`` characters, marking the cut."""
    if len(line) <= max_chars:
        return line, False
    return line[:max_chars] + "... [truncated]", True
