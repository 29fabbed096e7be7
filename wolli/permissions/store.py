"""Where permission rules are kept, and which of them count.

=================  ================================================  =====================
source             file                                              counts
=================  ================================================  =====================
``cli``            ``--allowed-tools`` / ``--disallowed-tools``      this run
``session``        rules an extension added for this process         this run
``project``        ``<agent home>/permissions/<project>.json``       everything (yours)
``user``           the agent's ``settings.json`` ``permissions``     everything (yours)
``global``         ``WOLLI_HOME/settings.json`` ``permissions``      everything (yours)
``shared``         ``<project>/.wolli/settings.json`` ``permissions``  deny and ask always;
                                                                     allow once approved
=================  ================================================  =====================

Rule lists add up across sources (they do not replace each other like other settings).
The ``shared`` file comes with the repository, so whoever wrote it is not necessarily you:
its rules may only narrow what the agent does, unless you approve its allow rules (the
approval remembers exactly which rules, so a changed list asks again). "Allow always" saves
into ``project``, a file in your agent home that applies to this project only.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..config.file_lock import locked
from ..config.settings import Settings, read_json_file, write_json_atomic
from .modes import ModeError, PermissionMode, parse_mode
from .path_rules import Where
from .policy import RuleSet, SourcedRule
from .project import SHARED_DIR, find_project_root, personal_rules_path, shared_rules_path
from .rules import RULE_KINDS, RuleError, RuleKind, parse_rule, rule_warning, split_rule_list

Scope = Literal["project", "user", "global", "session"]
SCOPES: tuple[Scope, ...] = ("project", "user", "global", "session")
__all__ = ["SHARED_DIR", "SCOPES", "LoadedRules", "PermissionStore", "Scope", "find_project_root"]


@dataclass
class LoadedRules:
    rules: RuleSet
    # One line per rule that could not be read or will never match anything.
    problems: list[str] = field(default_factory=list)
    # Allow rules of the shared project file waiting for the user's approval.
    pending_shared: list[str] = field(default_factory=list)
    shared_file: str | None = None
    default_mode: PermissionMode | None = None
    additional_dirs: tuple[str, ...] = ()


class PermissionStore:
    """Reads every source (fresh on each :meth:`load`) and writes the user's own ones."""

    def __init__(self, settings: Settings, agent_home: Path, cwd: str, *, cli_allow: list[str] | None = None,
                 cli_deny: list[str] | None = None) -> None:
        self.settings = settings
        self.agent_home = Path(agent_home)
        self.cwd = os.path.abspath(cwd)
        self.root = find_project_root(self.cwd)
        self.cli_allow = [r for text in cli_allow or [] for r in split_rule_list(text)]
        self.cli_deny = [r for text in cli_deny or [] for r in split_rule_list(text)]
        self.session_rules: dict[RuleKind, list[str]] = {"allow": [], "ask": [], "deny": []}
        self.where = Where.here(self.cwd, self.root)
        # The files whose changes matter, worked out once (a check stats them each time).
        self.project_path = personal_rules_path(self.agent_home, self.root)
        self.shared_path = shared_rules_path(self.root)
        self.watched = (str(self.project_path), str(self.shared_path))

    # ------------------------------------------------------------------ files

    def _origin(self, scope: str) -> str:
        if scope == "user":
            return str(self.settings.agent_path)
        if scope == "global":
            return str(self.settings.global_path)
        if scope == "project":
            return str(self.project_path)
        if scope == "shared":
            return str(self.shared_path)
        return "--allowed-tools/--disallowed-tools" if scope == "cli" else "this session"

    # ------------------------------------------------------------------ reading

    def load(self) -> LoadedRules:
        problems: list[str] = []
        rules: list[SourcedRule] = []

        def take(scope: str, kind: RuleKind, values: object, where: Where | None = None) -> None:
            origin = self._origin(scope)
            if values is None:
                return
            if not isinstance(values, list):
                problems.append(f"{origin}: permissions.{kind} must be a list of rule strings")
                return
            for index, text in enumerate(values):
                try:
                    rule = parse_rule(text)
                except RuleError as exc:
                    problems.append(f"{origin}: permissions.{kind}[{index}]: {exc}; ignoring it")
                    continue
                warning = rule_warning(rule)
                if warning:
                    problems.append(f"{origin}: {warning}")
                rules.append(SourcedRule(rule, kind, scope, origin, where))

        take("cli", "deny", self.cli_deny)
        take("cli", "allow", self.cli_allow)
        for kind in RULE_KINDS:
            take("session", kind, self.session_rules[kind])
        project = self._read_project(problems)
        for kind in RULE_KINDS:
            take("project", kind, project.get(kind))
        for scope, target in (("user", "agent"), ("global", "global")):
            block = self.settings.file_values(target).get("permissions")  # type: ignore[arg-type]
            if isinstance(block, dict):
                for kind in RULE_KINDS:
                    take(scope, kind, block.get(kind))
        shared, shared_file = self._read_shared(problems)
        pending: list[str] = []
        if shared:
            shared_where = Where.here(self.cwd, str(self.shared_path.parent.parent))
            take("shared", "deny", shared.get("deny"), shared_where)
            take("shared", "ask", shared.get("ask"), shared_where)
            allow = shared.get("allow")
            if isinstance(allow, list) and allow:
                if project.get("approvedShared", {}).get(str(self.shared_path)) == _fingerprint(allow):
                    take("shared", "allow", allow, shared_where)
                else:
                    pending = [str(r) for r in allow]
        return LoadedRules(RuleSet(rules), problems, pending, shared_file, self._default_mode(problems),
                           self._additional_dirs())

    def _default_mode(self, problems: list[str]) -> PermissionMode | None:
        value = self.settings.get("permissions.defaultMode")
        if value is None:
            return None
        try:
            return parse_mode(value)
        except ModeError as exc:
            problems.append(f"settings permissions.defaultMode: {exc}; using the mode's default")
            return None

    def _additional_dirs(self) -> tuple[str, ...]:
        values = self.settings.get("permissions.additionalDirectories") or []
        out = []
        for value in values if isinstance(values, list) else []:
            if isinstance(value, str) and value.strip():
                out.append(os.path.normpath(os.path.join(self.cwd, os.path.expanduser(value.strip()))))
        return tuple(out)

    def _read_project(self, problems: list[str]) -> dict[str, Any]:
        errors: list[str] = []
        data = read_json_file(self.project_path, errors, validate=False)
        problems.extend(errors)
        return data

    def _read_shared(self, problems: list[str]) -> tuple[dict[str, Any], str | None]:
        path = self.shared_path
        if not path.is_file() or _same_file(path, self.settings.global_path) or _same_file(path, self.settings.agent_path):
            return {}, None
        errors: list[str] = []
        data = read_json_file(path, errors, validate=False)
        problems.extend(errors)
        block = data.get("permissions")
        if block is None:
            return {}, str(path)
        if not isinstance(block, dict):
            problems.append(f"{path}: 'permissions' must be an object with allow/ask/deny lists")
            return {}, str(path)
        return block, str(path)

    # ------------------------------------------------------------------ writing

    def add(self, kind: RuleKind, text: str, scope: Scope = "project") -> str:
        """Save a rule (checked first); returns it as it will be shown. Already there: no-op."""
        rule = str(parse_rule(text))
        if kind not in RULE_KINDS:
            raise RuleError(f"{kind!r} is not a rule kind; use allow, ask or deny")

        def change(rules: list[str]) -> None:
            if rule not in rules:
                rules.append(rule)

        self._edit(scope, kind, change)
        return rule

    def remove(self, kind: RuleKind, text: str, scope: Scope) -> bool:
        """Take a rule out of one source; False when it was not there."""
        wanted = {text.strip()}
        try:
            wanted.add(str(parse_rule(text)))
        except RuleError:
            pass
        removed: list[bool] = []

        def change(rules: list[str]) -> None:
            kept = [r for r in rules if not (isinstance(r, str) and r.strip() in wanted)]
            removed.append(len(kept) != len(rules))
            rules[:] = kept

        self._edit(scope, kind, change)
        return any(removed)

    def approve_shared(self) -> list[str]:
        """Let the shared project file's allow rules count (as they are now); returns them."""
        shared, _ = self._read_shared([])
        allow = [str(r) for r in shared.get("allow") or []] if isinstance(shared.get("allow"), list) else []

        def change(data: dict[str, Any]) -> None:
            approved = data.setdefault("approvedShared", {})
            approved[str(self.shared_path)] = _fingerprint(allow)

        self._edit_project(change)
        return allow

    def _edit(self, scope: Scope, kind: RuleKind, change: Callable[[list[str]], None]) -> None:
        if scope == "session":
            change(self.session_rules[kind])
            return
        if scope == "project":
            self._edit_project(lambda data: change(_rule_list(data, kind)))
            return
        if scope not in ("user", "global"):
            raise RuleError(f"{scope!r} is not a place rules are saved; use project, user, global or session")

        def in_settings(data: dict[str, Any]) -> None:
            block = data.get("permissions")
            if not isinstance(block, dict):
                block = data["permissions"] = {}
            change(_rule_list(block, kind))

        self.settings.modify(in_settings, "agent" if scope == "user" else "global")

    def _edit_project(self, change: Callable[[dict[str, Any]], None]) -> None:
        path = self.project_path
        with locked(path):
            errors: list[str] = []
            data = read_json_file(path, errors, validate=False)
            if errors:
                raise RuleError(f"{errors[0]} Fix or remove the file first; it was left as it is.")
            data.setdefault("project", self.root)
            change(data)
            write_json_atomic(path, data, mode=0o600)


def _rule_list(block: dict[str, Any], kind: str) -> list[str]:
    rules = block.get(kind)
    if not isinstance(rules, list):
        rules = block[kind] = []
    return rules


def _fingerprint(rules: list[Any]) -> str:
    return hashlib.sha256(json.dumps(sorted(str(r) for r in rules)).encode("utf-8")).hexdigest()


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False
