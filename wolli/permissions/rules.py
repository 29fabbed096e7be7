"""Permission rules as written: ``Tool`` or ``Tool(specifier)``, in Claude Code's spelling.

``Bash``, ``Bash(git diff:*)``, ``Edit(src/**)``, ``Read(~/.ssh/**)``, ``mcp__github``,
``mcp__github__get_issue``: the grammar is in ``docs/permissions.md``. Tool names map onto
Wolli's tools here (:func:`tools_of`): the capitalised names are Claude Code's families
(``Edit`` covers edit *and* write, ``Read`` every tool that reads files), the lower-case
names are Wolli's tools one by one, anything else names one tool exactly (an extension's,
an MCP server's). Rules that name no tool Wolli has (``WebFetch(...)``, pasted from Claude
Code) parse and simply match nothing; :func:`rule_warning` says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

RuleKind = Literal["allow", "ask", "deny"]
RULE_KINDS: tuple[RuleKind, ...] = ("deny", "ask", "allow")

# How Wolli's built-in tools take part: what their specifier is, and what they do.
READ_TOOLS = frozenset({"read", "grep", "find", "ls"})
EDIT_TOOLS = frozenset({"edit", "write"})
SHELL_TOOLS = frozenset({"bash"})
# Read tools that walk a whole directory tree (a deny below their root concerns them).
WALKING_TOOLS = frozenset({"grep", "find"})

# Claude Code's tool names (and Wolli's own) -> the Wolli tools a rule naming them covers.
_FAMILIES: dict[str, frozenset[str]] = {
    "Bash": SHELL_TOOLS,
    "Read": READ_TOOLS,
    "Edit": EDIT_TOOLS,
    "Write": frozenset({"write"}),
    "MultiEdit": frozenset({"edit"}),
    "Grep": frozenset({"grep"}),
    "Glob": frozenset({"find"}),
    "LS": frozenset({"ls"}),
}
# Claude Code tools Wolli has no counterpart for (a pasted rule is kept, matching nothing).
_FOREIGN = frozenset({"WebFetch", "WebSearch", "Task", "Agent", "NotebookEdit", "NotebookRead", "TodoWrite",
                      "KillShell", "BashOutput", "ExitPlanMode", "SlashCommand", "Skill"})
_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")


class RuleError(ValueError):
    """A rule that cannot be read; the message says what is wrong and shows the shape."""


@dataclass(frozen=True, slots=True)
class Rule:
    tool: str
    specifier: str | None = None

    def __str__(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"

    @property
    def is_mcp(self) -> bool:
        return self.tool.startswith("mcp__")

    def covers_tool(self, name: str) -> bool:
        """Whether this rule is about the tool ``name`` at all (its specifier aside)."""
        return name in tools_of(self.tool)

    def whole_tool(self) -> bool:
        """No specifier (or ``*``): the rule is about every call of its tools."""
        return self.specifier is None or self.specifier.strip() in ("", "*")


def parse_rule(text: str) -> Rule:
    """``"Bash(git diff:*)"`` -> ``Rule("Bash", "git diff:*")``; raises :class:`RuleError`."""
    if not isinstance(text, str):
        raise RuleError(f"a rule is a string like 'Bash(git diff:*)', not {type(text).__name__}")
    source = text.strip()
    if not source:
        raise RuleError("an empty rule; write a tool name such as 'Bash' or 'Edit(src/**)'")
    if "\n" in source:
        raise RuleError(f"{source!r}: a rule is one line")
    name, paren, rest = source.partition("(")
    name = name.strip()
    if not name:
        raise RuleError(f"{source!r}: the tool name is missing before '('")
    if not _NAME.match(name):
        raise RuleError(f"{source!r}: {name!r} is not a tool name (letters, digits, '_', '-', '.')")
    if not paren:
        return Rule(name)
    if not rest.endswith(")"):
        raise RuleError(f"{source!r}: the specifier is not closed; write {name}(...)")
    specifier = rest[:-1].strip()
    if not specifier:
        raise RuleError(f"{source!r}: empty parentheses; write {name} for every call, or put a pattern inside")
    if name.startswith("mcp__") and specifier != "*":
        raise RuleError(f"{source!r}: MCP rules name tools only (mcp__server or mcp__server__tool), no pattern")
    return Rule(name, specifier)


def tools_of(tool: str) -> frozenset[str]:
    """The Wolli tool names a rule's tool part covers (MCP server rules: see :func:`mcp_covers`)."""
    family = _FAMILIES.get(tool)
    if family is not None:
        return family
    return frozenset({tool})


def mcp_covers(rule_tool: str, name: str) -> bool:
    """``mcp__srv`` and ``mcp__srv__*`` cover every tool of server ``srv``; else exact names."""
    if not name.startswith("mcp__"):
        return False
    if rule_tool == name:
        return True
    server = rule_tool[:-3] if rule_tool.endswith("__*") else rule_tool
    return server.count("__") == 1 and name.startswith(server + "__")


def rule_applies(rule: Rule, name: str) -> bool:
    """Whether ``rule`` is about calls of the tool ``name`` (MCP server rules included)."""
    if rule.is_mcp:
        return mcp_covers(rule.tool, name)
    return name in tools_of(rule.tool)


def specifier_kind(rule: Rule) -> Literal["none", "command", "path", "unsupported"]:
    """How the rule's specifier is read: a shell command pattern, a path pattern, or not at all."""
    if rule.whole_tool():
        return "none"
    tools = tools_of(rule.tool)
    if tools <= SHELL_TOOLS:
        return "command"
    if tools <= READ_TOOLS | EDIT_TOOLS:
        return "path"
    return "unsupported"


def rule_warning(rule: Rule) -> str | None:
    """Why a rule that parsed will never match anything, or None when it can."""
    if rule.tool in _FOREIGN:
        return f"{rule}: Wolli has no {rule.tool} tool, so this rule matches nothing"
    if specifier_kind(rule) == "unsupported":
        return (f"{rule}: only Bash, Read, Edit, Write, Grep, Glob and LS rules (and Wolli's "
                f"bash, read, edit, write, grep, find, ls) take a pattern; this rule matches nothing")
    return None


def split_rule_list(text: str) -> list[str]:
    """``--allowed-tools "Bash(git diff:*),Read Edit(src/**)"`` -> the rule strings.

    Commas and spaces separate rules, except inside parentheses (``Bash(git log -n 5)``).
    """
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                out.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        out.append("".join(current))
    return out
