"""``highlight_code`` and ``get_language_from_path`` for extension renderers.

Lines come back as strings with ANSI colour codes in the active theme's ``syntax*`` colours
(the app sets :data:`active_theme` when the theme changes; headless it is the built-in dark
theme), so they concatenate with ``ui.theme.fg(...)`` pieces. :class:`AnsiTheme` is
``ctx.ui.theme`` in the TUI and the line mode: ``theme.fg("accent", "text")`` returns text
wrapped in ANSI colour codes, so styled pieces concatenate as plain strings, as in pi.
Only pygments is imported here (when used), not Textual.
"""

from __future__ import annotations

from typing import Any

from ...config.themes import ThemeSpec, builtin_theme

active_theme: ThemeSpec | None = None


def _spec() -> ThemeSpec:
    global active_theme
    if active_theme is None:
        active_theme = builtin_theme("dark")
    return active_theme


_TOKEN_COLOURS: list[tuple[Any, str]] = []  # (pygments token type, theme token), filled on first use


def _token_color(token: object, spec: ThemeSpec) -> str | None:
    if not _TOKEN_COLOURS:
        from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String

        _TOKEN_COLOURS.extend([
            (Comment, "syntaxComment"), (Keyword, "syntaxKeyword"), (String, "syntaxString"),
            (Number, "syntaxNumber"), (Operator, "syntaxOperator"), (Punctuation, "syntaxPunctuation"),
            (Name.Function, "syntaxFunction"), (Name.Class, "syntaxType"), (Name.Builtin, "syntaxType"),
            (Name, "syntaxVariable"),
        ])
    for parent, name in _TOKEN_COLOURS:
        if token in parent:
            return spec.color(name)
    return None


def get_language_from_path(path: str) -> str | None:
    """The language name pygments knows a file by (``"x.rs"`` -> ``"rust"``), or None."""
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_for_filename(path)
    except ClassNotFound:
        return None
    return lexer.aliases[0] if lexer.aliases else lexer.name.lower()


def highlight_code(code: str, language: str | None = None) -> list[str]:
    """``code`` as lines coloured for ``language`` (plain lines when it is unknown)."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_by_name(language) if language else None
    except ClassNotFound:
        lexer = None
    if lexer is None:
        return code.split("\n")
    spec = _spec()
    lines: list[str] = [""]
    for token, value in lexer.get_tokens(code):
        color = _token_color(token, spec)
        for i, piece in enumerate(value.split("\n")):
            if i:
                lines.append("")
            if piece:
                if color:
                    r, g, b = (int(color[j : j + 2], 16) for j in (1, 3, 5))
                    lines[-1] += f"\x1b[38;2;{r};{g};{b}m{piece}\x1b[39m"
                else:
                    lines[-1] += piece
    if lines and lines[-1] == "" and not code.endswith("\n\n"):
        lines.pop()  # pygments ends every text with a newline
    return lines


def _sgr(hex_color: str, background: bool = False) -> str:
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"\x1b[{48 if background else 38};2;{r};{g};{b}m"


class AnsiTheme:
    """``ctx.ui.theme``: strings styled with ANSI codes (shown through ``Text.from_ansi``)."""

    def __init__(self, spec: ThemeSpec) -> None:
        self.spec = spec
        self.name = spec.name

    def fg(self, token: str, text: str) -> str:
        color = self.spec.color(token)
        return f"{_sgr(color)}{text}\x1b[39m" if color else str(text)

    def bg(self, token: str, text: str) -> str:
        color = self.spec.color(token)
        return f"{_sgr(color, True)}{text}\x1b[49m" if color else str(text)

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[22m"

    def italic(self, text: str) -> str:
        return f"\x1b[3m{text}\x1b[23m"

    def underline(self, text: str) -> str:
        return f"\x1b[4m{text}\x1b[24m"

    def strikethrough(self, text: str) -> str:
        return f"\x1b[9m{text}\x1b[29m"
