"""Finding edit blocks in a file and applying them all or nothing (pure functions).

Models copy ``old_text`` from what they read, and what they read is rarely byte-exact:
CRLF files, trailing spaces, typographic quotes and dashes, non-breaking spaces. Matching
therefore runs on derived views of the file (LF-normalised, then "fuzzy"-normalised) whose
every character remembers the span of the original it came from. A match found in a view
is mapped back to the original, so the replacement touches only the matched region and
everything else is kept byte for byte (BOM, CRLF, odd spaces included).
"""

from __future__ import annotations

import difflib
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .truncate import split_lines

BOM = "\ufeff"

# One character in, one character out: positions in the view stay easy to map back.
_FUZZY_TABLE = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys(
            "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
            "\u202f\u205f\u3000",
            " ",
        ),
    }
)

_MAX_LINES_SHOWN = 20
_MAX_LINE_CHARS = 200
_CLOSEST_MIN_RATIO = 0.5
_COMPARED_CHARS = 400
# The most of a diff an edit keeps (its result details, the session, the events); a larger
# diff becomes a one-line summary with the counts (docs/tools.md).
DIFF_LIMIT = 64 * 1024


class EditMatchError(ValueError):
    """An edit could not be applied; the message tells the model how to recover."""


@dataclass(frozen=True, slots=True)
class EditSpec:
    old_text: str
    new_text: str


@dataclass(slots=True)
class EditResult:
    content: str  # the whole new text: BOM and line endings as the original had them
    diff: str  # unified diff of the LF-normalised texts (a summary past DIFF_LIMIT)
    first_changed_line: int | None  # 1-based, in the new text
    replacements: int
    fuzzy_edits: list[int] = field(default_factory=list)  # indices matched only after normalising
    lines_added: int = 0
    lines_removed: int = 0
    diff_truncated: bool = False


# ---------------------------------------------------------------------------- views


class _View:
    """A text derived from the original whose positions map back to spans of the original.

    The maps are kept per line, not per character (a 10 MB file on one line must not cost
    hundreds of megabytes of position lists): ``span`` finds the line by binary search.
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the non-empty view span ``[start, end)``."""
        return start, end


class _LfView(_View):
    """CRLF -> LF; the LF of a CRLF pair stands for both characters."""

    __slots__ = ("crlf",)

    def __init__(self, text: str, crlf: array) -> None:
        super().__init__(text)
        self.crlf = crlf  # positions (in ``text``) of the LFs that stand for a CRLF, ascending

    def origin(self, position: int) -> int:
        return position + bisect_left(self.crlf, position)

    def is_pair(self, position: int) -> bool:
        found = bisect_left(self.crlf, position)
        return found < len(self.crlf) and self.crlf[found] == position

    def span(self, start: int, end: int) -> tuple[int, int]:
        last = end - 1
        return self.origin(start), self.origin(last) + (2 if self.is_pair(last) else 1)


class _FuzzyView(_View):
    """The fuzzy form of an LF view: per line, translated and right-stripped."""

    __slots__ = ("kept_lengths", "lf", "lf_lengths", "lf_starts", "starts")

    def __init__(self, lf: _View) -> None:
        kept: list[str] = []
        self.starts, self.kept_lengths = array("q"), array("q")
        self.lf_starts, self.lf_lengths = array("q"), array("q")
        position = lf_position = 0
        for line in lf.text.translate(_FUZZY_TABLE).split("\n"):
            stripped = line.rstrip()
            kept.append(stripped)
            self.starts.append(position)
            self.kept_lengths.append(len(stripped))
            self.lf_starts.append(lf_position)
            self.lf_lengths.append(len(line))
            position += len(stripped) + 1
            lf_position += len(line) + 1
        super().__init__("\n".join(kept))
        self.lf = lf

    def _to_lf(self, position: int) -> int:
        line = bisect_right(self.starts, position) - 1
        column = position - self.starts[line]
        if column < self.kept_lengths[line]:
            return self.lf_starts[line] + column
        return self.lf_starts[line] + self.lf_lengths[line]  # the line's newline

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.lf.span(self._to_lf(start), self._to_lf(end - 1) + 1)


