"""The permission gate every tool call passes, built into the ``tool_call`` seam.

It speaks the decision algebra ``tool_call`` handlers speak (run, ``block`` with a reason,
``abort`` the turn) and takes part twice around them (:mod:`..tool_hooks`):

- :meth:`PermissionGate.precheck`, before any handler: deny rules and plan mode refuse the
  call at once, so no extension is asked about a call that cannot run;
- :meth:`PermissionGate.decide`, after the handlers: the arguments as they will run (a
  handler may have rewritten them: deny rules are checked again) meet the whole policy; an
  ``ask`` becomes the permission question to the user, through ``ui.ask_permission``.

Deny wins over any allow: no handler result, rule or answer lets a denied call run. Where
nobody can answer (print, json, RPC without opting in) an ``ask`` refuses the call and tells
the model how the user could allow it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

from ...agent.tool_execution import BeforeToolCallResult
from ...ai.abort import AbortSignal
from ...permissions.modes import PermissionMode
from ...permissions.policy import Context, Decision, RuleSet, ToolFacts, evaluate
from ...permissions.prompt import (
    REJECT_WITH_MESSAGE,
    PermissionAnswer,
    PermissionRequest,
    describe_call,
    standard_options,
)
from ...permissions.rules import RuleError
from ...permissions.suggest import suggest_rules
from ..events import NoticeEvent

if TYPE_CHECKING:
    from ...agent.tool import ToolDefinition
    from .guarded import GuardedSession


class GateOwner(Protocol):
    """What the gate needs of its session's permissions (``permissions.SessionPermissions``)."""

    session: GuardedSession
    host: Any  # permissions.HostPermissions
    mode: PermissionMode

    def check_inputs(self) -> tuple[RuleSet, Context]: ...

DENIED = ("The user denied this tool call and stopped the turn. Nothing was changed by it. Wait for "
          "the user to say how to go on.")


class PermissionGate:
    def __init__(self, owner: GateOwner) -> None:
        self.owner = owner
        # One question at a time per session (parallel tool calls are preflighted one by one
        # anyway; this also covers a hook or a subagent asking meanwhile).
        self._asking = asyncio.Lock()

    def _facts(self, name: str, tool: ToolDefinition) -> ToolFacts:
        return ToolFacts(name, bool(getattr(tool, "read_only", False)))

    def precheck(self, name: str, tool: ToolDefinition, arguments: dict[str, Any]) -> BeforeToolCallResult | None:
        """Deny rules and plan mode, before any handler sees the call."""
        rules, context = self.owner.check_inputs()
        decision = evaluate(self._facts(name, tool), arguments, rules, context)
        if decision.outcome == "deny":
            return BeforeToolCallResult(block=True, reason=decision.reason)
        return None

    async def decide(
        self, tool_call_id: str, name: str, tool: ToolDefinition, arguments: dict[str, Any], *, vouched: bool = False,
        signal: AbortSignal | None = None,
    ) -> BeforeToolCallResult | None:
        """The whole policy on the final arguments; asks the user when it says ``ask``."""
        decision = self._evaluate(name, tool, arguments, vouched)
        if decision.outcome == "allow":
            return None
        if decision.outcome == "deny":
            return BeforeToolCallResult(block=True, reason=decision.reason)
        session = self.owner.session
        # A server gives each session its own ``ctx.ui`` (its clients); otherwise the front end's.
        per_session = getattr(session.services, "session_ui", None)
        ui = per_session(session) if per_session is not None else session.services.ui
        suggested = tuple(suggest_rules(name, arguments, self.owner.host.store(session.cwd).where))
        if not getattr(ui, "has_ui", False) or not getattr(ui, "can_ask_permission", True):
            return BeforeToolCallResult(block=True, reason=_nobody_to_ask(name, decision, suggested, session))
        async with self._asking:
            decision = self._evaluate(name, tool, arguments, vouched)  # an answer meanwhile may have saved a rule
            if decision.outcome != "ask":
                return None if decision.outcome == "allow" else BeforeToolCallResult(block=True, reason=decision.reason)
            request = PermissionRequest(describe_call(tool_call_id, name, arguments, session.cwd), decision.reason,
                                        suggested, standard_options(suggested), self.owner.mode)
            try:
                answer = await ui.ask_permission(request, signal=signal)
            except Exception as exc:  # a front end's failure must not run the call
                session._deliver(NoticeEvent("error", f"the permission question failed: {exc}"))
                answer = PermissionAnswer.cancelled()
        return self._apply(request, answer or PermissionAnswer.cancelled())

    def _evaluate(self, name: str, tool: ToolDefinition, arguments: dict[str, Any], vouched: bool) -> Decision:
        rules, context = self.owner.check_inputs()
        return evaluate(self._facts(name, tool), arguments, rules, context, vouched=vouched)

    def _apply(self, request: PermissionRequest, answer: PermissionAnswer) -> BeforeToolCallResult | None:
        if answer.kind in ("allow_always", "reject_always"):
            self._save(answer)
        if answer.allowed:
            return None
        if answer.option_id == REJECT_WITH_MESSAGE and answer.message:
            return BeforeToolCallResult(block=True, reason=f"The user denied this tool call and said: {answer.message}")
        if answer.kind == "reject_always":
            return BeforeToolCallResult(block=True, reason="The user denied this tool call and calls like it from now on.")
        if answer.option_id == REJECT_WITH_MESSAGE:
            return BeforeToolCallResult(block=True, reason="The user denied this tool call.")
        return BeforeToolCallResult(block=True, reason=DENIED, abort=True)

    def _save(self, answer: PermissionAnswer) -> None:
        """Keep the rules of an "always" answer in this project's rules (``/permissions``)."""
        session = self.owner.session
        kind = "allow" if answer.kind == "allow_always" else "deny"
        for text in answer.rules:
            try:
                rule = self.owner.host.add_rule(session.cwd, kind, text, "project")
            except (RuleError, OSError, ValueError) as exc:
                session._deliver(NoticeEvent("warning", f"the rule {text!r} was not saved: {exc}"))
                continue
            session._deliver(NoticeEvent("info", f"saved {kind} rule {rule} for this project (/permissions)"))


def _nobody_to_ask(name: str, decision: Decision, suggested: tuple[str, ...], session: GuardedSession) -> str:
    refusal = getattr(session.services.ui, "cannot_ask_reason", None)  # a subagent that may not ask
    if isinstance(refusal, str):
        return f"{refusal} ({decision.reason})"
    mode = session.services.mode
    rules = " ".join(f"'{r}'" for r in suggested) or f"'{name}'"
    return (f"Not run: this call needs the user's approval ({decision.reason}), and nobody can answer in "
            f"{mode} mode. The user can allow it with --allowed-tools {rules}, a permissions.allow rule in "
            "settings.json, or --permission-mode; do not retry the same call.")
