"""The built-in look of tool calls: a one-line header per call, a body per result.

Shared by the TUI's tool rows and the line mode's tool summaries.

Pure functions from a tool call's arguments and result to Rich :class:`~rich.text.Text`, so
they are tested without an app. Every argument and output shown passes through
:func:`~wolli.base.text_safety.terminal_safe` here, once for both surfaces: a file name
or a command's output can hold escape sequences, which are shown, never obeyed. A tool that overrides a built-in (same name) inherits the
built-in's renderer for each slot it does not render itself (spec: per-slot inheritance).
Colours come from the theme spec passed in (``toolDiffAdded``...).
"""

from __future__ import annotations

import json
import os
from typing import Any

from rich.text import Text

from ...base.text_safety import one_line_safe, terminal_safe
from ...config.themes import ThemeSpec

# Lines shown of a result body while a row is collapsed, and at most when expanded.
COLLAPSED_LINES = 5
EXPANDED_LINES = 400
EXPAND_HINT = "Ctrl+O to expand"  # the TUI's key; the line mode has none, so passes ""


def short_path(path: str, cwd: str | None = None) -> str:
    """``path`` relative to ``cwd`` when inside it, else with the home folder as ``~``."""
    if not path:
        return ""
    if cwd and os.path.isabs(path):
        try:
            rel = os.path.relpath(path, cwd)
            if not rel.startswith(".."):
                return rel
        except ValueError:
            pass
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home != "/" and path.startswith(home + os.sep) else path


def _arg(args: object, *names: str, one_line: bool = False) -> Any:
    """The first of ``names`` in ``args``, made safe to show; ``one_line``: for a header's
    path, pattern or description, whose newline would pass for the start of the body."""
    if not isinstance(args, dict):
        return None
    for name in names:
        if args.get(name) is not None:
            value = args[name]
            if not isinstance(value, str):
                return value
            return one_line_safe(value) if one_line else terminal_safe(value)
    return None


def _style(spec: ThemeSpec, token: str, extra: str = "") -> str:
    color = spec.color(token)
    return " ".join(part for part in (extra, color) if part)


# --------------------------------------------------------------------------- headers


def call_header(name: str, args: object, spec: ThemeSpec, cwd: str | None = None) -> Text:
    """``$ ls -la``, ``read src/app.py:10-40``, ``edit src/app.py``... for a known tool; else
    the tool name and its arguments as compact JSON."""
    title = _style(spec, "toolTitle", "bold")
    name = terminal_safe(name)
    text = Text()
    path = short_path(str(_arg(args, "path", "file_path", one_line=True) or ""), cwd)
    match name:
        case "bash":
            text.append("$ ", style=_style(spec, "bashMode", "bold"))
            text.append(str(_arg(args, "command") or ""), style=title)
            if _arg(args, "timeout"):
                text.append(f"  (timeout {_arg(args, 'timeout')}s)", style=_style(spec, "dim"))
        case "read":
            text.append("read ", style=title)
            text.append(path or ".", style=_style(spec, "accent"))
            offset, limit = _arg(args, "offset"), _arg(args, "limit")
            if offset or limit:
                start = int(offset or 1)
                text.append(f":{start}-{start + int(limit) - 1}" if limit else f":{start}", style=_style(spec, "dim"))
        case "edit" | "write":
            text.append(f"{name} ", style=title)
            text.append(path, style=_style(spec, "accent"))
            content = _arg(args, "content")
            if name == "write" and isinstance(content, str):
                lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
                text.append(f"  ({lines} line{'s' if lines != 1 else ''})", style=_style(spec, "dim"))
        case "grep" | "find":
            text.append(f"{name} ", style=title)
            text.append(str(_arg(args, "pattern", one_line=True) or ""), style=_style(spec, "accent"))
            where = short_path(str(_arg(args, "path", one_line=True) or ""), cwd)
            if where:
                text.append(f" in {where}", style=_style(spec, "dim"))
            glob = _arg(args, "glob", one_line=True)
            if glob:
                text.append(f" ({glob})", style=_style(spec, "dim"))
        case "ls":
            text.append("ls ", style=title)
            text.append(path or ".", style=_style(spec, "accent"))
        case "task":
            text.append("task ", style=title)
            text.append(str(_arg(args, "subagent_type", one_line=True) or "general-purpose"),
                        style=_style(spec, "accent"))
            description = _arg(args, "description", one_line=True)
            if description:
                text.append(f" · {description}", style=_style(spec, "dim"))
        case _:
            text.append(name, style=title)
            if args:
                compact = terminal_safe(json.dumps(args, ensure_ascii=False, default=str))
                if len(compact) > 200:
                    compact = compact[:199] + "…"
                text.append(" " + compact, style=_style(spec, "muted"))
    return text