def _lf_view(original: str) -> _View:
    """CRLF -> LF, remembering which LFs stood for a pair."""
    if "\r\n" not in original:
        return _View(original)
    crlf = array("q")
    pieces = original.split("\r\n")
    position = 0
    for piece in pieces[:-1]:
        position += len(piece)
        crlf.append(position)
        position += 1
    return _LfView("\n".join(pieces), crlf)


def normalize_for_match(text: str) -> str:
    """The fuzzy form: typographic quotes/dashes/spaces made ASCII, trailing whitespace
    dropped from every line. ``text`` must already use LF line endings."""
    return "\n".join(line.rstrip() for line in text.translate(_FUZZY_TABLE).split("\n"))


def _fuzzy_view(lf: _View) -> _View:
    return _FuzzyView(lf)


# ---------------------------------------------------------------------------- helpers


def _find_all(haystack: str, needle: str) -> list[int]:
    """Every start of ``needle`` in ``haystack``, overlapping ones included."""
    hits: list[int] = []
    i = haystack.find(needle)
    while i != -1:
        hits.append(i)
        i = haystack.find(needle, i + 1)
    return hits


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _numbered(lines: Sequence[str], first_line: int) -> str:
    shown = list(lines[:_MAX_LINES_SHOWN])
    width = len(str(first_line + len(shown) - 1))
    out = []
    for offset, line in enumerate(shown):
        if len(line) > _MAX_LINE_CHARS:
            line = line[:_MAX_LINE_CHARS] + "..."
        out.append(f"{first_line + offset:>{width}}| {line}")
    if len(lines) > len(shown):
        out.append(f"... ({len(lines) - len(shown)} more lines)")
    return "\n".join(out)


def find_closest_match(content: str, needle: str) -> tuple[int, float, list[str]] | None:
    """The window of lines most similar to ``needle``: (1-based line, ratio, lines).

    Compares line windows as tall as ``needle`` with difflib, pruning with the cheap upper
    bounds first so that large files stay fast.
    """
    needle_lines = split_lines(needle.replace("\r\n", "\n"))
    lines = split_lines(content.replace("\r\n", "\n"))
    height = max(1, len(needle_lines))
    # Lines are compared by their first _COMPARED_CHARS characters: a minified file on one
    # 10 MB line made this one comparison take seconds (difflib walks every character).
    target = "\n".join(line.strip()[:_COMPARED_CHARS] for line in needle_lines)
    if not target.strip() or not lines:
        return None
    clipped = [line.strip()[:_COMPARED_CHARS] for line in lines]
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(target)
    best_ratio = 0.0
    best_at = -1
    for start in range(max(1, len(lines) - height + 1)):
        window = "\n".join(clipped[start : start + height])
        matcher.set_seq1(window)
        if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best_ratio, best_at = ratio, start
    if best_at < 0:
        return None
    return best_at + 1, best_ratio, lines[best_at : best_at + height]


def _lines_keepends(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1] + "\n\\ No newline at end of file\n")
    return lines


def unified_diff(old: str, new: str, path: str, context: int = 3) -> str:
    """A git-style unified diff of two LF texts."""
    return "".join(
        difflib.unified_diff(
            _lines_keepends(old), _lines_keepends(new), f"a/{path}", f"b/{path}", n=context
        )
    )


@dataclass(slots=True)
class DiffSummary:
    text: str  # the unified diff, or a one-line summary when it was over the limit
    added: int  # lines added
    removed: int  # lines removed
    size: int  # characters of the whole diff
    cut: bool  # ``text`` is the summary


