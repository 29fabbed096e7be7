"""Theme files in pi's format: ``{"name", "vars", "colors", "export"?}`` with 51 colour tokens.

A colour value is a hex string (``"#7aa2f7"``), a 256-colour palette index (``75``), the
name of an entry in ``vars``, or ``""`` for the terminal's default. A pi theme file works
unchanged. Built-in themes ship in ``wolli/themes/``; users add their own in
``WOLLI_HOME/themes/`` and ``<agent home>/themes/`` (a later folder wins on a name clash).

A theme with problems still loads: a missing or unreadable token takes the value of the
built-in theme of the same variant and each problem is reported once, naming the file and
token. Nothing here imports Textual; the TUI maps a :class:`ThemeSpec` onto its own styles.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..base.json_input import parse_json
from ..base.safe_files import CONFIG_FILE_LIMIT, read_text_capped

TOKENS: tuple[str, ...] = (
    # core
    "accent", "border", "borderAccent", "borderMuted", "success", "error", "warning", "muted", "dim",
    "text", "thinkingText",
    # backgrounds and content
    "selectedBg", "userMessageBg", "userMessageText", "customMessageBg", "customMessageText",
    "customMessageLabel", "toolPendingBg", "toolSuccessBg", "toolErrorBg", "toolTitle", "toolOutput",
    # markdown
    "mdHeading", "mdLink", "mdLinkUrl", "mdCode", "mdCodeBlock", "mdCodeBlockBorder", "mdQuote",
    "mdQuoteBorder", "mdHr", "mdListBullet",
    # diffs
    "toolDiffAdded", "toolDiffRemoved", "toolDiffContext",
    # syntax
    "syntaxComment", "syntaxKeyword", "syntaxFunction", "syntaxVariable", "syntaxString",
    "syntaxNumber", "syntaxType", "syntaxOperator", "syntaxPunctuation",
    # thinking level borders
    "thinkingOff", "thinkingMinimal", "thinkingLow", "thinkingMedium", "thinkingHigh", "thinkingXhigh",
    # bash mode
    "bashMode",
)

BUILTIN_DIR = Path(__file__).resolve().parent.parent / "themes"


@dataclass
class ThemeSpec:
    """A theme: its name, where it was read from, and its colours by token."""

    name: str
    path: str | None  # None for a theme built in code
    colors: dict[str, str | None]  # token -> "#rrggbb", or None for the terminal default
    export: dict[str, str | None] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def dark(self) -> bool:
        """Whether the theme is meant for a dark background (by its page colour or its text)."""
        probe = self.export.get("pageBg") or self.colors.get("userMessageBg")
        return probe is None or luminance(probe) < 0.5

    def color(self, token: str) -> str | None:
        return self.colors.get(token)


def luminance(hex_color: str) -> float:
    r, g, b = (int(hex_color[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def xterm_256(index: int) -> str:
    """The hex colour of an xterm 256-colour palette index."""
    if index < 16:
        base = ["000000", "800000", "008000", "808000", "000080", "800080", "008080", "c0c0c0",
                "808080", "ff0000", "00ff00", "ffff00", "0000ff", "ff00ff", "00ffff", "ffffff"]
        return "#" + base[index]
    if index < 232:
        index -= 16
        steps = [0, 95, 135, 175, 215, 255]
        r, g, b = steps[index // 36], steps[(index // 6) % 6], steps[index % 6]
        return f"#{r:02x}{g:02x}{b:02x}"
    level = 8 + (index - 232) * 10
    return f"#{level:02x}{level:02x}{level:02x}"


def _resolve(value: object, variables: dict[str, object], seen: frozenset[str] = frozenset()) -> str | None:
    """A colour value as ``#rrggbb`` or None (terminal default); raises ValueError if unreadable."""
    if isinstance(value, bool):
        raise ValueError(f"expected a colour, got {json.dumps(value)}")
    if isinstance(value, int):
        if not 0 <= value <= 255:
            raise ValueError(f"palette index {value} is outside 0-255")
        return xterm_256(value)
    if not isinstance(value, str):
        raise ValueError(f"expected a colour, got {json.dumps(value)}")
    text = value.strip()
    if text == "":
        return None
    if text.startswith("#"):
        digits = text[1:]
        if len(digits) == 3:
            digits = "".join(c * 2 for c in digits)
        if len(digits) != 6 or any(c not in "0123456789abcdefABCDEF" for c in digits):
            raise ValueError(f"{text!r} is not a #rrggbb colour")
        return "#" + digits.lower()
    if text in variables:
        if text in seen:
            raise ValueError(f"variable {text!r} refers to itself")
        return _resolve(variables[text], variables, seen | {text})
    raise ValueError(f"{text!r} is neither a #rrggbb colour, a palette index nor a name in \"vars\"")