# --------------------------------------------------------------------------- bodies


def _tail(lines: list[str], expanded: bool) -> tuple[list[str], int]:
    keep = EXPANDED_LINES if expanded else COLLAPSED_LINES
    hidden = max(0, len(lines) - keep)
    return lines[-keep:] if hidden else lines, hidden


def _head(lines: list[str], expanded: bool) -> tuple[list[str], int]:
    keep = EXPANDED_LINES if expanded else COLLAPSED_LINES
    hidden = max(0, len(lines) - keep)
    return lines[:keep], hidden


def _more(text: Text, hidden: int, spec: ThemeSpec, where: str, hint: str) -> None:
    if hidden:
        text.append(f"… {hidden} more line{'s' if hidden != 1 else ''} {where}" + (f" ({hint})" if hint else "") + "\n",
                    style=_style(spec, "dim", "italic"))


def _lines_of(result_text: str) -> list[str]:
    return result_text.rstrip("\n").split("\n") if result_text.strip() else []


def bash_body(result_text: str, details: object, is_error: bool, expanded: bool, spec: ThemeSpec,
              elapsed_s: float | None = None, hint: str = EXPAND_HINT) -> Text:
    """The output's last lines, then the exit code and how long it took."""
    result_text = terminal_safe(result_text)
    text = Text()
    lines, hidden = _tail(_lines_of(result_text), expanded)
    _more(text, hidden, spec, "above", hint)
    for line in lines:
        text.append(line + "\n", style=_style(spec, "toolOutput"))
    code = getattr(details, "exit_code", None) if details is not None else None
    if code is None and isinstance(details, dict):
        code = details.get("exit_code", details.get("exitCode"))
    status = []
    if code is not None:
        status.append(f"exit {code}")
    if elapsed_s is not None:
        status.append(f"{elapsed_s:.1f}s")
    if status:
        text.append(" · ".join(status), style=_style(spec, "error" if is_error or code else "dim"))
    return text


def diff_body(diff: str, expanded: bool, spec: ThemeSpec, hint: str = EXPAND_HINT) -> Text:
    """A unified diff with added, removed and context lines in the theme's diff colours."""
    diff = terminal_safe(diff)
    text = Text()
    lines = [line for line in diff.split("\n") if not line.startswith(("---", "+++"))]
    shown, hidden = _head(lines, expanded or len(lines) <= 40)
    for line in shown:
        if line.startswith("+"):
            style = _style(spec, "toolDiffAdded")
        elif line.startswith("-"):
            style = _style(spec, "toolDiffRemoved")
        elif line.startswith("@@"):
            style = _style(spec, "accent", "dim")
        else:
            style = _style(spec, "toolDiffContext")
        text.append(line + "\n", style=style)
    _more(text, hidden, spec, "below", hint)
    return text


def write_body(content: str, expanded: bool, spec: ThemeSpec, hint: str = EXPAND_HINT) -> Text:
    """A new file's content as added lines."""
    lines = terminal_safe(content).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    text = Text()
    shown, hidden = _head(lines, expanded)
    for line in shown:
        text.append("+" + line + "\n", style=_style(spec, "toolDiffAdded"))
    _more(text, hidden, spec, "below", hint)
    return text


def listing_body(result_text: str, expanded: bool, spec: ThemeSpec, hint: str = EXPAND_HINT) -> Text:
    """The first hits of read, grep, find and ls."""
    result_text = terminal_safe(result_text)
    text = Text()
    shown, hidden = _head(_lines_of(result_text), expanded)
    for line in shown:
        text.append(line + "\n", style=_style(spec, "toolOutput"))
    _more(text, hidden, spec, "below", hint)
    return text


def result_body(name: str, args: object, result_text: str, details: object, is_error: bool, expanded: bool,
                spec: ThemeSpec, elapsed_s: float | None = None, hint: str = EXPAND_HINT) -> Text:
    """The built-in body for a tool's result (errors show their message whatever the tool)."""
    if is_error and name != "bash":
        return Text(terminal_safe(result_text.strip()) or "failed", style=_style(spec, "error"))
    match name:
        case "bash":
            return bash_body(result_text, details, is_error, expanded, spec, elapsed_s, hint)
        case "edit":
            diff = details.get("diff") if isinstance(details, dict) else None
            return diff_body(diff, expanded, spec, hint) if diff else listing_body(result_text, expanded, spec, hint)
        case "write":
            content = _arg(args, "content")
            return write_body(content, expanded, spec, hint) if isinstance(content, str) else listing_body(
                result_text, expanded, spec, hint)
        case _:
            return listing_body(result_text, expanded, spec, hint)
