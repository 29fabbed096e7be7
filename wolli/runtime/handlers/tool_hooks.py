"""One adapter from the agent loop's hook points to the handler channel.

The agent knows four hooks (``before_tool_call``, ``after_tool_call``, ``transform_context``,
``on_payload``); this adapter answers all of them from the session's dispatcher, reading the
current handler set at every call, so ``/reload`` swaps handlers without rewiring the agent.
When nobody listens it returns at once: in particular the ``context`` seam deep-copies the
transcript (a copy of 4,000 messages costs ~0.2 s) only when a handler will receive it.

Before a tool runs, three participants decide in turn with the same algebra (run, block
with a reason, rewrite the input, abort the turn): the permission gate's deny rules and
plan mode, then the ``tool_call`` handlers, then the gate's whole policy on the arguments as
they will run (asking the user when it says so). Deny wins. A call that will run then gets
its file checkpoint (:mod:`.safety.checkpointing`), and after it ran the checkpoint notes
what changed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...agent.tool import ToolResult, normalize_result
from ...agent.tool_execution import (
    AfterToolCallContext,
    AfterToolCallResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
)
from ...ai.abort import AbortSignal
from .channel import Dispatcher
from .hook_events import BeforeProviderRequestEvent, ContextEvent, ToolCallEvent, ToolResultEvent

if TYPE_CHECKING:
    from ...ai.types import Model


class ToolHooks:
    def __init__(self, dispatch: Dispatcher, context: Callable[[], Any], permissions: Any = None,
                 checkpoints: Any = None) -> None:
        self.dispatch = dispatch
        self.context = context  # builds the handlers' ctx when one is needed
        self.permissions = permissions  # safety.permissions.SessionPermissions (None: every call runs)
        self.checkpoints = checkpoints  # safety.checkpointing.TurnCheckpoints

    async def before_tool_call(self, call: BeforeToolCallContext, signal: AbortSignal | None) -> BeforeToolCallResult | None:
        name = call.tool_call.name
        gate = self.permissions.gate if self.permissions is not None else None
        if gate is not None:
            refused = gate.precheck(name, call.tool, call.input)
            if refused is not None:
                return refused
        vouched = False
        if self.dispatch.has("tool_call"):
            event = ToolCallEvent(name, call.tool_call.id, call.input)
            decision = await self.dispatch.tool_call(event, self.context())
            if decision is not None and (decision.block or decision.abort or decision.result is not None):
                supplied: ToolResult | None = None
                if decision.result is not None:
                    supplied = normalize_result(decision.result)
                return BeforeToolCallResult(block=decision.block, reason=decision.reason, result=supplied,
                                            abort=decision.abort)
            vouched = decision is not None and decision.allow
        if gate is not None:
            refused = await gate.decide(call.tool_call.id, name, call.tool, call.input, vouched=vouched, signal=signal)
            if refused is not None:
                return refused
        if self.checkpoints is not None:
            await self.checkpoints.before(call.tool_call.id, name, call.input)
        return None

    async def after_tool_call(self, done: AfterToolCallContext, signal: AbortSignal | None) -> AfterToolCallResult | None:
        if self.checkpoints is not None:
            await self.checkpoints.after(done.tool_call.id, done.tool_call.name, done.input)
        if not self.dispatch.has("tool_result"):
            return None
        result = done.result
        event = ToolResultEvent(
            tool_name=done.tool_call.name,
            tool_call_id=done.tool_call.id,
            input=done.input,
            content=list(result.content),
            details=result.details,
            is_error=done.is_error,
        )
        if not await self.dispatch.tool_result(event, self.context()):
            return None
        content = normalize_result({"content": event.content}).content
        return AfterToolCallResult(content=content, details=event.details, is_error=bool(event.is_error), has_details=True)

    async def transform_context(self, messages: list[Any], signal: AbortSignal | None) -> list[Any]:
        if not self.dispatch.has("context"):
            return messages
        return await self.dispatch.context(ContextEvent(copy.deepcopy(messages)), self.context())

    async def on_payload(self, payload: object, model: Model) -> object:
        if not self.dispatch.has("before_provider_request"):
            return None
        return await self.dispatch.before_provider_request(BeforeProviderRequestEvent(payload, model), self.context())
