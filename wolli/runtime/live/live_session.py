"""LiveSession: one live session = agent + session file + handlers + compaction + retry.

It owns the :class:`~wolli.agent.agent.Agent`, persists what the agent produces, restores
model and thinking level on resume, and emits the session event stream on two channels:

- *handlers* (extension code, through the host's :class:`~.handlers.HandlerRegistry`):
  awaited in order, results folded, failures reported as ``extension_error`` and isolated;
- *observers* (front ends): plain synchronous callables, never awaited, errors isolated.
  An observer that returns an awaitable has it scheduled as a task, so even a slow
  asynchronous observer cannot stall streaming.

A message reaches the session file only after its ``message_end`` handlers have folded it,
so a replacement is what lands on disk. The run state (``idle | running | retrying |
compacting``) spans retries and compaction; ``prompt`` while busy queues the message.

Three parts live beside it: ``model_selection`` (model and thinking level), ``toolset``
(tools and system prompt) and ``queueing`` (steer, follow-up, extension messages).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ...agent.agent import Agent
from ...agent.events import MessageEndEvent, MessageStartEvent
from ...agent.messages import BashExecutionMessage, CustomMessage, parse_agent_message, user_message
from ...agent.tool import ToolDefinition
from ...ai.abort import AbortController, AbortSignal
from ...ai.types import AssistantMessage, ImageContent, Model, ThinkingLevel
from ...base.loop_turns import LoopTurns
from ..events import (
    ExtensionErrorEvent,
    ModelSelectEvent,
    NoticeEvent,
    RunState,
    RunStateEvent,
    SessionShutdownEvent,
    SessionStartEvent,
    ShutdownReason,
    StartReason,
)
from ..handlers import hook_events
from ..handlers.channel import Dispatcher
from ..handlers.hook_events import (
    BeforeAgentStartEvent,
    InputEvent,
    InputSource,
    StreamingBehavior,
    UserBashEvent,
)
from .compaction_run import Compactor
from .context_load import ContextLoad
from .model_selection import ModelSelection
from .options import SessionOptions
from .prompting import MAX_AGENT_END_FOLLOW_UPS, expand_input, split_command, to_custom_message
from .queueing import MessageQueue
from .recovery import Recovery, drop_failed, last_assistant
from .services import SessionServices
from .settings_view import default_thinking_level, stream_idle_timeout
from .toolset import Toolset

if TYPE_CHECKING:
    from ...extensions.host import ContextView
    from ...extensions.registry import RegisteredCommand
    from ...mcp.offers import PromptCommand
    from ...session.compaction import CompactionResult
    from ...session.manager import SessionManager
    from ..handlers.channel import NamedEvent
    from ..safety.rewind import AskConflicts, RewindResult

log = logging.getLogger("wolli.runtime")
Observer = Callable[[Any], Any]


class NoModelError(RuntimeError):
    """No usable model: the message says how to configure one."""


class SessionClosedError(RuntimeError):
    """The session was closed (replaced, or the host shut down)."""


class LiveSession(ModelSelection, Toolset, MessageQueue):
    def __init__(
        self, services: SessionServices, session_manager: SessionManager, options: SessionOptions | None = None
    ) -> None:
        options = options or SessionOptions(cwd=session_manager.get_cwd())
        self.services = services
        self.session_manager = session_manager
        self.cwd = session_manager.get_cwd()
        self.settings = services.settings
        self.closed = False
        self._observers: list[Observer] = []
        self._observer_snapshot: tuple[Observer, ...] = ()
        self._dispatch = Dispatcher(services.handlers, self._report_handler_error, self._log_handler_error)
        self._ctx: ContextView | None = None
        self._state: RunState = "idle"
        self._idle = asyncio.Event()
        self._idle.set()
        self._aborted = False
        self._next_turn: list[CustomMessage] = []
        self._follow_up_texts: list[str] = []
        self._deferred_bash: list[BashExecutionMessage] = []
        self._bash_controller: AbortController | None = None
        self._queue_seen: tuple[list[str], list[str]] = ([], [])
        self._writes_failed = False
        self._loop_turns = LoopTurns()
        self._custom_system_prompt = options.custom_system_prompt
        self._append_system_prompt = options.append_system_prompt
        self._extra_tools = list(options.extra_tools)
        self._recovery = Recovery(self)
        self._compactor = Compactor(self, self._dispatch)
        # Said once the session starts (a fork made because another process writes the file).
        self.start_notices: list[str] = []

        from ..handlers.tool_hooks import ToolHooks
        from ..safety.checkpointing import TurnCheckpoints
        from ..safety.permissions import SessionPermissions

        self.permissions = SessionPermissions(self, services.permissions, options.permission_mode)
        # A subagent's services hand it its parent's checkpoints (its edits are the parent's
        # turn's: /rewind there undoes them); every other session keeps its own.
        make_checkpoints = getattr(services, "make_checkpoints", None)
        self.checkpoints = make_checkpoints(self) if make_checkpoints is not None else TurnCheckpoints(self)
        hooks = ToolHooks(self._dispatch, self.handler_context, self.permissions, self.checkpoints)
        context = None
        if options.context_tail and session_manager.context_pending:
            context = session_manager.context_tail(options.context_tail)  # the rest after the first frame
        if context is None:
            session_manager.finish_context()
            context = session_manager.build_session_context()
        self._context_load = ContextLoad(self, context) if session_manager.context_pending else None
        self.restored_model = self._find_model(context.model)
        self.agent = Agent(
            model=options.model or self.restored_model or services.default_model(),
            messages=list(context.messages),
            get_api_key=services.get_api_key,
            before_tool_call=hooks.before_tool_call,
            after_tool_call=hooks.after_tool_call,
            transform_context=hooks.transform_context,
            on_payload=hooks.on_payload,
            session_id=session_manager.get_session_id(),
            # The session owns every retry of a turn (one budget, visible events).
            stream_options={"max_retries": 0},
        )
        self.all_tools: list[ToolDefinition] = []
        self.active_tool_names: list[str] = []
        self._load_tools(options.active_tools)
        level = options.thinking_level or context.thinking_level or default_thinking_level(self.settings)
        self.agent.set_thinking_level(self._clamp_level(level))
        self._base_system_prompt = ""
        self._refresh_system_prompt()
        self.agent.subscribe(self._on_agent_event)
        if not session_manager.entry_count():
            self._record_model_and_level()
        else:
            self._record_overrides(context.model, context.thinking_level)

    # ------------------------------------------------------------------ identity and state

    @property
    def session_id(self) -> str:
        return self.session_manager.get_session_id()

    @property
    def session_file(self) -> str | None:
        return self.session_manager.get_session_file()

    @property
    def model(self) -> Model | None:
        return self.agent.state.model

    @property
    def thinking_level(self) -> ThinkingLevel:
        return self.agent.state.thinking_level

    @property
    def messages(self) -> list[Any]:
        return self.agent.state.messages

    @property
    def run_state(self) -> RunState:
        return self._state

    @property
    def is_streaming(self) -> bool:
        return self.agent.is_streaming

    @property
    def signal(self) -> AbortSignal | None:
        return self.agent.signal

    def is_idle(self) -> bool:
        return self._state == "idle"

    @property
    def context_pending(self) -> bool:
        """Resumed with only the end of the context built; :meth:`context_ready` builds the rest."""
        return self._context_load is not None

    @property
    def older_messages(self) -> int:
        """How many messages of the context come before :attr:`messages[0] <messages>` while
        the context is pending (counted from the file's index), else 0."""
        return self._context_load.older if self._context_load is not None else 0

    async def context_ready(self) -> None:
        """Until the whole context is in the agent's messages (at once when it is)."""
        if self._context_load is not None:
            await self._context_load.wait()
            self._context_load = None

    async def wait_for_idle(self) -> None:
        """Until the run ends: streaming, retry back-off and compaction included."""
        await self._idle.wait()

    def set_run_state(self, state: RunState) -> None:
        previous = self._state
        if state == previous:
            return
        self._state = state
        if state == "idle":
            self._idle.set()
        else:
            self._idle.clear()
        self._deliver(RunStateEvent(state, previous))

    # ------------------------------------------------------------------ the two channels

    def observe(self, observer: Observer) -> Callable[[], None]:
        """Add a front end's observer; returns the function that removes it."""
        self._observers.append(observer)
        self._observer_snapshot = tuple(self._observers)

        def remove() -> None:
            if observer in self._observers:
                self._observers.remove(observer)
                self._observer_snapshot = tuple(self._observers)

        return remove

    def _deliver(self, event: object) -> None:
        if isinstance(event, NoticeEvent) and self._dispatch.has("notice"):
            # Notices come from sync code too; handlers (Claude Code Notification hooks) hear
            # them without holding it up.
            try:
                asyncio.get_running_loop().create_task(self._dispatch.notify(event, self.handler_context()))
            except RuntimeError:
                pass
        for observer in self._observer_snapshot:
            try:
                result = observer(event)
                if result is not None and inspect.isawaitable(result):
                    asyncio.ensure_future(result).add_done_callback(_log_observer_failure)
            except Exception:  # an observer's bug must not break the run or its siblings
                log.exception("observer %r failed on %s", observer, getattr(event, "type", event))

    def publish(self, event: object) -> None:
        """Hand ``event`` to the front ends only (a child's event, which its own session
        already passed through the handlers)."""
        self._deliver(event)

    async def emit(self, event: NamedEvent) -> None:
        """Handlers (awaited, notification only), then observers."""
        if self._dispatch.has(event.type) and event.type != "notice":  # _deliver dispatches notices
            await self._dispatch.notify(event, self.handler_context())
        self._deliver(event)

    @property
    def dispatcher(self) -> Dispatcher:
        """The handler channel (for runtime modules that add seams, like tree navigation)."""
        return self._dispatch

    async def rewind(self, entry_id: str | None = None, *, scope: str = "both", on_conflict: str = "ask",
                     ask: AskConflicts | None = None) -> RewindResult:
        """Go back to before one of the user's messages (or undo a rewind): code, conversation
        or both (docs/checkpoints.md)."""
        from ..safety.rewind import rewind

        await self.context_ready()
        return await rewind(self, entry_id, scope=scope, on_conflict=on_conflict, ask=ask)

    async def navigate_tree(self, entry_id: str | None, *, summarize: bool = False,
                            custom_instructions: str | None = None) -> bool:
        from .tree_navigation import navigate_tree

        await self.context_ready()
        return await navigate_tree(self, entry_id, summarize=summarize, custom_instructions=custom_instructions)

    def handler_context(self) -> ContextView:
        if self._ctx is None:
            self._ctx = self.services.handler_context(self)
        return self._ctx

    def notice(self, level: str, message: str) -> None:
        """Tell the front ends something that is not an event of the run (a reload's problems)."""
        self._deliver(NoticeEvent(level if level in ("info", "warning", "error") else "info", message))  # type: ignore[arg-type]

    def _report_handler_error(self, owner: str, event: str, error: str) -> None:
        self._deliver(ExtensionErrorEvent(owner, event, error))

    def _log_handler_error(self, owner: str, event: str, exc: BaseException) -> None:
        from ...extensions.errors import log_failure

        log_failure(self.services.home, owner, f"{event} handler", exc)

    async def _on_agent_event(self, event: Any) -> None:
        kind = event.type
        if kind == "message_update":  # the per-token path: no work unless someone listens
            if self._dispatch.has(kind):
                await self._dispatch.notify(event, self.handler_context())
            self._deliver(event)
            # A burst of tokens would otherwise keep the loop from a front end's input, an abort.
            await self._loop_turns.give()
            return
        if kind == "message_end":
            if self._dispatch.has(kind):
                event.message = await self._dispatch.message_end(event, self.handler_context(), _parse_message)
            self._persist(event.message)
            self._deliver(event)
            return
        if kind == "agent_end" and self._dispatch.has(kind):
            self._follow_up_texts += await self._dispatch.agent_end(event, self.handler_context())
            self._deliver(event)
            return
        await self.emit(event)
        if kind == "message_start" and getattr(event.message, "role", None) in ("user", "custom"):
            self._sync_queue()
        elif kind == "turn_end" and event.message.stop_reason not in ("error", "aborted") and self._compactor.due():
            self.set_run_state("compacting")
            try:
                await self._compactor.compact("threshold")
            finally:
                self.set_run_state("running")

    # ------------------------------------------------------------------ persistence

    def _persist(self, message: Any) -> None:
        role = getattr(message, "role", None)
        try:
            if role == "custom":
                self.session_manager.append_custom_message_entry(
                    message.custom_type, message.content, message.display, message.details
                )
            elif role in ("user", "assistant", "toolResult", "bashExecution"):
                self.session_manager.append_message(message)
        except OSError as exc:
            self._stop_writing(exc)

    def _stop_writing(self, exc: OSError) -> None:
        """The disk said no (read-only, full, a file where the folder should be): keep the
        conversation going in memory, like ``--no-session``, and say so once."""
        if self._writes_failed:
            return
        self._writes_failed = True
        path = self.session_file or "the session file"
        self.session_manager.stop_writing()
        self._deliver(NoticeEvent("warning", f"could not write {path}: {exc.strerror or exc}; "
                                             "this session is no longer being saved"))

    # ------------------------------------------------------------------ the prompt pipeline

    async def prompt(
        self,
        text: str,
        images: list[ImageContent] | None = None,
        *,
        streaming_behavior: StreamingBehavior | None = None,
        source: InputSource = "interactive",
    ) -> str:
        """Submit input: extension command -> ``input`` -> expansion -> queue or run.

        Returns what happened: ``"command"``, ``"handled"``, ``"queued"`` or ``"ran"``.
        While the session is busy (streaming, retrying, compacting) the message is queued:
        ``"steer"`` delivers it before the next LLM call, anything else once the run would
        stop. A run ends when the agent is idle again (retries, compaction and queued
        messages included).
        """
        self._check_open()
        streaming_behavior = hook_events.streaming_behavior(streaming_behavior)  # a wrong spelling fails here
        images = list(images or [])
        parsed = split_command(text)
        if parsed is not None:
            command = self.services.find_command(parsed[0])
            if command is not None:
                await self._run_command(command, parsed[0], parsed[1])
                return "command"
        return await self._submit(text, images, source, streaming_behavior)

    async def submit(self, text: str, *, source: InputSource = "extension") -> str:
        """Like :meth:`prompt`, but the text is never a slash command (a subagent's task,
        written by a model, must not run an extension's command)."""
        self._check_open()
        return await self._submit(text, [], source, None)

    async def _run_command(self, command: RegisteredCommand | PromptCommand, name: str, args: str) -> None:
        """An extension command; when it raises, the traceback goes to the extension log and
        :class:`ExtensionCommandError` carries the one line to show."""
        from ...extensions.errors import CommandUnavailable, ExtensionCommandError, failure_line, log_failure

        try:
            await command.run(args, self.handler_context())
        except CommandUnavailable:  # not a failure of the extension's code: nothing to log
            raise
        except Exception as exc:
            owner = str(getattr(command, "owner", "") or "extension")
            log_failure(self.services.home, owner, f"/{name}", exc)
            raise ExtensionCommandError(failure_line(owner, f"/{name}", exc), owner, name) from exc

    async def _submit(
        self, text: str, images: list[Any], source: InputSource, streaming_behavior: StreamingBehavior | None
    ) -> str:
        await self.context_ready()  # a resumed session's older messages first
        busy = not self.is_idle()
        if self._dispatch.has("input"):
            event = InputEvent(text, images, source, (streaming_behavior or "follow_up") if busy else None)
            decision = await self._dispatch.input(event, self.handler_context())
            if decision.action == "handled":
                return "handled"
            text, images = decision.text, decision.images
        text = expand_input(self.services.resources(self.cwd), text)
        text = await self.services.expand_mcp_references(text)
        if not self.is_idle():
            message = user_message(text, images or None)
            self.agent.steer(message) if streaming_behavior == "steer" else self.agent.follow_up(message)
            self._sync_queue()
            return "queued"
        if self.agent.state.model is None:
            raise NoModelError(self.services.no_model_help())
        await self._run_prompt(text, images)
        return "ran"

    async def _run_prompt(self, text: str, images: list[Any]) -> None:
        self._begin_run()
        try:
            messages: list[Any] = [user_message(text, images or None), *self._next_turn]
            self._next_turn = []
            if self._dispatch.has("before_agent_start"):
                event = BeforeAgentStartEvent(text, images, self._base_system_prompt, self.system_prompt_options())
                decision = await self._dispatch.before_agent_start(event, self.handler_context())
                for value in decision.messages:
                    try:
                        messages.append(to_custom_message(value))
                    except (TypeError, ValueError) as exc:
                        self._report_handler_error("before_agent_start", "before_agent_start", str(exc))
                if decision.system_prompt is not None:  # this run only
                    self.agent.set_system_prompt(decision.system_prompt)
            await self._compact_if_full()
            await self._attempt(lambda: self.agent.prompt(messages))
            await self._after_run()
        finally:
            self._end_run()

    async def _run(self, start: Callable[[], Awaitable[None]]) -> None:
        """A run not started by a prompt (a triggered custom message, a continuation)."""
        await self.context_ready()
        self._begin_run()
        try:
            await self._attempt(start)
            await self._after_run()
        finally:
            self._end_run()

    async def _attempt(self, start: Callable[[], Awaitable[None]]) -> None:
        """One agent run with its recovery, unless an abort already came (an observer may
        abort from inside the ``run_state`` event that announced the run)."""
        if not self._aborted:
            await self._recovery.run(start)

    def _begin_run(self) -> None:
        self._aborted = False
        self._follow_up_texts = []
        self._apply_live_settings()
        # Tools get the same ctx as handlers (session handle, ui, mode); made on first use.
        self.agent.tool_context = self.handler_context()
        self.set_run_state("running")

    async def _after_run(self) -> None:
        """Deliver what arrived too late for the agent loop, then agent_end follow-ups."""
        follow_ups_run = 0
        while not self._aborted:
            if self.agent.pending_message_count and _ends_with_assistant(self.agent.state.messages):
                await self._attempt(self.agent.continue_)
                continue
            if self._follow_up_texts and follow_ups_run < MAX_AGENT_END_FOLLOW_UPS:
                text = self._follow_up_texts.pop(0)
                follow_ups_run += 1
                self._follow_up_texts = []  # one continuation per agent_end
                message = user_message(expand_input(self.services.resources(self.cwd), text))
                await self._attempt(functools.partial(self.agent.prompt, message))
                continue
            return

    def _end_run(self) -> None:
        self.checkpoints.settle()
        self.agent.set_system_prompt(self._base_system_prompt)  # an override never leaks
        self._flush_deferred_bash()
        self.set_run_state("idle")
        self._sync_queue()

    def _apply_live_settings(self) -> None:
        """Settings the agent copies are re-read for every run: a live session follows edits."""
        self.agent.tool_execution = self.settings.get("toolExecution")
        self.agent.steering_mode = self.settings.get("steeringMode")
        self.agent.follow_up_mode = self.settings.get("followUpMode")
        self.agent.stream_options["idle_timeout"] = stream_idle_timeout(self.settings)
        self.agent.stream_options["read_interval"] = self.services.stream_read_interval

    async def _compact_if_full(self) -> None:
        """Compact before a prompt when the context is already past the threshold: a session
        resumed with a model whose window is smaller than its history would otherwise send
        one request certain to be refused first."""
        if not self._aborted and self._compactor.due():
            self.set_run_state("compacting")
            try:
                await self._compactor.compact("threshold")
            finally:
                self.set_run_state("running")

    async def compact_for_overflow(self, failed: AssistantMessage) -> bool:
        """Compact after a context overflow; the failed answer leaves the context only when
        the compaction worked (else it stays the answer of the run)."""
        self.set_run_state("compacting")
        try:
            result = await self._compactor.compact("overflow")
        finally:
            self.set_run_state("running")
        if result is None:
            return False
        last = last_assistant(self.agent.state.messages)
        if last is not None and last.stop_reason == "error":
            drop_failed(self.agent.state.messages, last)
        return True

    # ------------------------------------------------------------------ control

    def abort(self) -> None:
        """Stop the run: the stream, running tools, a retry wait, a compaction."""
        self._aborted = not self.is_idle()
        self.agent.abort()
        self._compactor.abort()
        self._recovery.cancel()

    def abort_retry(self) -> None:
        self._recovery.cancel()

    async def compact(self, custom_instructions: str | None = None) -> CompactionResult | None:
        """Manual compaction; waits for a running turn to end first (never compacts under it)."""
        self._check_open()
        await self.context_ready()
        await self.wait_for_idle()
        self.set_run_state("compacting")
        try:
            return await self._compactor.compact("manual", custom_instructions)
        finally:
            self.set_run_state("idle")

    def context_usage(self) -> dict[str, Any]:
        from ...session.tokens import estimate_context_tokens

        model = self.agent.state.model
        tokens = estimate_context_tokens(self.agent.state.messages).tokens
        window = model.context_window if model else 0
        return {"tokens": tokens, "context_window": window, "percent": (100.0 * tokens / window) if window else None}

    # ------------------------------------------------------------------ user shell commands

    async def run_bash(
        self, command: str, *, exclude_from_context: bool = False, on_output: Callable[[bytes], None] | None = None
    ) -> BashExecutionMessage:
        """``!cmd`` (kept in context) and ``!!cmd`` (shown, never sent to the model);
        ``on_output`` sees the raw output as it comes (RPC's ``bash_execution_update``)."""
        from .user_bash import message_from_result, run_user_bash

        self._check_open()
        refusal = await self.services.sandbox.refuse_user_command(self.handler_context().ui)
        if refusal is not None:
            raise RuntimeError(refusal)
        environment = self.services.environment(self.cwd)
        answer = None
        if self._dispatch.has("user_bash"):
            event = UserBashEvent(command, exclude_from_context, self.cwd)
            answer = await self._dispatch.first_answer(event, self.handler_context())
        controller = self._bash_controller = AbortController()
        try:
            if answer and answer.get("result") is not None:
                message = message_from_result(command, answer["result"], exclude_from_context)
            else:
                environment = (answer or {}).get("environment") or environment
                message = await run_user_bash(
                    environment, command, exclude_from_context=exclude_from_context, signal=controller.signal,
                    on_output=on_output,
                )
        finally:
            self._bash_controller = None
        await self.emit(MessageStartEvent(message))
        if not self.is_idle():
            # Joining mid-run could land between a tool call and its result; add it once idle.
            self._deferred_bash.append(message)
            self._deliver(MessageEndEvent(message))
        else:
            self.agent.append_message(message)
            await self._on_agent_event(MessageEndEvent(message))
        return message

    def abort_bash(self) -> bool:
        """Stop the ``!cmd`` running, if one is; True when there was one."""
        if self._bash_controller is None:
            return False
        self._bash_controller.abort("Command aborted")
        return True

    def _flush_deferred_bash(self) -> None:
        while self._deferred_bash:
            message = self._deferred_bash.pop(0)
            self.agent.append_message(message)
            self._persist(message)

    # ------------------------------------------------------------------ lifecycle

    async def start(self, reason: StartReason, previous_session_file: str | None = None) -> None:
        """``session_start`` (awaited before the first prompt), then ``model_select`` with
        source ``restore`` when a resumed session brought its model back."""
        self.services.sandbox.report(self._deliver)
        self.permissions.report_problems()
        await self.emit(SessionStartEvent(reason, previous_session_file))
        if self.restored_model is not None and self.agent.state.model is self.restored_model:
            await self.emit(ModelSelectEvent(self.restored_model, None, "restore"))
        while self.start_notices:
            await self.emit(NoticeEvent("warning", self.start_notices.pop(0)))

    async def close(self, reason: ShutdownReason = "quit", target_session_file: str | None = None) -> None:
        """Abort, wait until idle, emit ``session_shutdown``, drop every observer."""
        if self.closed:
            return
        self.abort()
        self.abort_bash()
        await self.wait_for_idle()
        await self.emit(SessionShutdownEvent(reason, target_session_file))
        self.checkpoints.close()
        self.closed = True
        self.session_manager.release_writer()
        self._observers.clear()
        self._observer_snapshot = ()

    def _check_open(self) -> None:
        if self.closed:
            raise SessionClosedError(f"session {self.session_id} is closed")


def _parse_message(value: object) -> object:
    """A handler's replacement message, validated: a dict, or a model built with
    ``model_copy(update=...)`` (which skips validation) is parsed again from its JSON."""
    if isinstance(value, dict):
        return parse_agent_message(value)
    dump = getattr(value, "model_dump", None)
    if dump is not None:
        return parse_agent_message(dump(mode="json", by_alias=True, exclude_none=True, warnings=False))
    return value


def _ends_with_assistant(messages: list[Any]) -> bool:
    return bool(messages) and getattr(messages[-1], "role", None) == "assistant"


def _log_observer_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("asynchronous observer failed", exc_info=task.exception())
