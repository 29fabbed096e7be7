"""The agent loop: prompt -> (LLM turn -> tools)* -> idle, with steering and follow-ups.

One run (``prompt`` or ``continue_``) emits ``agent_start``, then turns while the model
calls tools, then ``agent_end``. Listeners are awaited in order, so a listener that persists
``message_end`` has finished before the loop moves on (extensions rely on the session being
up to date when ``tool_call`` fires).

Queues: ``steer()`` messages are delivered after the current tool batch, before the next LLM
call; ``follow_up()`` messages when the agent would otherwise stop. Each queue hands over
one message per turn ("one-at-a-time") or everything queued ("all").
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from ..ai.abort import AbortController, AbortSignal
from ..ai.event_stream import AssistantMessageEventStream
from ..ai.stream import stream as ai_stream
from ..ai.types import (
    AssistantMessage,
    Context,
    DoneEvent,
    ErrorEvent,
    ImageContent,
    Message,
    Model,
    StreamOptions,
    ThinkingLevel,
    ToolResultMessage,
)
from ..base.records import record
from .events import (
    AgentEndEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)
from .messages import convert_to_llm, user_message
from .tool import ToolDefinition
from .tool_execution import AfterToolCall, BeforeToolCall, TurnAborted, execute_tool_calls

if TYPE_CHECKING:
    from .messages import AgentMessage

M = TypeVar("M", bound="AgentMessage")

QueueMode = Literal["one-at-a-time", "all"]
Listener = Callable[[Any], "Awaitable[None] | None"]
StreamFn = Callable[[Model, Context, StreamOptions], AssistantMessageEventStream]


@record
class AgentState:
    system_prompt: str = ""
    model: Model | None = None
    thinking_level: ThinkingLevel = "off"
    tools: list[ToolDefinition] = field(default_factory=list)
    messages: list[Any] = field(default_factory=list)
    is_streaming: bool = False
    stream_message: AssistantMessage | None = None
    pending_tool_calls: set[str] = field(default_factory=set)
    error: str | None = None


class AgentBusyError(RuntimeError):
    pass


class Agent:
    def __init__(
        self,
        *,
        model: Model | None = None,
        system_prompt: str = "",
        thinking_level: ThinkingLevel = "off",
        tools: list[ToolDefinition] | None = None,
        messages: list[Any] | None = None,
        convert_to_llm: Callable[[list[Any]], list[Message]] = convert_to_llm,
        transform_context: Callable[[list[Any], AbortSignal], Awaitable[list[Any]]] | None = None,
        before_tool_call: BeforeToolCall | None = None,
        after_tool_call: AfterToolCall | None = None,
        get_api_key: Callable[[str], str | None | Awaitable[str | None]] | None = None,
        on_payload: Callable[..., Any] | None = None,
        stream_fn: StreamFn | None = None,
        tool_execution: Literal["parallel", "sequential"] = "parallel",
        steering_mode: QueueMode = "one-at-a-time",
        follow_up_mode: QueueMode = "one-at-a-time",
        session_id: str | None = None,
        stream_options: dict[str, Any] | None = None,
        tool_context: object = None,
    ) -> None:
        self.state = AgentState(
            system_prompt=system_prompt,
            model=model,
            thinking_level=thinking_level,
            tools=list(tools or []),
            messages=list(messages or []),
        )
        self.convert_to_llm = convert_to_llm
        self.transform_context = transform_context
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.get_api_key = get_api_key
        self.on_payload = on_payload
        self.stream_fn: StreamFn = stream_fn or ai_stream
        self.tool_execution = tool_execution
        self.steering_mode: QueueMode = steering_mode
        self.follow_up_mode: QueueMode = follow_up_mode
        self.session_id = session_id
        self.stream_options = dict(stream_options or {})
        self.tool_context = tool_context
        self._listeners: list[Listener] = []
        self._steering: list[Any] = []
        self._follow_ups: list[Any] = []
        self._controller: AbortController | None = None
        self._idle = asyncio.Event()
        self._idle.set()
        self._turn_started = False

    # ------------------------------------------------------------------ state

    @property
    def is_streaming(self) -> bool:
        return self.state.is_streaming

    @property
    def signal(self) -> AbortSignal | None:
        return self._controller.signal if self._controller else None

    def set_model(self, model: Model) -> None:
        self.state.model = model

    def set_thinking_level(self, level: ThinkingLevel) -> None:
        self.state.thinking_level = level

    def set_system_prompt(self, prompt: str) -> None:
        self.state.system_prompt = prompt

    def set_tools(self, tools: list[ToolDefinition]) -> None:
        self.state.tools = list(tools)

    def replace_messages(self, messages: list[Any]) -> None:
        self.state.messages = list(messages)

    def append_message(self, message: AgentMessage) -> None:
        self.state.messages.append(message)

    # ------------------------------------------------------------------ events

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    async def _emit(self, event: object) -> None:
        for listener in list(self._listeners):
            result = listener(event)
            if inspect.isawaitable(result):
                await result

    async def _emit_tool_event(
        self, event: ToolExecutionStartEvent | ToolExecutionUpdateEvent | ToolExecutionEndEvent
    ) -> None:
        # ``pending_tool_calls`` shrinks as each call ends, so a UI can show what still runs.
        if event.type == "tool_execution_end":
            self.state.pending_tool_calls.discard(event.tool_call_id)
        await self._emit(event)

    # ------------------------------------------------------------------ queues

    def steer(self, message: AgentMessage | str | dict[str, Any]) -> None:
        """Deliver ``message`` after the current tool batch, before the next LLM call."""
        self._steering.append(_as_message(message))

    def follow_up(self, message: AgentMessage | str | dict[str, Any]) -> None:
        """Deliver ``message`` once the agent would otherwise stop."""
        self._follow_ups.append(_as_message(message))

    def clear_queues(self) -> tuple[list[Any], list[Any]]:
        steering, follow_ups = self._steering, self._follow_ups
        self._steering, self._follow_ups = [], []
        return steering, follow_ups

    def queued_messages(self) -> tuple[list[Any], list[Any]]:
        """Copies of the (steering, follow-up) queues, oldest first."""
        return list(self._steering), list(self._follow_ups)

    @property
    def pending_message_count(self) -> int:
        return len(self._steering) + len(self._follow_ups)

    def _take(self, queue: list[Any], mode: QueueMode) -> list[Any]:
        if not queue:
            return []
        if mode == "all":
            taken = list(queue)
            queue.clear()
            return taken
        return [queue.pop(0)]

    # ------------------------------------------------------------------ control

    def abort(self, reason: str | None = None) -> None:
        if self._controller is not None:
            self._controller.abort(reason or "Aborted by user")

    async def wait_for_idle(self) -> None:
        await self._idle.wait()

    async def prompt(self, message: object, images: list[ImageContent] | None = None) -> None:
        """Run the agent on a new user message (a string, a message, or a list of messages)."""
        if self.state.is_streaming:
            raise AgentBusyError("The agent is already running; use steer() or follow_up() to queue a message.")
        if isinstance(message, list):
            messages = [_as_message(m) for m in message]
        elif isinstance(message, str):
            messages = [user_message(message, images)]
        else:
            messages = [_as_message(message)]
        await self._run(messages)

    async def continue_(self) -> None:
        """Continue from the current transcript (after a tool result, a retry, a queue)."""
        if self.state.is_streaming:
            raise AgentBusyError("The agent is already running.")
        last = self.state.messages[-1] if self.state.messages else None
        if last is None:
            raise ValueError("Nothing to continue: the conversation is empty.")
        if getattr(last, "role", None) == "assistant":
            queued = self._take(self._steering, self.steering_mode) or self._take(
                self._follow_ups, self.follow_up_mode
            )
            if not queued:
                raise ValueError("Cannot continue from an assistant message; send a new prompt.")
            await self._run(queued)
            return
        await self._run([])

    # ------------------------------------------------------------------ the loop

    async def _run(self, prompts: list[Any]) -> None:
        if self.state.model is None:
            raise ValueError("No model selected.")
        self._controller = AbortController()
        self.state.is_streaming = True
        self.state.error = None
        self._idle.clear()
        new_messages: list[Any] = []
        try:
            await self._emit(AgentStartEvent())
            await self._loop(prompts, new_messages)
        finally:
            self.state.is_streaming = False
            self.state.stream_message = None
            self.state.pending_tool_calls.clear()
            self._controller = None
            try:
                await self._emit(AgentEndEvent(messages=new_messages))
            finally:
                self._idle.set()

    async def _push(self, message: AgentMessage, new_messages: list[Any]) -> object:
        await self._emit(MessageStartEvent(message))
        self.state.messages.append(message)
        new_messages.append(message)
        return await self._end_message(message, new_messages)

    async def _end_message(self, message: M, new_messages: list[Any]) -> M:
        """Emit message_end; a listener may swap ``event.message`` for one of the same role."""
        event = MessageEndEvent(message)
        await self._emit(event)
        replacement = event.message
        if replacement is not message and getattr(replacement, "role", None) == getattr(message, "role", None):
            # By identity: two equal messages (same text, same millisecond) are still distinct.
            _replace_identical(self.state.messages, message, replacement)
            _replace_identical(new_messages, message, replacement)
            return cast(M, replacement)  # the same role is the same message class
        return message

    async def _loop(self, prompts: list[Any], new_messages: list[Any]) -> None:
        assert self._controller is not None
        signal = self._controller.signal
        turn_index = 0
        pending = list(prompts)
        while True:
            more_tools = True
            while more_tools or pending:
                await self._emit(TurnStartEvent(turn_index))
                for message in pending:
                    await self._push(message, new_messages)
                pending = []
                assistant = await self._stream_turn(signal)
                self.state.messages.append(assistant)
                new_messages.append(assistant)
                assistant = await self._end_message(assistant, new_messages)
                if assistant.stop_reason in ("error", "aborted"):
                    self.state.error = assistant.error_message
                    await self._emit(TurnEndEvent(turn_index, assistant, []))
                    return
                results: list[ToolResultMessage] = []
                terminate = False
                aborted_turn = False
                if assistant.tool_calls():
                    self.state.pending_tool_calls = {c.id for c in assistant.tool_calls()}
                    try:
                        results, terminate = await execute_tool_calls(
                            assistant=assistant,
                            tools=self.state.tools,
                            signal=signal,
                            emit=self._emit_tool_event,
                            before_tool_call=self.before_tool_call,
                            after_tool_call=self.after_tool_call,
                            sequential=self.tool_execution == "sequential",
                            tool_context=self.tool_context,
                            on_result=lambda result: self._push(result, new_messages),
                        )
                    except TurnAborted as exc:
                        aborted_turn = True
                        reason, results = exc.args
                        self.state.error = reason
                    self.state.pending_tool_calls.clear()
                await self._emit(TurnEndEvent(turn_index, assistant, results))
                turn_index += 1
                if signal.aborted or aborted_turn or terminate:
                    return
                more_tools = bool(assistant.tool_calls())
                pending = self._take(self._steering, self.steering_mode)
            follow_ups = self._take(self._follow_ups, self.follow_up_mode)
            if not follow_ups:
                return
            pending = follow_ups

    async def _stream_turn(self, signal: AbortSignal) -> AssistantMessage:
        """One LLM call: build the context, stream, emit message_start/update (not end).

        Never raises: a failing hook, key lookup or stream becomes an error message, so the
        turn ends cleanly and the transcript shows why.
        """
        model = self.state.model
        assert model is not None
        self._turn_started = False
        try:
            return await self._stream_turn_inner(model, signal)
        except Exception as exc:
            failed = AssistantMessage(
                api=model.api, provider=model.provider, model=model.id, stop_reason="error",
                error_message=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__,
            )
            if not self._turn_started:
                await self._emit(MessageStartEvent(failed))
            self.state.stream_message = None
            return failed

    async def _stream_turn_inner(self, model: Model, signal: AbortSignal) -> AssistantMessage:
        messages = list(self.state.messages)
        if self.transform_context is not None:
            # The hook gets the live list: it copies only when it hands the messages on to
            # code that may change them (a deep copy of a long transcript costs ~0.2 s).
            messages = await self.transform_context(messages, signal)
        llm_messages = self.convert_to_llm(messages)
        context = Context(
            system_prompt=self.state.system_prompt or None,
            messages=llm_messages,
            tools=[tool.as_llm_tool() for tool in self.state.tools] or None,
        )
        api_key: str | None = None
        if self.get_api_key is not None:
            found = self.get_api_key(model.provider)
            api_key = await found if inspect.isawaitable(found) else found
        options = StreamOptions(
            api_key=api_key,
            reasoning=self.state.thinking_level if self.state.thinking_level != "off" else None,
            signal=signal,
            session_id=self.session_id,
            on_payload=self.on_payload,
            **self.stream_options,
        )
        events = self.stream_fn(model, context, options)
        started = False
        try:
            async for event in events:
                if isinstance(event, DoneEvent | ErrorEvent):
                    if not started:
                        started = self._turn_started = True
                        await self._emit(MessageStartEvent(event.message if isinstance(event, DoneEvent) else event.error))
                    break
                if not started:
                    started = self._turn_started = True
                    self.state.stream_message = event.partial
                    await self._emit(MessageStartEvent(event.partial))
                self.state.stream_message = event.partial
                await self._emit(MessageUpdateEvent(event.partial, event))
            message = await events.result()
        finally:
            # Leaving early (a listener raised, the task was cancelled) must end the request,
            # not leave it streaming into a queue nobody reads.
            await events.aclose()
        if not started:
            self._turn_started = True
            await self._emit(MessageStartEvent(message))
        self.state.stream_message = None
        return message


def _replace_identical(items: list[Any], old: object, new: object) -> None:
    for index in range(len(items) - 1, -1, -1):
        if items[index] is old:
            items[index] = new
            return


def _as_message(value: object) -> object:
    if isinstance(value, str):
        return user_message(value)
    if isinstance(value, dict):
        from .messages import parse_agent_message

        return parse_agent_message(value)
    return value


__all__ = ["Agent", "AgentBusyError", "AgentState", "QueueMode"]
