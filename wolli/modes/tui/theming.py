"""A theme file (:class:`wolli.config.themes.ThemeSpec`) as the TUI uses it.

Two views of one theme: a Textual :class:`~textual.theme.Theme` whose CSS variables are the
51 tokens (``$w-accent``, ``$w-tool-success-bg``...: the stylesheet uses only these), and the
pygments-token styles of code blocks (``widgets/code_theme.py``, loaded with the first
answer's markdown: the first frame needs neither pygments nor ``textual.highlight``). The third
view, ``ctx.ui.theme`` (ANSI strings), is
:class:`wolli.modes.interactive.highlighting.AnsiTheme`, shared with the line mode.
"""

from __future__ import annotations

import re

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
