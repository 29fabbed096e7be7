"""A definition's ``tools`` / ``disallowedTools`` applied to the tools a child could have.

Names are matched without regard to case, and Claude Code's tool names mean Wolli's
equivalents (``Glob`` is ``find``, ``MultiEdit`` is ``edit``), so its agent files need no
edit. ``*`` and ``?`` globs work on any name (``mcp__github__*``). A rule's argument
(``Bash(git diff:*)``) narrows nothing here: the tool as a whole is selected, and argument
rules belong to permissions (docs/permissions.md). Names that match no tool are reported.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from ...config.subagent_files import SubagentDefinition

# Claude Code's tool names (lower case) -> Wolli's.
CLAUDE_CODE_TOOLS: dict[str, str] = {
    "read": "read", "write": "write", "edit": "edit", "multiedit": "edit", "bash": "bash",
    "grep": "grep", "glob": "find", "ls": "ls", "task": "task", "agent": "task",
}
# Claude Code tools Wolli has no equivalent of: asked for, they are skipped quietly (a
# reviewer's ``WebFetch`` should not make the whole definition unusable).
CLAUDE_CODE_ONLY = frozenset({
    "webfetch", "websearch", "notebookedit", "notebookread", "todowrite", "todoread", "exitplanmode",
    "bashoutput", "killshell", "killbash", "slashcommand", "skill", "askuserquestion",
})
# Children never get the task tool: one level of delegation (a child's work stays visible).
NEVER_FOR_CHILDREN = frozenset({"task"})


@dataclass
class Selection:
    names: list[str]
    unknown: list[str] = field(default_factory=list)


def select_tools(definition: SubagentDefinition, available: list[str]) -> Selection:
    """The tool names a child of ``definition`` gets, in the order of ``available``."""
    pool = [n for n in available if n not in NEVER_FOR_CHILDREN]
    unknown: list[str] = []
    if definition.tools is None:
        chosen = set(pool)
    else:
        chosen = set()
        for pattern in definition.tools:
            hits = _matches(pattern, pool)
            if not hits and not _claude_code_only(pattern) and _target(pattern) not in NEVER_FOR_CHILDREN:
                unknown.append(pattern)
            chosen.update(hits)
    for pattern in definition.disallowed_tools:
        chosen.difference_update(_matches(pattern, pool))
    return Selection([n for n in pool if n in chosen], unknown)


def _target(pattern: str) -> str:
    bare = pattern.split("(", 1)[0].strip().lower()
    return CLAUDE_CODE_TOOLS.get(bare, bare)


def _claude_code_only(pattern: str) -> bool:
    return pattern.split("(", 1)[0].strip().lower() in CLAUDE_CODE_ONLY


def _matches(pattern: str, names: list[str]) -> list[str]:
    target = _target(pattern)
    if any(ch in target for ch in "*?["):
        return [n for n in names if fnmatch.fnmatchcase(n.lower(), target)]
    return [n for n in names if n.lower() == target]
