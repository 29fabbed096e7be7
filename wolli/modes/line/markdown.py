"""Markdown to ANSI, one finished line at a time, in the theme's colours.

The answer streams into scrollback, so nothing printed can be redrawn later: each line is
rendered as soon as it is complete. Block state that spans lines is kept here (inside a code
fence or not, and its language); a code line is highlighted with everything of its block
so far, so multi-line strings and comments keep their colours. Headings, quotes, rules, list
bullets, ``code``, **bold**, *italic* and links are styled; anything else (tables, HTML) is
shown as written. Only used on a colour terminal: plain output keeps the markdown source.
"""

from __future__ import annotations

import re

from ...config.themes import ThemeSpec
from ..interactive.highlighting import AnsiTheme, highlight_code

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+#.-]*)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_QUOTE = re.compile(r"^(\s*)>\s?(.*)$")
_BULLET = re.compile(r"^(\s*)([-*+])\s+(.*)$")
_NUMBERED = re.compile(r"^(\s*)(\d+[.)])\s+(.*)$")
_INLINE = re.compile(
    r"(?P<code>`+)(?P<code_text>.+?)(?P=code)"
    r"|\*\*(?P<bold>[^*]+?)\*\*|__(?P<bold2>[^_]+?)__"
    r"|(?<![\w*])\*(?P<italic>[^*\s][^*]*?)\*(?![\w*])|(?<!\w)_(?P<italic2>[^_\s][^_]*?)_(?!\w)"
    r"|\[(?P<link_text>[^\]]+)\]\((?P<url>[^)\s]+)\)"
)
MAX_HIGHLIGHTED_LINES = 400  # past this a code line is highlighted on its own (cost grows with the block)


class MarkdownLines:
    def __init__(self, spec: ThemeSpec, width: int = 80) -> None:
        self.theme = AnsiTheme(spec)
        self.width = width
        self.fence: str | None = None  # the opening marker while inside a code block
        self.language: str | None = None
        self.code: list[str] = []

    def reset(self) -> None:
        self.fence, self.language, self.code = None, None, []

    def render(self, line: str) -> str:
        """One complete line (without its newline) as styled text."""
        fg = self.theme.fg
        if self.fence is not None:
            stripped = line.strip()
            if stripped.startswith(self.fence[0] * len(self.fence)) and not stripped.strip(self.fence[0]):
                self.reset()
                return fg("mdCodeBlockBorder", line)
            self.code.append(line)
            return self._code_line(line)
        fence = _FENCE.match(line)
        if fence:
            self.fence, self.language, self.code = fence.group(1), fence.group(2).lower() or None, []
            return fg("mdCodeBlockBorder", line)
        if (heading := _HEADING.match(line)) is not None:
            return self.theme.bold(fg("mdHeading", self.inline(heading.group(2))))
        if _RULE.match(line):
            return fg("mdHr", "─" * min(self.width, 60))
        if (quote := _QUOTE.match(line)) is not None:
            return quote.group(1) + fg("mdQuoteBorder", "│ ") + fg("mdQuote", self.inline(quote.group(2)))
        if (bullet := _BULLET.match(line)) is not None:
            return bullet.group(1) + fg("mdListBullet", "•") + " " + self.inline(bullet.group(3))
        if (number := _NUMBERED.match(line)) is not None:
            return number.group(1) + fg("mdListBullet", number.group(2)) + " " + self.inline(number.group(3))
        return self.inline(line)

    def _code_line(self, line: str) -> str:
        if not self.language:
            return self.theme.fg("mdCodeBlock", line)
        block = self.code if len(self.code) <= MAX_HIGHLIGHTED_LINES else [line]
        lines = highlight_code("\n".join(block), self.language)
        return lines[-1] if len(lines) == len(block) else self.theme.fg("mdCodeBlock", line)

    def inline(self, text: str) -> str:
        theme = self.theme

        def styled(match: re.Match[str]) -> str:
            group = match.groupdict()
            if group["code_text"] is not None:
                return theme.fg("mdCode", group["code_text"])
            if group["bold"] is not None or group["bold2"] is not None:
                return theme.bold(group["bold"] or group["bold2"])
            if group["italic"] is not None or group["italic2"] is not None:
                return theme.italic(group["italic"] or group["italic2"])
            label, url = group["link_text"], group["url"]
            shown = theme.underline(theme.fg("mdLink", label))
            return shown if label == url else f"{shown} {theme.fg('mdLinkUrl', '(' + url + ')')}"

        return _INLINE.sub(styled, text)
