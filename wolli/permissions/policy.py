"""The decision for one tool call: allow, ask or deny, and why.

In this order, the first that applies decides:

1. a **deny** rule hits the call -> deny (nothing overrides it: deny wins);
2. **plan** mode and the call may change something (edits, writes, commands, tools not
   declared read-only) -> deny, telling the model it is planning;
3. a configured fallback for shell commands (the sandbox is unavailable: refuse or ask);
4. an **ask** rule hits the call -> ask (even in ``yolo``);
5. **allow** rules cover the call, or an extension vouched for it -> allow;
6. the mode decides: ``yolo`` allows; reads inside the project (and its additional
   directories) and read-only tools run in every mode, reads elsewhere ask; edits and
   writes inside the project run in ``accept-edits``; shell commands run when the sandbox
   confines them and ``sandbox.autoAllowBash`` is on; everything else asks.

Pure: the caller says what the tool is (:class:`ToolFacts`), which rules hold
(:class:`RuleSet`) and where the session is (:class:`Context`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from .bash_rules import candidate_texts, compile_command_pattern, hits_texts, line_allowed
from .modes import PermissionMode
from .path_rules import PathPattern, Where, absolute, compile_path_pattern, inside, spellings, walk_reaches
from .rules import (
    EDIT_TOOLS,
    READ_TOOLS,
    SHELL_TOOLS,
    WALKING_TOOLS,
    Rule,
    RuleKind,
    rule_applies,
    specifier_kind,
)

Outcome = Literal["allow", "ask", "deny"]


@dataclass(frozen=True)
class SourcedRule:
    """A rule with where it came from (shown by ``/permissions``, named in denials)."""

    rule: Rule
    kind: RuleKind
    source: str  # cli | user | global | project | project-shared | session
    origin: str = ""  # the file or flag it was read from
    where: Where | None = None  # project files read ``/path`` against their own folder

    def describe(self) -> str:
        return f"{self.rule} ({self.origin or self.source})"


class RuleSet:
    """Rules grouped by kind, in the order they were given."""

    def __init__(self, rules: Iterable[SourcedRule] = ()) -> None:
        self.all: tuple[SourcedRule, ...] = tuple(rules)
        self.deny = tuple(r for r in self.all if r.kind == "deny")
        self.ask = tuple(r for r in self.all if r.kind == "ask")
        self.allow = tuple(r for r in self.all if r.kind == "allow")
        self._by_tool: dict[tuple[str, str], tuple[SourcedRule, ...]] = {}

    def about(self, kind: str, name: str) -> tuple[SourcedRule, ...]:
        """The rules of ``kind`` that concern the tool ``name`` (kept: asked for every call)."""
        key = (kind, name)
        found = self._by_tool.get(key)
        if found is None:
            found = self._by_tool[key] = tuple(r for r in getattr(self, kind) if rule_applies(r.rule, name))
        return found

    def __len__(self) -> int:
        return len(self.all)


@dataclass(frozen=True)
class ToolFacts:
    name: str
    read_only: bool = False  # declared by the tool itself (an extension's, MCP readOnlyHint)


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    reason: str
    rule: SourcedRule | None = None


@dataclass(frozen=True)
class Context:
    mode: PermissionMode
    where: Where
    extra_dirs: tuple[str, ...] = ()
    # The sandbox confines shell commands and they may run without asking.
    bash_auto_allow: bool = False
    # The sandbox was asked for and is unavailable: what shell commands get instead.
    bash_fallback: Decision | None = None
    project_dirs: tuple[str, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        dirs = dict.fromkeys([self.where.cwd, self.where.root, *self.extra_dirs])
        object.__setattr__(self, "project_dirs", tuple(dirs))


def subject_path(name: str, arguments: dict[str, Any], cwd: str) -> str | None:
    """The absolute path a file tool works on (read tools default to the working directory)."""
    value = arguments.get("path")
    if name in READ_TOOLS and (value is None or value == ""):
        return cwd
    if isinstance(value, str) and value.strip():
        return absolute(value, cwd)
    return None


def is_read_only(facts: ToolFacts) -> bool:
    return facts.name in READ_TOOLS or (facts.read_only and facts.name not in SHELL_TOOLS | EDIT_TOOLS)


def evaluate(
    facts: ToolFacts, arguments: dict[str, Any], rules: RuleSet, context: Context, *, vouched: bool = False
) -> Decision:
    """Allow, ask or deny one call of ``facts.name`` with ``arguments`` (see the module doc).
    ``vouched``: an extension's ``tool_call`` handler answered ``{"allow": True}``."""
    name = facts.name
    call = _Call(name, arguments, context)
    denied = call.first_hit(rules.about("deny", name))
    if denied is not None:
        return Decision("deny", f"Permission denied by the rule {denied.describe()}.", denied)
    if context.mode == "plan" and not is_read_only(facts):
        return Decision("deny", plan_refusal(name))
    if name in SHELL_TOOLS and context.bash_fallback is not None:
        return context.bash_fallback
    asked = call.first_hit(rules.about("ask", name))
    if asked is not None:
        return Decision("ask", f"the rule {asked.describe()} asks before this", asked)
    allowed = call.allowed_by(rules.about("allow", name))
    if allowed is not None:
        return Decision("allow", f"allowed by {allowed.describe()}", allowed)
    if vouched:
        return Decision("allow", "an extension allowed it")
    return _by_mode(call, facts, context)


