"""``wolli.register_subagent``: a definition from a dict or an agent file (docs/subagents.md)."""

from __future__ import annotations

import os
from typing import Any

from ..config.subagent_files import (
    SubagentDefinition,
    SubagentFileError,
    load_subagent_file,
    parse_subagent_text,
)

# Accepted dict keys: Claude Code's front-matter names and their snake_case spellings.
_KEYS = {
    "name": "name", "description": "description", "prompt": "prompt", "system_prompt": "prompt",
    "tools": "tools", "disallowed_tools": "disallowedTools", "disallowedTools": "disallowedTools",
    "model": "model", "permission_mode": "permissionMode", "permissionMode": "permissionMode",
    "max_turns": "maxTurns", "maxTurns": "maxTurns", "skills": "skills", "background": "background",
    "ask_user": "askUser", "askUser": "askUser",
}


def as_subagent(value: dict[str, Any] | str | os.PathLike[str], owner: str) -> SubagentDefinition:
    source = f"extension:{owner}"
    try:
        if isinstance(value, str | os.PathLike):
            return load_subagent_file(value)
        if not isinstance(value, dict):
            raise TypeError("register_subagent takes a dict of definition fields or the path of an agent file")
        return _from_dict(value, source)
    except SubagentFileError as exc:
        raise ValueError(f"register_subagent: {exc}") from None


def _from_dict(value: dict[str, Any], source: str) -> SubagentDefinition:
    import dataclasses
    import difflib

    fields: dict[str, Any] = {}
    for key, item in value.items():
        canonical = _KEYS.get(key)
        if canonical is None:
            near = difflib.get_close_matches(key, _KEYS, n=1)
            raise ValueError(f"register_subagent: unknown field {key!r}" + (f"; did you mean {near[0]!r}?" if near else ""))
        fields[canonical] = item
    prompt = str(fields.pop("prompt", "") or "")
    front = [f"{key}: {_scalar(item)}" for key, item in fields.items()]
    # Parsed like a file, so a dict and an agent file can never disagree on a field.
    parsed = parse_subagent_text("---\n" + "\n".join(front) + "\n---\n", source=source)
    return dataclasses.replace(parsed, system_prompt=prompt.strip())


def _scalar(item: object) -> str:
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, list | tuple):
        return "[" + ", ".join(str(i) for i in item) + "]"
    return " ".join(str(item).split())  # one line: a description may not end the front matter
