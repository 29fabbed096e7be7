"""A small, safe Markdown-to-HTML renderer for exported assistant text.

Covers what models actually write: fenced code, paragraphs, headings, lists (nested by
indentation), block quotes, pipe tables, rules, inline code, bold, italics and
strikethrough. Everything is HTML-escaped before any tag is added, and links stay plain
text, so no input can inject markup or make the page fetch anything. Not CommonMark: the
goal is a readable transcript without pulling a Markdown library into the package.
"""

from __future__ import annotations

import re
from html import escape

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)[^`]*$")
_FENCE_CLOSE = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_BULLET = re.compile(r"^([ \t]*)([-*+])[ \t]+(.*)$")
_ORDERED = re.compile(r"^([ \t]*)(\d{1,9})[.)][ \t]+(.*)$")
_QUOTE = re.compile(r"^ {0,3}>[ \t]?(.*)$")
_TABLE_SEP = re.compile(r"^ {0,3}\|?[ \t]*:?-{1,}:?[ \t]*(?:\|[ \t]*:?-{1,}:?[ \t]*)*\|?[ \t]*$")
_LANG_SAFE = re.compile(r"[^\w+#.-]")

_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
_BOLD_STARS = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_BOLD_UNDERSCORES = re.compile(r"(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)")
_EM_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_EM_UNDERSCORE = re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")


def _emphasis(escaped: str) -> str:
    escaped = _BOLD_STARS.sub(r"<strong>\1</strong>", escaped)
    escaped = _BOLD_UNDERSCORES.sub(r"<strong>\1</strong>", escaped)
    escaped = _EM_STAR.sub(r"<em>\1</em>", escaped)
    escaped = _EM_UNDERSCORE.sub(r"<em>\1</em>", escaped)
    return _STRIKE.sub(r"<del>\1</del>", escaped)


def render_inline(text: str) -> str:
    """Escape ``text`` and render code spans and emphasis (code spans are taken literally)."""
    if "`" not in text and "*" not in text and "_" not in text and "~" not in text:
        return escape(text)
    parts: list[str] = []
    pos = 0
    for match in _CODE_SPAN.finditer(text):
        parts.append(_emphasis(escape(text[pos : match.start()])))
        code = match.group(2)
        if code.startswith(" ") and code.endswith(" ") and code.strip():
            code = code[1:-1]
        parts.append(f"<code>{escape(code)}</code>")
        pos = match.end()
    parts.append(_emphasis(escape(text[pos:])))
    return "".join(parts)


def _indent_width(prefix: str) -> int:
    return len(prefix.expandtabs(4))


def _starts_block(line: str) -> bool:
    return bool(
        _FENCE_OPEN.match(line)
        or _HEADING.match(line)
        or _RULE.match(line)
        or _BULLET.match(line)
        or _ORDERED.match(line)
        or _QUOTE.match(line)
    )


def _split_row(line: str) -> list[str]:
    row = line.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", row)]


class _Blocks:
    """One pass over the lines of a text, appending HTML to ``out``."""

    def __init__(self, lines: list[str], out: list[str]) -> None:
        self.lines = lines
        self.out = out
        self.i = 0

    def run(self) -> None:
        lines, n = self.lines, len(self.lines)
        while self.i < n:
            line = lines[self.i]
            if not line.strip():
                self.i += 1
            elif m := _FENCE_OPEN.match(line):
                self._fence(m.group(1), m.group(2))
            elif m := _HEADING.match(line):
                level = min(len(m.group(1)) + 2, 6)
                self.out.append(f"<h{level}>{render_inline(m.group(2))}</h{level}>")
                self.i += 1
            elif _RULE.match(line):
                self.out.append("<hr>")
                self.i += 1
            elif _QUOTE.match(line):
                self._quote()
            elif m := (_BULLET.match(line) or _ORDERED.match(line)):
                self._list(ordered=m.re is _ORDERED)
            elif "|" in line and self.i + 1 < n and _TABLE_SEP.match(lines[self.i + 1]):
                self._table()
            else:
                self._paragraph()

    def _fence(self, fence: str, lang: str) -> None:
        self.i += 1
        body: list[str] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            close = _FENCE_CLOSE.match(line)
            self.i += 1
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                break
            body.append(line)
        cls = _LANG_SAFE.sub("", lang)
        attr = f' class="language-{cls}"' if cls else ""
        self.out.append(f"<pre><code{attr}>{escape(chr(10).join(body))}</code></pre>")

    def _quote(self) -> None:
        inner: list[str] = []
        while self.i < len(self.lines):
            m = _QUOTE.match(self.lines[self.i])
            if m:
                inner.append(m.group(1))
            elif self.lines[self.i].strip() and inner and inner[-1].strip():
                inner.append(self.lines[self.i])  # lazy continuation of a quoted paragraph
            else:
                break
            self.i += 1
        self.out.append("<blockquote>")
        _Blocks(inner, self.out).run()
        self.out.append("</blockquote>")

    def _list(self, ordered: bool) -> None:
        pattern = _ORDERED if ordered else _BULLET
        lines, n = self.lines, len(self.lines)
        first = pattern.match(lines[self.i])
        assert first is not None
        base = _indent_width(first.group(1))
        items: list[list[str]] = []
        content_col = 0
        while self.i < n:
            line = lines[self.i]
            m = pattern.match(line)
            lead = _indent_width(line[: len(line) - len(line.lstrip())])
            if m and lead < base + 2:
                items.append([m.group(3)])
                content_col = len(m.group(0)) - len(m.group(3))
            elif not line.strip():
                ahead = self.i + 1
                while ahead < n and not lines[ahead].strip():
                    ahead += 1
                if ahead >= n:
                    break
                nxt = lines[ahead]
                nxt_lead = _indent_width(nxt[: len(nxt) - len(nxt.lstrip())])
                nxt_item = pattern.match(nxt)
                if not ((nxt_item and nxt_lead < base + 2) or nxt_lead > base):
                    break
                items[-1].append("")
            elif lead > base:
                items[-1].append(line[min(len(line) - len(line.lstrip()), content_col) :])
            elif items[-1][-1].strip() and not _starts_block(line):
                items[-1].append(line)  # lazy continuation
            else:
                break
            self.i += 1
        if ordered:
            start = int(first.group(2))
            self.out.append("<ol>" if start == 1 else f'<ol start="{start}">')
        else:
            self.out.append("<ul>")
        for item in items:
            while item and not item[-1].strip():
                item.pop()
            if len(item) == 1:
                self.out.append(f"<li>{render_inline(item[0])}</li>")
            else:
                self.out.append("<li>")
                _Blocks(item, self.out).run()
                self.out.append("</li>")
        self.out.append("</ol>" if ordered else "</ul>")

    def _table(self) -> None:
        head = _split_row(self.lines[self.i])
        self.i += 2
        rows: list[list[str]] = []
        while self.i < len(self.lines) and "|" in self.lines[self.i] and self.lines[self.i].strip():
            rows.append(_split_row(self.lines[self.i]))
            self.i += 1
        out = self.out
        out.append("<table><thead><tr>")
        out.extend(f"<th>{render_inline(cell)}</th>" for cell in head)
        out.append("</tr></thead><tbody>")
        for row in rows:
            out.append("<tr>")
            out.extend(f"<td>{render_inline(cell)}</td>" for cell in row)
            out.append("</tr>")
        out.append("</tbody></table>")

    def _paragraph(self) -> None:
        para: list[str] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if not line.strip() or (para and _starts_block(line)):
                break
            if para and "|" in line and self.i + 1 < len(self.lines) and _TABLE_SEP.match(self.lines[self.i + 1]):
                break
            para.append(line.strip())
            self.i += 1
        self.out.append("<p>" + "<br>\n".join(render_inline(p) for p in para) + "</p>")


def render_markdown(text: str, out: list[str] | None = None) -> list[str]:
    """Append the HTML of ``text`` to ``out`` (a new list if omitted) and return it."""
    target: list[str] = [] if out is None else out
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    _Blocks(lines, target).run()
    return target


def markdown_to_html(text: str) -> str:
    return "".join(render_markdown(text))
