"""Running the tool calls of one assistant message.

Preflight runs one call at a time in source order: find the tool, prepare and validate the
arguments, ask the before-call interceptor (block, patch the input in place, supply a result,
or abort the turn). Then the surviving calls execute concurrently (or one by one in
sequential mode). ``tool_execution_end`` is emitted as each call finishes; the caller emits
the tool-result messages in source order afterwards.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ..ai.abort import AbortSignal
from ..ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage
from ..tools.base import ToolArgumentError, ToolDefinition, ToolResult, normalize_result
from .events import ToolExecutionEndEvent, ToolExecutionStartEvent, ToolExecutionUpdateEvent


@dataclass
class BeforeToolCallContext:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    tool: ToolDefinition
    # The arguments as a dict; mutate in place to patch the input (re-validated if changed).
    input: dict[str, Any]


@dataclass
class BeforeToolCallResult:
    block: bool = False
    reason: str | None = None
    result: ToolResult | None = None  # supplied without running the tool
    abort: bool = False  # stop the whole turn


@dataclass
class AfterToolCallContext:
    assistant_message: AssistantMessage
    tool_call: ToolCall
    input: dict[str, Any]
    result: ToolResult
    is_error: bool


@dataclass
class AfterToolCallResult:
    content: list[Any] | None = None
    details: Any = None
    is_error: bool | None = None
    has_details: bool = False  # distinguishes "details=None" from "leave details alone"


BeforeToolCall = Callable[[BeforeToolCallContext, AbortSignal], Awaitable[BeforeToolCallResult | None]]
AfterToolCall = Callable[[AfterToolCallContext, AbortSignal], Awaitable[AfterToolCallResult | None]]
Emit = Callable[[Any], Awaitable[None]]


@dataclass
class _Planned:
    call: ToolCall
    tool: ToolDefinition | None = None
    params: Any = None
    input: dict[str, Any] = field(default_factory=dict)
    result: ToolResult | None = None  # set when preflight already decided the outcome
    is_error: bool = False
    updates: list[asyncio.Task[Any]] = field(default_factory=list)  # in-flight update events


class TurnAborted(Exception):
    """A before-call interceptor asked to abort the turn."""


def error_result(text: str) -> ToolResult:
    return ToolResult(content=[TextContent(text=text)], details=None)


def _as_input_dict(params: Any) -> dict[str, Any]:
    if isinstance(params, BaseModel):
        return params.model_dump(mode="python")
    if isinstance(params, dict):
        return params
    return {}


async def execute_tool_calls(
    *,
    assistant: AssistantMessage,
    tools: list[ToolDefinition],
    signal: AbortSignal,
    emit: Emit,
    before_tool_call: BeforeToolCall | None,
    after_tool_call: AfterToolCall | None,
    sequential: bool,
    tool_context: Any,
) -> tuple[list[ToolResultMessage], bool]:
    """Run every tool call of ``assistant``. Returns (results in source order, terminate)."""
    by_name = {t.name: t for t in tools}
    planned: list[_Planned] = []
    abort_reason: str | None = None

    for call in assistant.tool_calls():
        plan = _Planned(call=call, tool=by_name.get(call.name), input=dict(call.arguments))
        planned.append(plan)
        await emit(ToolExecutionStartEvent(call.id, call.name, call.arguments))
        if abort_reason is not None or signal.aborted:
            plan.result, plan.is_error = error_result(abort_reason or "Tool execution aborted"), True
            continue
        if plan.tool is None:
            known = ", ".join(sorted(by_name)) or "none"
            plan.result = error_result(f"Tool {call.name} not found. Available tools: {known}")
            plan.is_error = True
            continue
        try:
            plan.params = plan.tool.validate(copy.deepcopy(call.arguments))
        except ToolArgumentError as exc:
            plan.result, plan.is_error = error_result(str(exc)), True
            continue
        except Exception as exc:  # a broken prepare_arguments
            plan.result, plan.is_error = error_result(f"Could not prepare arguments: {exc}"), True
            continue
        plan.input = _as_input_dict(plan.params)
        if before_tool_call is None:
            continue
        snapshot = copy.deepcopy(plan.input)
        try:
            decision = await before_tool_call(
                BeforeToolCallContext(assistant, call, plan.tool, plan.input), signal
            )
        except Exception as exc:  # fail closed: an interceptor error blocks the call
            plan.result, plan.is_error = error_result(f"Tool call blocked: interceptor failed: {exc}"), True
            continue
        if decision is not None:
            if decision.abort:
                abort_reason = decision.reason or "Tool call aborted the turn"
                plan.result, plan.is_error = error_result(abort_reason), True
                continue
            if decision.block:
                plan.result = error_result(decision.reason or "Tool call was blocked")
                plan.is_error = True
                continue
            if decision.result is not None:
                plan.result, plan.is_error = decision.result, decision.result.is_error
                continue
        if plan.input != snapshot:
            try:
                plan.params = validate_patched(plan.tool, plan.input)
            except ToolArgumentError as exc:
                plan.result, plan.is_error = error_result(str(exc)), True

    async def finish(plan: _Planned, result: ToolResult, is_error: bool) -> None:
        if plan.updates:  # updates the tool sent are delivered before its end event
            await asyncio.gather(*plan.updates, return_exceptions=True)
        if after_tool_call is not None and plan.tool is not None:
            try:
                patch = await after_tool_call(
                    AfterToolCallContext(assistant, plan.call, plan.input, result, is_error), signal
                )
            except Exception as exc:
                patch = None
                result = ToolResult(
                    content=[*result.content, TextContent(text=f"(tool_result handler failed: {exc})")],
                    details=result.details,
                    terminate=result.terminate,
                )
            if patch is not None:
                result = ToolResult(
                    content=list(patch.content) if patch.content is not None else result.content,
                    details=patch.details if patch.has_details else result.details,
                    terminate=result.terminate,
                )
                if patch.is_error is not None:
                    is_error = patch.is_error
        plan.result, plan.is_error = result, is_error
        await emit(ToolExecutionEndEvent(plan.call.id, plan.call.name, result, is_error))

    async def run(plan: _Planned) -> None:
        if plan.result is not None:
            await finish(plan, plan.result, plan.is_error)
            return
        assert plan.tool is not None
        try:
            result = await _invoke(plan, signal, emit, tool_context)
            await finish(plan, result, False)
        except asyncio.CancelledError:
            await finish(plan, error_result("Tool execution aborted"), True)
        except Exception as exc:
            await finish(plan, error_result(str(exc) or type(exc).__name__), True)

    sequential = sequential or any(p.tool is not None and p.tool.execution == "sequential" for p in planned)
    if sequential:
        for plan in planned:
            await run(plan)
    else:
        tasks = [asyncio.ensure_future(run(plan)) for plan in planned]
        remove = signal.add_listener(lambda: _cancel_later(tasks))
        try:
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            remove()

    results = [
        ToolResultMessage(
            tool_call_id=p.call.id,
            tool_name=p.call.name,
            content=list(p.result.content) if p.result else [],
            details=p.result.details if p.result else None,
            is_error=p.is_error,
        )
        for p in planned
    ]
    terminate = bool(planned) and all(p.result is not None and p.result.terminate and not p.is_error for p in planned)
    if abort_reason is not None:
        raise TurnAborted(abort_reason, results)
    return results, terminate


def validate_patched(tool: ToolDefinition, patched: dict[str, Any]) -> Any:
    from ..tools.base import validate_arguments

    return validate_arguments(tool.parameters, patched, tool.name)


# Grace period for tools to honour the abort signal before their tasks are cancelled.
ABORT_GRACE_SECONDS = 2.0


def _cancel_later(tasks: list[asyncio.Future[Any]]) -> None:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return

    def cancel() -> None:
        for task in tasks:
            if not task.done():
                task.cancel()

    loop.call_later(ABORT_GRACE_SECONDS, cancel)


async def _invoke(plan: _Planned, signal: AbortSignal, emit: Emit, tool_context: Any) -> ToolResult:
    tool = plan.tool
    assert tool is not None
    call = plan.call
    loop = asyncio.get_running_loop()

    def on_update(partial: Any) -> None:
        event = ToolExecutionUpdateEvent(call.id, call.name, call.arguments, normalize_result(partial))
        plan.updates.append(loop.create_task(emit(event)))

    if inspect.iscoroutinefunction(tool.execute):
        value = await tool.execute(call.id, plan.params, signal, on_update, tool_context)
    else:
        # A sync tool runs in a worker thread so it cannot freeze the UI; its updates are
        # handed back to the loop.
        def threadsafe_update(partial: Any) -> None:
            loop.call_soon_threadsafe(on_update, partial)

        value = await asyncio.to_thread(tool.execute, call.id, plan.params, signal, threadsafe_update, tool_context)
        if inspect.isawaitable(value):
            value = await value
    return normalize_result(value)