def capped_unified_diff(old: str, new: str, path: str, limit: int = DIFF_LIMIT, context: int = 3) -> DiffSummary:
    """:func:`unified_diff`, kept only up to ``limit`` characters; past it, a summary with
    the counts. One edit of a 10 MB single-line file made a 20 MB diff, stored in the
    session and sent in several events; now the lines are counted as they are produced
    and never joined."""
    kept: list[str] | None = []
    added = removed = size = 0
    lines = difflib.unified_diff(_lines_keepends(old), _lines_keepends(new), f"a/{path}", f"b/{path}", n=context)
    for number, line in enumerate(lines):
        size += len(line)
        if number >= 2:  # after the ---/+++ header
            if line.startswith("+"):
                added += 1
            elif line.startswith("-"):
                removed += 1
        if kept is not None:
            kept.append(line)
            if size > limit:
                kept = None
    if kept is not None:
        return DiffSummary("".join(kept), added, removed, size, False)
    summary = (f"(diff not kept: {_size(size)}, over the {_size(limit)} limit; {removed} line"
               f"{'s' if removed != 1 else ''} removed, {added} added)")
    return DiffSummary(summary, added, removed, size, True)


def _size(count: int) -> str:
    return f"{count / 1024 / 1024:.1f} MB" if count >= 1024 * 1024 else f"{count / 1024:.0f} KB"


def first_changed_line(old: str, new: str) -> int | None:
    """1-based number of the first line of ``new`` that differs from ``old``."""
    old_lines = old.split("\n")
    new_lines = new.split("\n")
    for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)):
        if a != b:
            return i + 1
    if len(old_lines) == len(new_lines):
        return None
    # Lines appended: the first new one; lines removed from the end: the new last line.
    return len(old_lines) + 1 if len(new_lines) > len(old_lines) else len(new_lines)


# ---------------------------------------------------------------------------- matching


def _as_pairs(edits: Iterable[Any]) -> list[tuple[str, str]]:
    pairs = []
    for edit in edits:
        if isinstance(edit, tuple):
            pairs.append((edit[0], edit[1]))
        elif isinstance(edit, dict):
            pairs.append((edit["old_text"], edit["new_text"]))
        else:
            pairs.append((edit.old_text, edit.new_text))
    return pairs


class _Matcher:
    """Locates each edit in the original text; builds the fuzzy view only when needed."""

    def __init__(self, original: str, path: str, many: bool) -> None:
        self.path = path
        self.many = many
        self.lf = _lf_view(original)
        self._fuzzy: _View | None = None

    @property
    def fuzzy(self) -> _View:
        if self._fuzzy is None:
            self._fuzzy = _fuzzy_view(self.lf)
        return self._fuzzy

    def label(self, index: int) -> str:
        return f"edits[{index}].old_text" if self.many else "old_text"

    def locate(self, index: int, old_text: str) -> tuple[int, int, bool]:
        """The original span ``[start, end)`` matched by ``old_text`` and whether it was fuzzy."""
        needle = old_text.replace("\r\n", "\n")
        hits = _find_all(self.lf.text, needle)
        if len(hits) == 1:
            start, end = self.lf.span(hits[0], hits[0] + len(needle))
            return start, end, False
        if len(hits) > 1:
            raise self._ambiguous(index, [_line_of(self.lf.text, h) for h in hits], fuzzy=False)
        fuzzy_needle = normalize_for_match(needle)
        if fuzzy_needle.strip():
            view = self.fuzzy
            hits = _find_all(view.text, fuzzy_needle)
            if len(hits) == 1:
                start, end = view.span(hits[0], hits[0] + len(fuzzy_needle))
                return start, end, True
            if len(hits) > 1:
                raise self._ambiguous(index, [_line_of(view.text, h) for h in hits], fuzzy=True)
        raise self._not_found(index, needle)

    def _ambiguous(self, index: int, lines: list[int], fuzzy: bool) -> EditMatchError:
        shown = ", ".join(str(n) for n in lines[:10]) + (", ..." if len(lines) > 10 else "")
        how = " (ignoring trailing whitespace and quote/dash/space variants)" if fuzzy else ""
        return EditMatchError(
            f"{self.label(index)} matches {len(lines)} places in {self.path}{how}, at lines {shown}. "
            "Each old_text must match exactly once: add more surrounding lines to old_text "
            "to make it unique."
        )

    def _not_found(self, index: int, needle: str) -> EditMatchError:
        parts = [f"Could not find {self.label(index)} in {self.path}."]
        closest = find_closest_match(self.lf.text, needle)
        if closest is not None and closest[1] >= _CLOSEST_MIN_RATIO:
            line, ratio, lines = closest
            parts.append(f"The most similar text ({ratio:.0%} similar) is at line {line}:")
            parts.append(_numbered(lines, line))
        else:
            parts.append("No similar text was found in the file.")
        parts.append(
            "Re-read the file with read and copy old_text exactly as it appears now "
            "(whitespace and indentation included)."
        )
        return EditMatchError("\n".join(parts))


