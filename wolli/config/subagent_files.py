"""Subagent definition files: markdown with front matter, in Claude Code's agent-file format.

One file defines one subagent: the front matter says what it is and may use, the body is
its system prompt. Claude Code's files work unchanged (docs/subagents.md lists the fields
and what Wolli does with each). :func:`load_subagent_file` is the one reader: the agent
home, the project's ``.claude/agents/``, packages and Claude Code plugins all go through it.

Field values are kept as written here (tool names, the model alias, the permission mode);
the runtime maps them onto Wolli's tools, models and modes when a child starts, so a
definition read before an MCP server is up still names that server's tools.
"""

from __future__ import annotations

import os
import re
from dataclasses import field
from pathlib import Path

from ..base.front_matter import parse_front_matter
from ..base.records import record
from ..base.safe_files import read_head

# A definition is a prompt, not a book: anything longer is cut and said so.
MAX_FILE_BYTES = 256 * 1024
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
# Claude Code fields Wolli reads (the rest are listed in ``ignored`` of each definition).
KNOWN_FIELDS = frozenset({
    "name", "description", "tools", "disallowedTools", "model", "permissionMode", "maxTurns", "skills",
    "background", "askUser",
})
# Claude Code fields Wolli knows about but does not act on (docs/subagents.md says why).
UNSUPPORTED_FIELDS = frozenset({"hooks", "mcpServers", "memory", "isolation", "color", "effort", "disabled"})


class SubagentFileError(ValueError):
    """A definition file that cannot be used; the message names the file and the problem."""


@record(frozen=True)
class SubagentDefinition:
    """One subagent, wherever it was defined (a file, an extension, built in)."""

    name: str
    description: str
    system_prompt: str
    # Allowed tool names or globs as written (``Read``, ``mcp__github__*``); None: every tool
    # of the parent (``task`` excepted); an empty list: no tools at all.
    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()
    # ``inherit`` (or None), an alias (``haiku``, ``sonnet``, ``opus``) or ``provider/id``.
    model: str | None = None
    permission_mode: str | None = None
    max_turns: int | None = None
    skills: tuple[str, ...] = ()
    # Claude Code's ``background``: the child never asks the user anything.
    background: bool = False
    # Wolli's ``askUser``: the child's permission questions go to the user (through the
    # parent's UI, titled with the child's name). Off by default: a child that needs
    # approval gets a refusal it can report back.
    ask_user: bool = False
    # Where it came from: a file path, ``builtin`` or ``extension:<name>``.
    source: str = "builtin"
    # Front-matter keys that were present but have no effect in Wolli.
    ignored: tuple[str, ...] = field(default=())


def load_subagent_file(path: str | os.PathLike[str]) -> SubagentDefinition:
    """Read one definition file; raises :class:`SubagentFileError` with a clear reason."""
    path = Path(path)
    try:
        raw, truncated = read_head(path, MAX_FILE_BYTES)
    except OSError as exc:
        raise SubagentFileError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    if truncated:
        raise SubagentFileError(f"{path}: larger than {MAX_FILE_BYTES // 1024} KiB; a definition must be smaller")
    return parse_subagent_text(raw.decode("utf-8", "replace"), source=str(path), fallback_name=path.stem)


def parse_subagent_text(text: str, *, source: str, fallback_name: str | None = None) -> SubagentDefinition:
    """A definition from the text of an agent file (``source`` names it in errors)."""
    meta, body = parse_front_matter(text)
    if not meta:
        raise SubagentFileError(f"{source}: no front matter (a '---' fenced block with name and description)")
    name = meta.get("name") or fallback_name or ""
    if not _NAME.match(name):
        raise SubagentFileError(f"{source}: name {name!r} is not usable (letters, digits, '-', '_', '.', ':'; "
                                "at most 64 characters)")
    description = " ".join(meta.get("description", "").split())
    if not description:
        raise SubagentFileError(f"{source}: 'description' is missing; the model picks subagents by it")
    tools = split_list(meta["tools"]) if "tools" in meta else None
    return SubagentDefinition(
        name=name,
        description=description,
        system_prompt=body.strip(),
        tools=tuple(tools) if tools is not None else None,
        disallowed_tools=tuple(split_list(meta.get("disallowedTools", ""))),
        model=(meta.get("model") or "").strip() or None,
        permission_mode=(meta.get("permissionMode") or "").strip() or None,
        max_turns=_positive_int(meta.get("maxTurns"), "maxTurns", source),
        skills=tuple(split_list(meta.get("skills", ""))),
        background=_boolean(meta.get("background"), "background", source),
        ask_user=_boolean(meta.get("askUser"), "askUser", source),
        source=source,
        ignored=tuple(sorted(k for k in meta if k not in KNOWN_FIELDS)),
    )


def split_list(value: str) -> list[str]:
    """A list as agent files write it: ``Read, Grep``, ``[Read, Grep]``, a YAML ``- item``
    list (folded onto one line by the front-matter reader) or ``Read Grep``. Commas inside
    parentheses stay (``Bash(git diff:*, git log:*)``)."""
    text = value.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    if text.startswith("- "):
        items = re.split(r"(?:^|\s)-\s+", text)
    else:
        items, depth, current = [], 0, ""
        for char in text:
            depth += (char == "(") - (char == ")")
            if char == "," and depth <= 0:
                items.append(current)
                current = ""
            else:
                current += char
        items.append(current)
        if len(items) == 1 and "(" not in text:
            items = text.split()
    return [item.strip().strip("'\"").strip() for item in items if item.strip().strip("'\"").strip()]


def _positive_int(value: str | None, key: str, source: str) -> int | None:
    if value is None or not value.strip():
        return None
    try:
        number = int(value.strip())
    except ValueError:
        raise SubagentFileError(f"{source}: {key} must be a whole number, not {value!r}") from None
    if number < 1:
        raise SubagentFileError(f"{source}: {key} must be at least 1, not {number}")
    return number


def _boolean(value: str | None, key: str, source: str) -> bool:
    if value is None or not value.strip():
        return False
    lowered = value.strip().lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    raise SubagentFileError(f"{source}: {key} must be true or false, not {value!r}")
