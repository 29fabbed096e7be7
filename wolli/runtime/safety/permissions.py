"""Permissions at run time: the host's rules and starting mode, each session's current mode.

:class:`HostPermissions` belongs to the host: it knows the command line's rules and mode,
reads the rule sources through a :class:`~wolli.permissions.store.PermissionStore` per
project (cached until a settings file or a rules file changes, so a check costs microseconds),
and saves what the user answers. :class:`SessionPermissions` belongs to one session: its
mode (changed by the user's key, ``/permissions``, RPC, or an extension), the plan-mode
section of its system prompt, and the :class:`~.gate.PermissionGate` its tool calls pass.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...permissions.modes import ModeError, PermissionMode, parse_mode
from ..events import NoticeEvent, PermissionModeChangeEvent

if TYPE_CHECKING:  # imported on first use: a session that runs no tool never loads them
    from ...extensions.host import ExtensionHost
    from ...permissions.policy import Context, Decision, RuleSet
    from ...permissions.store import LoadedRules, PermissionStore, Scope
    from .gate import PermissionGate
    from .guarded import GuardedSession
    from .handle import PermissionsHandle

# Front ends where someone can answer a question (the others start in ``yolo``).
INTERACTIVE_MODES = frozenset({"tui", "plain", "acp"})

PLAN_MODE_PROMPT = (
    "The session is in plan mode. Explore and think: read files, search, and ask questions, then "
    "write a concrete, step-by-step plan for the user's request (the files to change and how, the "
    "commands to run, the risks). Do not edit or write files and do not run shell commands: such "
    "tool calls are refused while planning. Only the user leaves plan mode, when they want the "
    "plan carried out; do not ask them to switch, just end your answer with the plan."
)


PLAN_MODE_LEFT = ("The user left plan mode; the permission mode is now {mode}. Carry out the plan as agreed: "
                  "edits, writes and commands are possible again (the user may still be asked to approve them).")


@dataclass
class StartingMode:
    mode: PermissionMode
    # Chosen by nobody (the front end's default): an RPC client that opts in to permission
    # requests may move it to ``default``.
    implicit: bool


class HostPermissions:
    """Rules and the starting mode for every session of one host."""

    def __init__(self, host: ExtensionHost) -> None:
        self.host = host
        self.cli_allow: list[str] = []
        self.cli_deny: list[str] = []
        self.cli_mode: PermissionMode | None = None
        self._stores: dict[str, PermissionStore] = {}
        self._cache: dict[str, tuple[tuple[Any, ...], LoadedRules]] = {}
        self._contexts: dict[tuple[Any, ...], tuple[LoadedRules, Context]] = {}
        self._settings_version = 0
        self._reported: set[str] = set()
        # The mode a new session starts in; follows the user's changes on the active session.
        self.sticky: PermissionMode | None = None
        host.settings.subscribe(self._settings_changed)

    def configure(self, *, mode: str | None = None, allow: list[str] | None = None,
                  deny: list[str] | None = None) -> None:
        """The command line's part: ``--permission-mode``, ``--allowed-tools``, ``--disallowed-tools``."""
        self.cli_mode = parse_mode(mode) if mode else None
        self.cli_allow, self.cli_deny = list(allow or []), list(deny or [])
        self._stores.clear()
        self._cache.clear()

    def _settings_changed(self, _merged: object) -> None:
        self._settings_version += 1

    # ------------------------------------------------------------------ rules

    def store(self, cwd: str) -> PermissionStore:
        key = os.path.abspath(cwd)
        found = self._stores.get(key)
        if found is None:
            from ...permissions.store import PermissionStore

            found = self._stores[key] = PermissionStore(self.host.settings, self.host.home, key,
                                                        cli_allow=self.cli_allow, cli_deny=self.cli_deny)
        return found

    def loaded(self, cwd: str) -> LoadedRules:
        """Every rule for ``cwd``'s project, re-read only when one of its sources changed."""
        store = self.store(cwd)
        stamp = (self._settings_version, _mtime(store.watched[0]), _mtime(store.watched[1]),
                 sum(len(v) for v in store.session_rules.values()))
        cached = self._cache.get(store.cwd)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        loaded = store.load()
        self._cache[store.cwd] = (stamp, loaded)
        return loaded

    def handle(self, session: object = None) -> PermissionsHandle:
        """What extensions hold (``wolli.permissions``; ``ctx.permissions`` binds a session)."""
        from .handle import PermissionsHandle

        return PermissionsHandle(self, session)

    def forget(self) -> None:
        """Read every source again at the next check (after a write or a reload)."""
        self._cache.clear()

    def has_rules(self, cwd: str) -> bool:
        """Whether any source holds rules (without loading the matchers: start-up asks)."""
        from ...permissions.project import find_project_root, personal_rules_path, shared_rules_path

        store = self._stores.get(os.path.abspath(cwd))
        if self.cli_allow or self.cli_deny or (store is not None and any(store.session_rules.values())):
            return True
        for target in ("agent", "global"):
            block = self.host.settings.file_values(target).get("permissions")
            if isinstance(block, dict) and any(block.get(k) for k in ("allow", "ask", "deny")):
                return True
        root = find_project_root(cwd)
        return personal_rules_path(self.host.home, root).is_file() or shared_rules_path(root).is_file()

    def problems(self, cwd: str) -> list[str]:
        """Problems not yet reported (start-up warnings, a notice after an edit)."""
        if not self.has_rules(cwd) and self.host.settings.get("permissions.defaultMode") is None:
            return []
        fresh = [p for p in self.loaded(cwd).problems if p not in self._reported]
        self._reported.update(fresh)
        return fresh

    def add_rule(self, cwd: str, kind: str, text: str, scope: Scope = "project") -> str:
        rule = self.store(cwd).add(kind, text, scope)  # type: ignore[arg-type]
        self.forget()
        return rule

    def remove_rule(self, cwd: str, kind: str, text: str, scope: Scope) -> bool:
        removed = self.store(cwd).remove(kind, text, scope)  # type: ignore[arg-type]
        self.forget()
        return removed

    # ------------------------------------------------------------------ modes

    def starting_mode(self) -> StartingMode:
        if self.sticky is not None:
            return StartingMode(self.sticky, False)
        if self.cli_mode is not None:
            return StartingMode(self.cli_mode, False)
        configured = self.host.settings.get("permissions.defaultMode")
        if configured is not None:
            try:
                return StartingMode(parse_mode(configured), False)
            except ModeError:
                pass  # reported with the other rule problems (store.load)
        mode: PermissionMode = "default" if self.host.mode in INTERACTIVE_MODES else "yolo"
        return StartingMode(mode, True)

    def check_inputs(self, cwd: str, mode: PermissionMode) -> tuple[RuleSet, Context]:
        """The rules and the context of one check, read once (the figures in
        tests/perf/bench_permissions.py: this runs for every tool call)."""
        loaded = self.loaded(cwd)
        sandbox = getattr(self.host, "sandbox", None)
        policy = sandbox.bash_policy(self._settings_version) if sandbox is not None else (False, None)
        key = (cwd, mode, id(loaded), policy)
        cached = self._contexts.get(key)
        if cached is None or cached[0] is not loaded:
            from ...permissions.policy import Context

            context = Context(mode, self.store(cwd).where, loaded.additional_dirs, policy[0], policy[1])
            if len(self._contexts) > 64:
                self._contexts.clear()
            cached = self._contexts[key] = (loaded, context)
        return loaded.rules, cached[1]

    def context(self, cwd: str, mode: PermissionMode) -> Context:
        return self.check_inputs(cwd, mode)[1]


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