def apply_edits(text: str, edits: Iterable[Any], path: str = "file") -> EditResult:
    """Apply every edit, each matched once against the ORIGINAL ``text``, or raise.

    ``edits`` are ``(old, new)`` tuples, dicts or objects with ``old_text``/``new_text``.
    Raises :class:`EditMatchError` (nothing applied) for an empty or unchanged old_text, an
    old_text found zero or several times, overlapping edits, or a no-op result.
    """
    pairs = _as_pairs(edits)
    if not pairs:
        raise EditMatchError("No edits given: pass at least one {old_text, new_text} pair in edits.")
    bom = BOM if text.startswith(BOM) else ""
    original = text[len(bom) :]
    matcher = _Matcher(original, path, many=len(pairs) > 1)

    for i, (old, new) in enumerate(pairs):
        if old == "":
            raise EditMatchError(
                f"{matcher.label(i)} is empty. Give the exact text to replace (to create or "
                "overwrite a whole file, use write instead)."
            )
        if old == new:
            raise EditMatchError(
                f"{matcher.label(i)} and its new_text are identical, so the edit would change "
                "nothing. Put the replacement text in new_text."
            )

    spans: list[tuple[int, int, int]] = []  # (start, end, edit index) in the original
    fuzzy: list[int] = []
    for i, (old, _new) in enumerate(pairs):
        start, end, was_fuzzy = matcher.locate(i, old)
        spans.append((start, end, i))
        if was_fuzzy:
            fuzzy.append(i)

    spans.sort()
    for (_s1, e1, i1), (s2, _e2, i2) in zip(spans, spans[1:], strict=False):
        if s2 < e1:
            first, second = sorted((i1, i2))
            raise EditMatchError(
                f"edits[{first}] and edits[{second}] overlap in {path} (around line "
                f"{_line_of(original, s2)}). Every edit is matched against the original file, "
                "so their old_text regions must not overlap: merge them into one edit."
            )

    crlf = _uses_crlf(original)
    pieces: list[str] = []
    pos = 0
    for start, end, i in spans:
        replacement = pairs[i][1].replace("\r\n", "\n")
        if crlf:
            replacement = replacement.replace("\n", "\r\n")
        pieces.append(original[pos:start])
        pieces.append(replacement)
        pos = end
    pieces.append(original[pos:])
    result = "".join(pieces)
    if result == original:
        raise EditMatchError(
            f"The edits leave {path} unchanged (new_text equals the text that was matched). "
            "Re-read the file to check whether the change is already there."
        )
    old_lf = matcher.lf.text
    new_lf = result.replace("\r\n", "\n")
    diff = capped_unified_diff(old_lf, new_lf, path)
    return EditResult(
        content=bom + result,
        diff=diff.text,
        first_changed_line=first_changed_line(old_lf, new_lf),
        replacements=len(pairs),
        fuzzy_edits=fuzzy,
        lines_added=diff.added,
        lines_removed=diff.removed,
        diff_truncated=diff.cut,
    )


def _uses_crlf(text: str) -> bool:
    """Whether new lines should be written as CRLF: most of the file's endings are."""
    crlf = text.count("\r\n")
    return crlf > 0 and crlf >= text.count("\n") - crlf