def _object_at(data: dict[str, object], key: str) -> dict[str, object]:
    """``data[key]`` when it is a JSON object, else an empty one."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def parse_theme(data: object, path: str | None, fallback: ThemeSpec | None = None) -> ThemeSpec:
    """A :class:`ThemeSpec` from parsed JSON; problems are collected, never raised."""
    where = path or "<theme>"
    problems: list[str] = []
    if not isinstance(data, dict):
        problems.append(f"{where}: expected an object with \"name\" and \"colors\"")
        data = {}
    name = data.get("name") if isinstance(data.get("name"), str) else Path(where).stem
    variables: dict[str, object] = _object_at(data, "vars")
    raw = _object_at(data, "colors")
    colors: dict[str, str | None] = {}
    for token in TOKENS:
        if token not in raw:
            problems.append(f"{where}: colors.{token} is missing; using the built-in value")
            colors[token] = fallback.colors.get(token) if fallback else None
            continue
        try:
            colors[token] = _resolve(raw[token], variables)
        except ValueError as exc:
            problems.append(f"{where}: colors.{token}: {exc}; using the built-in value")
            colors[token] = fallback.colors.get(token) if fallback else None
    export: dict[str, str | None] = {}
    raw_export = _object_at(data, "export")
    for key, value in raw_export.items():
        try:
            export[key] = _resolve(value, variables)
        except ValueError as exc:
            problems.append(f"{where}: export.{key}: {exc}")
    return ThemeSpec(name=str(name), path=path, colors=colors, export=export, problems=problems)


def builtin_theme(name: str) -> ThemeSpec:
    """A theme shipped with Wolli (``dark``, ``light``)."""
    path = BUILTIN_DIR / f"{name}.json"
    return parse_theme(parse_json(path.read_text("utf-8")), str(path))


def theme_folders(agent_home: Path) -> list[Path]:
    """Where user themes live: ``WOLLI_HOME/themes``, then the agent's own ``themes/``."""
    from .paths import wolli_home

    return [wolli_home() / "themes", agent_home / "themes"]


def discover_themes(folders: list[Path]) -> tuple[dict[str, ThemeSpec], list[str]]:
    """Every theme by name (built-in first, then each folder in order) and the problems found."""
    dark = builtin_theme("dark")
    light = builtin_theme("light")
    themes: dict[str, ThemeSpec] = {"dark": dark, "light": light}
    problems: list[str] = []
    for folder in folders:
        try:
            files = sorted(folder.glob("*.json"))
        except OSError:
            continue
        for file in files:
            try:
                data = parse_json(read_text_capped(file, CONFIG_FILE_LIMIT))
            except (OSError, UnicodeDecodeError) as exc:
                problems.append(f"{file}: cannot read it ({exc}); theme skipped")
                continue
            except json.JSONDecodeError as exc:
                problems.append(f"{file}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); theme skipped")
                continue
            first = parse_theme(data, str(file), dark)
            spec = first if first.dark else parse_theme(data, str(file), light)
            problems.extend(spec.problems)
            themes[spec.name] = spec
    return themes, problems