def plan_refusal(name: str) -> str:
    what = "run a command" if name in SHELL_TOOLS else "change files" if name in EDIT_TOOLS else \
        "use a tool that may change things"
    return (f"Not run: the session is in plan mode, where you may read and search but not {what}. "
            "Keep planning: finish the plan and present it; the user leaves plan mode when they "
            "want it carried out.")


def _by_mode(call: _Call, facts: ToolFacts, context: Context) -> Decision:
    mode, name = context.mode, facts.name
    if mode == "yolo":
        return Decision("allow", "yolo mode")
    if name in READ_TOOLS:
        if call.path is None or call.inside_project():
            return Decision("allow", "reading inside the project")
        return Decision("ask", "it reads outside the project")
    if is_read_only(facts):
        return Decision("allow", "the tool only reads")
    if name in EDIT_TOOLS:
        if mode == "accept-edits" and call.path is not None and call.inside_project():
            return Decision("allow", "accept-edits mode")
        where = "inside the project" if call.path is not None and call.inside_project() else "outside the project"
        return Decision("ask", f"{mode} mode asks before changing files ({where})")
    if name in SHELL_TOOLS:
        if context.bash_auto_allow:
            return Decision("allow", "the sandbox confines shell commands")
        return Decision("ask", f"{mode} mode asks before shell commands")
    return Decision("ask", f"{mode} mode asks before tools that may change things")


class _Call:
    """One call, with its subject (command or path) worked out once: a check runs every
    rule against the same spellings, so links are resolved and the line is read once."""

    def __init__(self, name: str, arguments: dict[str, Any], context: Context) -> None:
        self.name = name
        self.context = context
        command = arguments.get("command") if name in SHELL_TOOLS else None
        self.command: str | None = command if isinstance(command, str) else None
        self.path = subject_path(name, arguments, context.where.cwd) if name in READ_TOOLS | EDIT_TOOLS else None
        self._spelled: tuple[str, ...] | None = None
        self._candidates: list[str] | None = None

    @property
    def spelled(self) -> tuple[str, ...]:
        if self._spelled is None:
            self._spelled = spellings(self.path) if self.path is not None else ()
        return self._spelled

    @property
    def candidates(self) -> list[str]:
        if self._candidates is None:
            self._candidates = candidate_texts(self.command) if self.command is not None else []
        return self._candidates

    def inside_project(self) -> bool:
        assert self.path is not None
        return any(inside(self.spelled, folder) for folder in self.context.project_dirs)

    def first_hit(self, rules: tuple[SourcedRule, ...]) -> SourcedRule | None:
        """Deny/ask: the first rule about this tool that hits any part of the call."""
        for sourced in rules:
            rule = sourced.rule
            kind = specifier_kind(rule)
            if kind == "none":
                return sourced
            if kind == "command" and self.command is not None:
                if hits_texts(compile_command_pattern(rule.specifier), self.command, self.candidates):
                    return sourced
            elif kind == "path" and self.path is not None:
                for pattern in self.patterns(rule.specifier or "", sourced.where):
                    if any(pattern.matches(p) for p in self.spelled) or \
                            (self.name in WALKING_TOOLS and walk_reaches(pattern, self.path)):
                        return sourced
        return None

    def patterns(self, specifier: str, where: Where | None) -> tuple[PathPattern, ...]:
        """The pattern anchored as written and, where links differ, resolved."""
        where = where or self.context.where
        written = compile_path_pattern(specifier, where)
        resolved = compile_path_pattern(specifier, _resolved_where(where))
        return (written,) if resolved.regex.pattern == written.regex.pattern else (written, resolved)

    def allowed_by(self, rules: tuple[SourcedRule, ...]) -> SourcedRule | None:
        """Allow: a whole-tool rule, or path rules covering the path, or command rules that
        together cover every part of the command line."""
        commands: list[SourcedRule] = []
        for sourced in rules:
            rule = sourced.rule
            kind = specifier_kind(rule)
            if kind == "none":
                return sourced
            if kind == "path" and self.path is not None:
                real = self.spelled[-1]
                if any(p.matches(real) for p in self.patterns(rule.specifier or "", sourced.where)):
                    return sourced
            elif kind == "command":
                commands.append(sourced)
        if commands and self.command is not None:
            by_pattern = {compile_command_pattern(s.rule.specifier): s for s in commands}
            used = line_allowed(self.command, list(by_pattern))
            if used:
                chosen = [by_pattern[p] for p in used]
                return chosen[0] if len(chosen) == 1 else _together(chosen)
        return None


@lru_cache(maxsize=64)
def _resolved_where(where: Where) -> Where:
    return where.resolved()


def _together(rules: list[SourcedRule]) -> SourcedRule:
    """Several command rules that cover a line between them, described as one."""
    first = rules[0]
    others = ", ".join(str(r.rule) for r in rules[1:])
    return SourcedRule(first.rule, "allow", first.source, f"{first.origin or first.source}; with {others}")
