"""AgentSession: one live session = agent + session file + compaction + retry.

It owns the :class:`~wolli.agent.agent.Agent`, persists what the agent produces into the
:class:`~wolli.session.manager.SessionManager`, restores model and thinking level on
resume, compacts (after any turn that crosses the threshold, and once on a context
overflow before retrying), retries transient provider failures with backoff, and runs the
user's ``!cmd`` shell commands. Every mode consumes the single event stream it emits.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..agent.agent import Agent
from ..agent.events import MessageEndEvent, MessageStartEvent, TurnEndEvent
from ..agent.messages import BashExecutionMessage, CustomMessage, user_message
from ..agent.tool import ToolDefinition
from ..ai.abort import AbortController
from ..ai.overflow import is_context_overflow
from ..ai.types import THINKING_LEVELS, AssistantMessage, ImageContent, Model, ThinkingLevel
from .events import (
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    CompactionEndEvent,
    CompactionStartEvent,
    ModelSelectEvent,
    ThinkingLevelSelectEvent,
)
from .retry import backoff_delay_ms, is_retryable_error
from .system_prompt import BuildSystemPromptOptions, build_system_prompt

if TYPE_CHECKING:
    from ..session.manager import SessionManager
    from .host import AgentHost

Listener = Callable[[Any], "Awaitable[None] | None"]
# Extension hook: (preparation, branch_entries, custom_instructions, signal) ->
# None | {"cancel": True} | {"compaction": {...}}
BeforeCompactHook = Callable[..., Awaitable[Any]]


class AgentSession:
    def __init__(
        self,
        host: AgentHost,
        session_manager: SessionManager,
        *,
        model: Model | None = None,
        thinking_level: ThinkingLevel | None = None,
        active_tools: list[str] | None = None,
        custom_system_prompt: str | None = None,
        append_system_prompt: str = "",
        extra_tools: list[ToolDefinition] | None = None,
    ) -> None:
        self.host = host
        self.session_manager = session_manager
        self.cwd = session_manager.get_cwd()
        self.settings = host.settings
        self._listeners: list[Listener] = []
        self._custom_system_prompt = custom_system_prompt
        self._append_system_prompt = append_system_prompt
        self.all_tools: list[ToolDefinition] = [*host.create_tools(self.cwd), *(extra_tools or [])]
        names = [t.name for t in self.all_tools]
        self.active_tool_names: list[str] = [n for n in (active_tools if active_tools is not None else names) if n in names]
        self.before_compact: BeforeCompactHook | None = None
        self._compaction_controller: AbortController | None = None
        self._overflow_retry_used = False
        self._breaker = host.new_compaction_breaker()
        self._retry_abort = asyncio.Event()
        self._deferred: list[BashExecutionMessage] = []

        context = session_manager.build_session_context()
        restored_model = self._restore_model(context.model)
        self.agent = Agent(
            model=model or restored_model or host.default_model(),
            thinking_level="off",
            messages=list(context.messages),
            get_api_key=host.get_api_key,
            tool_execution=self.settings.get("toolExecution", "parallel"),
            steering_mode=self.settings.get("steeringMode", "one-at-a-time"),
            follow_up_mode=self.settings.get("followUpMode", "one-at-a-time"),
            session_id=session_manager.get_session_id(),
        )
        level = thinking_level or context.thinking_level or self.settings.get("defaultThinkingLevel", "off")
        self.agent.set_thinking_level(self._clamp_level(level))
        self._refresh_tools_and_prompt()
        self.agent.subscribe(self._on_agent_event)
        if not session_manager.get_entries():
            self._record_model_and_level()
        else:
            self._record_overrides(context.model, context.thinking_level)

    # ------------------------------------------------------------------ events

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    async def emit(self, event: Any) -> None:
        for listener in list(self._listeners):
            result = listener(event)
            if inspect.isawaitable(result):
                await result

    async def _on_agent_event(self, event: Any) -> None:
        if isinstance(event, MessageEndEvent):
            self._persist(event.message)
        await self.emit(event)
        if isinstance(event, TurnEndEvent) and event.message.stop_reason not in ("error", "aborted"):
            await self._maybe_auto_compact()

    def _persist(self, message: Any) -> None:
        role = getattr(message, "role", None)
        if role == "custom":
            self.session_manager.append_custom_message_entry(
                message.custom_type, message.content, message.display, message.details
            )
        elif role in ("user", "assistant", "toolResult", "bashExecution"):
            self.session_manager.append_message(message)

    # ------------------------------------------------------------------ state

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
    def is_streaming(self) -> bool:
        return self.agent.is_streaming

    @property
    def session_file(self) -> str | None:
        return self.session_manager.get_session_file()

    @property
    def session_id(self) -> str:
        return self.session_manager.get_session_id()

    def _restore_model(self, stored: tuple[str, str] | None) -> Model | None:
        if not stored:
            return None
        return self.host.model_registry.find(stored[0], stored[1])

    def _clamp_level(self, level: str | None) -> ThinkingLevel:
        if level not in THINKING_LEVELS:
            level = "off"
        model = self.agent.state.model
        if model is not None and not model.reasoning:
            return "off"
        return level  # type: ignore[return-value]

    def _record_model_and_level(self) -> None:
        model = self.agent.state.model
        if model is not None:
            self.session_manager.append_model_change(model.provider, model.id)
        self.session_manager.append_thinking_level_change(self.agent.state.thinking_level)

    def _record_overrides(self, stored_model: tuple[str, str] | None, stored_level: str | None) -> None:
        """A resumed session run with another model or level (``-c --model X --thinking Y``)
        records the change, so the next plain resume continues with what was used last."""
        model = self.agent.state.model
        if model is not None and stored_model != (model.provider, model.id):
            self.session_manager.append_model_change(model.provider, model.id)
        resumed_level = self._clamp_level(stored_level or self.settings.get("defaultThinkingLevel", "off"))
        if self.agent.state.thinking_level != resumed_level:
            self.session_manager.append_thinking_level_change(self.agent.state.thinking_level)

    async def set_model(self, model: Model, source: str = "set") -> None:
        previous = self.agent.state.model
        self.agent.set_model(model)
        self.session_manager.append_model_change(model.provider, model.id)
        clamped = self._clamp_level(self.agent.state.thinking_level)
        if clamped != self.agent.state.thinking_level:
            await self.set_thinking_level(clamped)
        await self.emit(ModelSelectEvent(model, previous, source))  # type: ignore[arg-type]

    async def set_thinking_level(self, level: str) -> None:
        previous = self.agent.state.thinking_level
        clamped = self._clamp_level(level)
        self.agent.set_thinking_level(clamped)
        if clamped != previous:
            self.session_manager.append_thinking_level_change(clamped)
            await self.emit(ThinkingLevelSelectEvent(clamped, previous))

    # ------------------------------------------------------------------ tools and prompt

    def system_prompt_options(self) -> BuildSystemPromptOptions:
        resources = self.host.resources(self.cwd)
        return BuildSystemPromptOptions(
            config=self.settings,
            cwd=self.cwd,
            soul=resources.soul,
            memory=resources.memory,
            user=resources.user,
            skills=list(resources.skills),
            selected_tools=list(self.active_tool_names),
            append_system_prompt=self._append_system_prompt,
            context_files=list(resources.context_files),
            custom_prompt=self._custom_system_prompt,
        )

    def _refresh_tools_and_prompt(self) -> None:
        active = [t for t in self.all_tools if t.name in self.active_tool_names]
        self.agent.set_tools(active)
        self.agent.set_system_prompt(build_system_prompt(self.system_prompt_options(), self.all_tools))

    def set_active_tools(self, names: list[str]) -> list[str]:
        """Activate the named tools; returns the names that do not exist."""
        known = {t.name for t in self.all_tools}
        self.active_tool_names = [n for n in names if n in known]
        self._refresh_tools_and_prompt()
        return [n for n in names if n not in known]

    def add_tools(self, tools: list[ToolDefinition], activate: bool = True) -> None:
        by_name = {t.name: t for t in self.all_tools}
        for tool in tools:
            by_name[tool.name] = tool
            if activate and tool.name not in self.active_tool_names:
                self.active_tool_names.append(tool.name)
        self.all_tools = list(by_name.values())
        self._refresh_tools_and_prompt()

    # ------------------------------------------------------------------ prompting

    def expand_input(self, text: str) -> str:
        """``/skill:name args`` and ``/template args`` expansion (unknown commands pass through)."""
        from .resources import expand_prompt_template, expand_skill

        if not text.startswith("/"):
            return text
        head, _, rest = text[1:].partition(" ")
        resources = self.host.resources(self.cwd)
        if head.startswith("skill:"):
            for skill in resources.skills:
                if skill.name == head[6:]:
                    return expand_skill(skill, rest)
            return text
        for template in resources.prompts:
            if template.name == head:
                return expand_prompt_template(template, rest)
        return text

    async def prompt(self, text: str, images: list[ImageContent] | None = None, *, expand: bool = True) -> None:
        """Send a user message and run until the agent is idle (with retries/compaction)."""
        if self.agent.state.model is None:
            raise NoModelError(self.host.no_model_help())
        if expand:
            text = self.expand_input(text)
        self._overflow_retry_used = False
        await self._run(lambda: self.agent.prompt(user_message(text, images)))

    async def send_custom_message(self, message: CustomMessage, *, trigger_turn: bool = False) -> None:
        """An extension's message: joins the context (and the file); ``trigger_turn`` runs the
        agent on it. While a run is going on it is delivered before the next LLM call."""
        if self.agent.is_streaming:
            self.agent.steer(message)
            return
        if trigger_turn:
            await self._run(lambda: self.agent.prompt(message))
            return
        await self.emit(MessageStartEvent(message))
        self.agent.append_message(message)
        self._persist(message)
        await self.emit(MessageEndEvent(message))

    def steer(self, text: str, images: list[ImageContent] | None = None) -> None:
        self.agent.steer(user_message(text, images))

    def follow_up(self, text: str, images: list[ImageContent] | None = None) -> None:
        self.agent.follow_up(user_message(text, images))

    def abort(self) -> None:
        self.agent.abort()
        if self._compaction_controller is not None:
            self._compaction_controller.abort("Compaction aborted")
        self._retry_abort.set()

    async def wait_for_idle(self) -> None:
        await self.agent.wait_for_idle()

    def _apply_retry_settings(self) -> None:
        """The ``retry`` settings also govern the HTTP layer's own retries (before a stream starts).

        Without this, ``retry.enabled: false`` still retried 429/5xx three times and the HTTP
        layer waited 1 s, 2 s, 4 s whatever ``baseDelayMs`` said. Read on every run so a
        settings change applies to the next request.
        """
        retry = self.settings.get("retry", {}) or {}
        options = self.agent.stream_options
        if not retry.get("enabled", True):
            options["max_retries"] = 0
            return
        options["max_retries"] = max(0, int(retry.get("maxRetries", 3)))
        options["retry_base_delay"] = max(0, int(retry.get("baseDelayMs", 2000))) / 1000
        options["max_retry_delay"] = max(0, int(retry.get("maxDelayMs", 60000))) / 1000

    async def _run(self, start: Callable[[], Awaitable[None]]) -> None:
        self._retry_abort = asyncio.Event()
        self._apply_retry_settings()
        try:
            await self._run_with_recovery(start)
        finally:
            self._flush_deferred()

    async def _run_with_recovery(self, start: Callable[[], Awaitable[None]]) -> None:
        await start()
        attempt = 0
        while True:
            last = self._last_assistant()
            if last is None or last.stop_reason != "error":
                if attempt:
                    await self.emit(AutoRetryEndEvent(success=True, attempt=attempt))
                return
            model = self.agent.state.model
            if is_context_overflow(last, model.context_window if model else None) and not self._overflow_retry_used:
                self._overflow_retry_used = True
                self._drop_last_error()
                if await self.compact(reason="overflow"):
                    await self.agent.continue_()
                    continue
                return
            retry = self.settings.get("retry", {}) or {}
            max_retries = int(retry.get("maxRetries", 3))
            if not retry.get("enabled", True) or not is_retryable_error(last.error_message) or attempt >= max_retries:
                if attempt:
                    await self.emit(AutoRetryEndEvent(success=False, attempt=attempt, final_error=last.error_message))
                return
            attempt += 1
            delay = backoff_delay_ms(attempt, int(retry.get("baseDelayMs", 2000)), int(retry.get("maxDelayMs", 60000)))
            await self.emit(AutoRetryStartEvent(attempt, max_retries, delay, last.error_message or ""))
            try:
                await asyncio.wait_for(self._retry_abort.wait(), timeout=delay / 1000)
                await self.emit(AutoRetryEndEvent(success=False, attempt=attempt, final_error="Retry cancelled"))
                return
            except TimeoutError:
                pass
            self._drop_last_error()
            await self.agent.continue_()

    def _last_assistant(self) -> AssistantMessage | None:
        for message in reversed(self.agent.state.messages):
            if isinstance(message, AssistantMessage):
                return message
            if getattr(message, "role", None) == "user":
                return None
        return None

    def _drop_last_error(self) -> None:
        """Take the failed assistant message out of the context (it stays in the file)."""
        messages = self.agent.state.messages
        if messages and isinstance(messages[-1], AssistantMessage) and messages[-1].stop_reason == "error":
            messages.pop()

    # ------------------------------------------------------------------ compaction

    def context_usage(self) -> dict[str, Any]:
        from ..session.tokens import estimate_context_tokens

        model = self.agent.state.model
        tokens = estimate_context_tokens(self.agent.state.messages).tokens
        window = model.context_window if model else 0
        return {"tokens": tokens, "context_window": window, "percent": (100.0 * tokens / window) if window else None}

    def _compaction_settings(self) -> Any:
        from ..session.compaction import CompactionSettings

        conf = self.settings.get("compaction", {}) or {}
        return CompactionSettings(
            enabled=bool(conf.get("enabled", True)),
            reserve_tokens=int(conf.get("reserveTokens", 16384)),
            keep_recent_tokens=int(conf.get("keepRecentTokens", 20000)),
        )

    async def _maybe_auto_compact(self) -> None:
        from ..session.compaction import should_compact

        model = self.agent.state.model
        settings = self._compaction_settings()
        if model is None or not settings.enabled or not self._breaker.allowed():
            return
        usage = self.context_usage()
        if should_compact(usage["tokens"], model.context_window, settings):
            await self.compact(reason="threshold")

    async def compact(self, custom_instructions: str | None = None, *, reason: str = "manual") -> Any:
        """Summarise older history into a compaction entry. Returns the result or None."""
        from ..session.compaction import CompactionError, CompactionResult, compact, prepare_compaction

        model = self.agent.state.model
        await self.emit(CompactionStartEvent(reason))  # type: ignore[arg-type]
        controller = self._compaction_controller = AbortController()
        branch = self.session_manager.get_branch()
        preparation = prepare_compaction(branch, self._compaction_settings())
        if preparation is None or model is None:
            await self.emit(CompactionEndEvent(reason, error_message="Nothing to compact yet."))  # type: ignore[arg-type]
            self._compaction_controller = None
            return None
        result: Any = None
        from_hook = False
        try:
            if self.before_compact is not None:
                decision = await self.before_compact(preparation, branch, custom_instructions, controller.signal)
                if isinstance(decision, dict) and decision.get("cancel"):
                    await self.emit(CompactionEndEvent(reason, aborted=True, error_message="Cancelled by an extension"))  # type: ignore[arg-type]
                    return None
                supplied = decision.get("compaction") if isinstance(decision, dict) else None
                if supplied:
                    result = CompactionResult(
                        summary=supplied["summary"],
                        first_kept_entry_id=supplied.get("first_kept_entry_id", preparation.first_kept_entry_id),
                        tokens_before=supplied.get("tokens_before", preparation.tokens_before),
                        details=supplied.get("details"),
                    )
                    from_hook = True
            if result is None:
                api_key = self.host.get_api_key(model)
                result = await compact(
                    preparation, model, api_key=api_key, custom_instructions=custom_instructions, signal=controller.signal
                )
        except CompactionError as exc:
            self._breaker.record_failure()
            await self.emit(CompactionEndEvent(reason, error_message=str(exc), aborted=controller.signal.aborted))  # type: ignore[arg-type]
            return None
        except Exception as exc:  # an extension hook failed: report, keep the session usable
            self._breaker.record_failure()
            await self.emit(CompactionEndEvent(reason, error_message=f"{type(exc).__name__}: {exc}"))  # type: ignore[arg-type]
            return None
        finally:
            self._compaction_controller = None
        self._breaker.record_success()
        self.session_manager.append_compaction(
            result.summary, result.first_kept_entry_id, result.tokens_before, result.details, from_hook
        )
        self.agent.replace_messages(self.session_manager.build_session_context().messages)
        if reason == "overflow":
            self._drop_last_error()  # the failed answer is in the file; the retry must not see it
        await self.emit(CompactionEndEvent(reason, result=result, will_retry=reason == "overflow"))  # type: ignore[arg-type]
        return result

    # ------------------------------------------------------------------ user shell commands

    async def run_bash(self, command: str, *, exclude_from_context: bool = False) -> BashExecutionMessage:
        """``!cmd`` (kept in context) and ``!!cmd`` (shown, never sent to the model)."""
        from .user_bash import run_user_bash

        message = await run_user_bash(self.host.environment(self.cwd), command, exclude_from_context=exclude_from_context)
        await self.emit(MessageStartEvent(message))
        if self.agent.is_streaming:
            # Joining mid-run could land between a tool call and its result; add it once idle.
            self._deferred.append(message)
        else:
            self.agent.append_message(message)
            self._persist(message)
        await self.emit(MessageEndEvent(message))
        return message

    def _flush_deferred(self) -> None:
        while self._deferred:
            message = self._deferred.pop(0)
            self.agent.append_message(message)
            self._persist(message)


class NoModelError(RuntimeError):
    """No usable model: the message says how to configure one."""