class SessionPermissions:
    """One session's mode and the checks of its tool calls."""

    # ``session`` is the LiveSession (not imported: it imports this module).
    def __init__(self, session: GuardedSession, host_permissions: HostPermissions, mode: PermissionMode | None = None) -> None:
        self.session = session
        self.host = host_permissions
        start = host_permissions.starting_mode()
        self.mode: PermissionMode = mode or start.mode
        self.implicit = mode is None and start.implicit
        # The mode plan mode was entered from (``/plan`` goes back to it).
        self.before_plan: PermissionMode | None = None
        self._gate: PermissionGate | None = None

    @property
    def gate(self) -> PermissionGate:
        """The gate this session's tool calls pass (made at the first call)."""
        if self._gate is None:
            from .gate import PermissionGate

            self._gate = PermissionGate(self)
        return self._gate

    @property
    def rules(self) -> RuleSet:
        return self.host.loaded(self.session.cwd).rules

    def context(self) -> Context:
        return self.host.context(self.session.cwd, self.mode)

    def check_inputs(self) -> tuple[RuleSet, Context]:
        return self.host.check_inputs(self.session.cwd, self.mode)

    def check(self, name: str, arguments: dict[str, Any], *, read_only: bool = False, vouched: bool = False) -> Decision:
        """What the policy says about a call, without asking anyone."""
        from ...permissions.policy import ToolFacts, evaluate

        rules, context = self.check_inputs()
        return evaluate(ToolFacts(name, read_only), arguments, rules, context, vouched=vouched)

    async def set_mode(self, mode: str, source: str = "user") -> PermissionMode:
        """Change the mode; ``permission_mode_change`` tells handlers and front ends."""
        new = parse_mode(mode)
        previous = self.mode
        self.implicit = False
        if new == previous:
            return new
        self.mode = new
        if new == "plan":
            self.before_plan = previous
        if self.session.services.active is self.session:
            self.host.sticky = new
        self.session.refresh_system_prompt()  # the plan-mode prompt section comes or goes
        if previous == "plan":
            # The conversation so far says "planning"; the next request says it is over.
            await self.session.send_message({"custom_type": "permission_mode", "display": False,
                                             "content": PLAN_MODE_LEFT.format(mode=new)}, deliver_as="next_turn")
        await self.session.emit(PermissionModeChangeEvent(new, previous, source))
        return new

    def prompt_sections(self) -> list[tuple[str, str, int]]:
        """(title, text, order) sections this mode adds to the system prompt."""
        if self.mode == "plan":
            return [("Plan mode", PLAN_MODE_PROMPT, -100)]
        return []

    def report_problems(self) -> None:
        for problem in self.host.problems(self.session.cwd):
            self.session._deliver(NoticeEvent("warning", problem))
