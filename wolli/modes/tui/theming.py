"""A theme file (:class:`wolli.config.themes.ThemeSpec`) as the TUI uses it.

Three views of one theme: a Textual :class:`~textual.theme.Theme` whose CSS variables are the
51 tokens (``$w-accent``, ``$w-tool-success-bg``...: the stylesheet uses only these), the
pygments-token styles of code blocks, and :class:`AnsiTheme`, the ``ctx.ui.theme`` an
extension styles strings with (``theme.fg("accent", "text")`` returns text wrapped in ANSI
colour codes, so styled pieces concatenate as plain strings, as they do in pi).
"""

from __future__ import annotations

import re

from pygments.token import Token
from textual.highlight import HighlightTheme
from textual.theme import Theme

from ...config.themes import TOKENS, ThemeSpec


def css_name(token: str) -> str:
    """``toolSuccessBg`` -> ``w-tool-success-bg``."""
    return "w-" + re.sub(r"(?<!^)(?=[A-Z])", "-", token).lower()


def to_textual_theme(spec: ThemeSpec) -> Theme:
    dark = spec.dark
    background = spec.export.get("pageBg") or ("#1a1b20" if dark else "#fbfbfc")
    foreground = spec.color("text") or ("#d6d9e0" if dark else "#24262c")
    panel = spec.export.get("cardBg") or spec.color("userMessageBg") or background
    variables: dict[str, str] = {}
    for token in TOKENS:
        value = spec.color(token)
        if value is None:  # the terminal default: text tokens follow the foreground
            value = background if token.endswith("Bg") else foreground
        variables[css_name(token)] = value
    variables["footer-background"] = background
    variables["block-cursor-background"] = spec.color("accent") or foreground
    return Theme(
        name=f"wolli-{spec.name}",
        primary=spec.color("accent") or foreground,
        secondary=spec.color("border") or foreground,
        accent=spec.color("borderAccent") or foreground,
        warning=spec.color("warning") or "#e0af68",
        error=spec.color("error") or "#f7768e",
        success=spec.color("success") or "#9ece6a",
        foreground=foreground,
        background=background,
        surface=background,
        panel=panel,
        dark=dark,
        variables=variables,
    )


class ThemedHighlight(HighlightTheme):
    """Code block colours from the theme's ``syntax*`` tokens (through the CSS variables)."""

    STYLES = {
        Token.Comment: "$w-syntax-comment italic",
        Token.Keyword: "$w-syntax-keyword",
        Token.Keyword.Constant: "$w-syntax-keyword",
        Token.Keyword.Namespace: "$w-syntax-keyword",
        Token.Keyword.Type: "$w-syntax-type",
        Token.Name: "$w-syntax-variable",
        Token.Name.Builtin: "$w-syntax-type",
        Token.Name.Class: "$w-syntax-type",
        Token.Name.Decorator: "$w-syntax-function",
        Token.Name.Function: "$w-syntax-function",
        Token.Name.Function.Magic: "$w-syntax-function",
        Token.Name.Tag: "$w-syntax-keyword",
        Token.Name.Attribute: "$w-syntax-function",
        Token.Literal.String: "$w-syntax-string",
        Token.String: "$w-syntax-string",
        Token.Literal.Number: "$w-syntax-number",
        Token.Number: "$w-syntax-number",
        Token.Operator: "$w-syntax-operator",
        Token.Operator.Word: "$w-syntax-keyword",
        Token.Punctuation: "$w-syntax-punctuation",
        Token.Generic.Inserted: "$w-tool-diff-added",
        Token.Generic.Deleted: "$w-tool-diff-removed",
        Token.Generic.Heading: "$w-md-heading bold",
        Token.Generic.Strong: "bold",
        Token.Generic.Emph: "italic",
        Token.Error: "$w-error",
        Token.Whitespace: "",
    }


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
