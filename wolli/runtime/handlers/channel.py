"""The handler channel: awaited handlers whose results fold, each failure isolated.

Extension code (and runtime-internal hooks) registers handlers per event name in a
:class:`HandlerRegistry`; the session asks a :class:`Dispatcher` at each seam, and the
dispatcher reads the registry *at call time*, so a reload that swaps the handlers needs no
rewiring. Handlers of one event run by priority (higher first), then in owner load order,
then in registration order. How their results combine (docs/extensions.md, Events):

- ``tool_call``: the first ``block`` (or ``result`` / ``abort``) wins and stops the chain;
  mutations of ``event.input`` accumulate; ``allow`` vouches for the call (no permission
  question unless a rule asks; a later block still wins); a raising handler blocks the call
  (fail closed).
- ``input``: ``handled`` stops the chain; ``transform`` rewrites the text and continues.
- ``user_bash``, ``session_before_compact``: the first answer wins.
- ``context``, ``before_provider_request``, ``before_agent_start``, ``tool_result``,
  ``message_end``: the running value threads through every handler.
- ``agent_end``: ``follow_up`` texts are collected from every handler.
- everything else: notification only.

A handler that raises, or returns a key that does not exist, is reported through
``report(owner, event, error)`` (the session turns it into an ``extension_error`` event)
and never stops its siblings or the run. Results are dicts with snake_case keys or objects
with the same attributes.
"""

from __future__ import annotations

import asyncio
import difflib
import inspect
import itertools
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any, Protocol

from ...base.records import record

if TYPE_CHECKING:
    from ...agent.events import MessageEndEvent
    from ...extensions.host import ContextView
    from .hook_events import (
        BeforeAgentStartEvent,
        BeforeProviderRequestEvent,
        ContextEvent,
        InputEvent,
    )

Report = Callable[[str, str, str], None]
# (owner, event, exception): where the traceback of a handler that raised is kept.
Log = Callable[[str, str, BaseException], None]



class NamedEvent(Protocol):
    """Any event handlers subscribe to by name (its ``type``)."""

    @property
    def type(self) -> str: ...


@record(slots=True)
class Handler:
    event: str
    fn: Callable[..., Any]
    owner: str
    rank: int
    priority: int
    seq: int
    # Hooks fail open even at ``tool_call`` (the hook text says so); extension handlers there
    # fail closed.
    fail_open: bool = False
    # Failures in a row; at MAX_FAILURES_IN_A_ROW the handler is switched off (``disabled``).
    failures: int = 0
    disabled: bool = False


MAX_FAILURES_IN_A_ROW = 3
DEFAULT_TIMEOUT_S = 60.0


class HandlerRegistry:
    """Handlers by event name. ``has()`` is a dict lookup: the per-token path checks it."""

    def __init__(self) -> None:
        # How long an async handler may take before it is cancelled and reported (None: no
        # limit). Set from settings ``extensionTimeoutMs``.
        self.timeout_s: float | None = DEFAULT_TIMEOUT_S
        self._by_event: dict[str, list[Handler]] = {}
        self._sorted: dict[str, tuple[Handler, ...]] = {}
        self._seq = itertools.count()

    def add(
        self, event: str, fn: Callable[..., Any], *, owner: str = "runtime", rank: int = 0, priority: int = 0,
        fail_open: bool = False,
    ) -> Callable[[], None]:
        handler = Handler(event, fn, owner, rank, priority, next(self._seq), fail_open)
        self._by_event.setdefault(event, []).append(handler)
        self._sorted.pop(event, None)

        def remove() -> None:
            handlers = self._by_event.get(event, [])
            if handler in handlers:
                handlers.remove(handler)
                self._sorted.pop(event, None)
                if not handlers:
                    del self._by_event[event]

        return remove

    def remove_owner(self, owner: str) -> None:
        for event in list(self._by_event):
            kept = [h for h in self._by_event[event] if h.owner != owner]
            if kept:
                self._by_event[event] = kept
            else:
                del self._by_event[event]
            self._sorted.pop(event, None)

    def clear(self) -> None:
        self._by_event.clear()
        self._sorted.clear()

    def has(self, event: str) -> bool:
        return event in self._by_event

    def for_event(self, event: str) -> tuple[Handler, ...]:
        found = self._sorted.get(event)
        if found is None:
            found = tuple(sorted(self._by_event.get(event, ()), key=lambda h: (-h.priority, h.rank, h.seq)))
            self._sorted[event] = found
        return found

    def events(self) -> list[str]:
        return sorted(self._by_event)

    def switched_off(self, owner: str) -> list[str]:
        """The events whose handlers of ``owner`` failed too often and no longer run."""
        return sorted({h.event for handlers in self._by_event.values() for h in handlers
                       if h.owner == owner and h.disabled})


# ---------------------------------------------------------------------------- results

RESULT_KEYS: dict[str, frozenset[str]] = {
    "tool_call": frozenset({"block", "reason", "result", "abort", "allow"}),
    "tool_result": frozenset({"content", "details", "is_error"}),
    "input": frozenset({"action", "text", "images"}),
    "context": frozenset({"messages"}),
    "before_agent_start": frozenset({"message", "messages", "system_prompt"}),
    "message_end": frozenset({"message"}),
    "user_bash": frozenset({"environment", "result"}),
    "session_before_compact": frozenset({"cancel", "compaction"}),
    "session_before_tree": frozenset({"cancel"}),
    "agent_end": frozenset({"follow_up"}),
}


def _fields(result: object, event: str, owner: str, report: Report) -> dict[str, Any] | None:
    """A handler's result as a dict of known keys (unknown keys reported, then ignored)."""
    if result is None:
        return None
    allowed = RESULT_KEYS[event]
    if isinstance(result, dict):
        out = {}
        for key, value in result.items():
            if key in allowed:
                out[key] = value
            else:
                near = difflib.get_close_matches(_snake(str(key)), sorted(allowed), n=1, cutoff=0.5)
                hint = f" (did you mean {near[0]!r}?)" if near else f" (known: {', '.join(sorted(allowed))})"
                report(owner, event, f"unknown key {key!r} in the {event} result{hint}; it was ignored")
        return out
    if isinstance(result, (str, bytes, int, float, list, tuple, set)):  # bool is an int
        # A plain value has none of the keys: without a word, ``return True`` meant as
        # "block" in a tool_call gate would let the call through in silence.
        shown = repr(result) if len(repr(result)) <= 40 else repr(result)[:39] + "…"
        report(owner, event, f"returned {type(result).__name__} {shown} instead of a dict "
                             f"({', '.join(sorted(allowed))}) or None; it was ignored")
        return None
    return {key: getattr(result, key) for key in allowed if getattr(result, key, None) is not None}


def _custom_message_like(value: object) -> bool:
    """What ``prompting.to_custom_message`` can turn into a message: a dict or an object
    with a ``custom_type``."""
    if isinstance(value, dict):
        return "custom_type" in value or "customType" in value
    return hasattr(value, "custom_type")


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


@record
class ToolCallDecision:
    block: bool = False
    reason: str | None = None
    result: Any = None  # a result supplied without running the tool
    abort: bool = False
    allow: bool = False  # a handler vouched for the call (deny rules still win)


@record
class InputDecision:
    action: str = "continue"  # continue | transform | handled
    text: str = ""
    images: list[Any] = field(default_factory=list)


@record
class AgentStartDecision:
    messages: list[Any] = field(default_factory=list)
    system_prompt: str | None = None


# ---------------------------------------------------------------------------- dispatch


class HandlerTimeout(Exception):
    """An async handler ran past its time budget."""


class Dispatcher:
    """Runs the handlers of one registry with the folding rules above."""

    def __init__(self, registry: HandlerRegistry, report: Report, log: Log | None = None) -> None:
        self.registry = registry
        self.report = report
        self.log = log

    def has(self, event: str) -> bool:
        return self.registry.has(event)

    async def _call(self, handler: Handler, event: object, ctx: object) -> tuple[bool, Any]:
        """(ok, result). A failure is reported here; callers decide what it means.

        An async handler gets the registry's time budget (``asyncio.timeout``: no extra task
        per call, so the per-token path stays cheap); when it runs out the handler is
        cancelled and counts as failed. A sync handler cannot be interrupted and gets none.
        A handler that fails ``MAX_FAILURES_IN_A_ROW`` times in a row is switched off (and
        said so) until the extensions are reloaded; a success resets the count.
        """
        if handler.disabled:
            return False, None
        try:
            result = handler.fn(event, ctx)
            if inspect.isawaitable(result):
                budget = self.registry.timeout_s
                if budget is None:
                    result = await result
                else:
                    try:
                        async with asyncio.timeout(budget):
                            result = await result
                    except TimeoutError:
                        raise HandlerTimeout(f"timed out after {budget:g} s and was cancelled") from None
        except Exception as exc:  # isolated: siblings and the run carry on
            handler.failures += 1
            text = str(exc) if isinstance(exc, HandlerTimeout) else _describe(exc)
            if self.log is not None and not isinstance(exc, HandlerTimeout):
                self.log(handler.owner, handler.event, exc)
            if handler.failures >= MAX_FAILURES_IN_A_ROW:
                handler.disabled = True
                text += f"; switched off after {handler.failures} failures in a row (/reload turns it back on)"
            self.report(handler.owner, handler.event, text)
            return False, None
        handler.failures = 0
        return True, result

    async def notify(self, event: NamedEvent, ctx: ContextView) -> None:
        for handler in self.registry.for_event(event.type):
            await self._call(handler, event, ctx)

    async def tool_call(self, event: object, ctx: object) -> ToolCallDecision | None:
        allowed = False
        for handler in self.registry.for_event("tool_call"):
            ok, result = await self._call(handler, event, ctx)
            if not ok and handler.fail_open:
                continue
            if not ok:  # fail closed: a gate that crashed must not let the call through
                return ToolCallDecision(block=True, reason=f"Tool call blocked: a tool_call handler of {handler.owner} failed")
            found = _fields(result, "tool_call", handler.owner, self.report)
            if not found:
                continue
            if found.get("abort"):
                return ToolCallDecision(abort=True, reason=found.get("reason"))
            if found.get("block"):
                return ToolCallDecision(block=True, reason=found.get("reason"))
            if found.get("result") is not None:
                return ToolCallDecision(result=found["result"])
            allowed = allowed or bool(found.get("allow"))
        return ToolCallDecision(allow=True) if allowed else None

    async def tool_result(self, event: object, ctx: object) -> bool:
        """Fold partial patches into ``event`` (content/details/is_error); True when changed."""
        changed = False
        for handler in self.registry.for_event("tool_result"):
            ok, result = await self._call(handler, event, ctx)
            found = _fields(result, "tool_result", handler.owner, self.report) if ok else None
            for key, value in (found or {}).items():
                setattr(event, key, value)
                changed = True
        return changed

    async def input(self, event: InputEvent, ctx: ContextView) -> InputDecision:
        for handler in self.registry.for_event("input"):
            ok, result = await self._call(handler, event, ctx)
            found = _fields(result, "input", handler.owner, self.report) if ok else None
            if not found:
                continue
            action = found.get("action", "continue")
            if action == "handled":
                return InputDecision("handled", event.text, event.images)
            if action == "transform":
                if "text" in found:
                    event.text = str(found["text"])
                if "images" in found:
                    event.images = list(found["images"] or [])
            elif action != "continue":
                self.report(handler.owner, "input", f"unknown action {action!r}; use continue, transform or handled")
        return InputDecision("continue", event.text, list(event.images))

    async def context(self, event: ContextEvent, ctx: ContextView) -> list[Any]:
        for handler in self.registry.for_event("context"):
            ok, result = await self._call(handler, event, ctx)
            found = _fields(result, "context", handler.owner, self.report) if ok else None
            if found and isinstance(found.get("messages"), list):
                event.messages = found["messages"]
            elif found and found.get("messages") is not None:
                self.report(handler.owner, "context", f"'messages' must be a list, not "
                                                      f"{type(found['messages']).__name__}; it was ignored")
        return event.messages

    async def before_provider_request(self, event: BeforeProviderRequestEvent, ctx: ContextView) -> object:
        for handler in self.registry.for_event("before_provider_request"):
            ok, result = await self._call(handler, event, ctx)
            if ok and isinstance(result, dict):
                event.payload = result
            elif ok and result is not None:  # the provider would drop it in silence (ai/payload_hook.py)
                self.report(handler.owner, "before_provider_request", f"returned {type(result).__name__} instead "
                                                                      "of a payload dict or None; it was ignored")
        return event.payload

    async def before_agent_start(self, event: BeforeAgentStartEvent, ctx: ContextView) -> AgentStartDecision:
        decision = AgentStartDecision()
        for handler in self.registry.for_event("before_agent_start"):
            ok, result = await self._call(handler, event, ctx)
            found = _fields(result, "before_agent_start", handler.owner, self.report) if ok else None
            if not found:
                continue
            for key in ("message", "messages"):
                value = found.get(key)
                for item in (value if isinstance(value, list) else [] if value is None else [value]):
                    if _custom_message_like(item):
                        decision.messages.append(item)
                    else:  # said here, where the handler is known, not later when the run starts
                        what = "a dict without custom_type" if isinstance(item, dict) else type(item).__name__
                        self.report(handler.owner, "before_agent_start",
                                    f"'{key}' holds {what}, not a custom message (a dict with custom_type "
                                    "and content); it was skipped")
            system_prompt = found.get("system_prompt")
            if isinstance(system_prompt, str):
                event.system_prompt = decision.system_prompt = system_prompt
            elif system_prompt is not None:
                self.report(handler.owner, "before_agent_start", f"'system_prompt' must be a string, not "
                                                                 f"{type(system_prompt).__name__}; it was ignored")
        return decision

    async def message_end(self, event: MessageEndEvent, ctx: ContextView, parse: Callable[[Any], Any]) -> object:
        """The finalized message after every handler; a role change is rejected and reported."""
        for handler in self.registry.for_event("message_end"):
            ok, result = await self._call(handler, event, ctx)
            found = _fields(result, "message_end", handler.owner, self.report) if ok else None
            if not found or found.get("message") is None:
                continue
            try:
                replacement = parse(found["message"])
            except Exception as exc:
                self.report(handler.owner, "message_end", f"invalid replacement message: {_describe(exc)}")
                continue
            old_role = getattr(event.message, "role", None)
            if getattr(replacement, "role", None) != old_role:
                self.report(
                    handler.owner, "message_end",
                    f"replacement rejected: role {getattr(replacement, 'role', None)!r} differs from {old_role!r}",
                )
                continue
            event.message = replacement
        return event.message

    async def first_answer(self, event: NamedEvent, ctx: ContextView) -> dict[str, Any] | None:
        """``user_bash`` and ``session_before_compact``: the first non-empty answer wins."""
        for handler in self.registry.for_event(event.type):
            ok, result = await self._call(handler, event, ctx)
            found = _fields(result, event.type, handler.owner, self.report) if ok else None
            if found:
                return found
        return None

    async def agent_end(self, event: object, ctx: object) -> list[str]:
        follow_ups: list[str] = []
        for handler in self.registry.for_event("agent_end"):
            ok, result = await self._call(handler, event, ctx)
            found = _fields(result, "agent_end", handler.owner, self.report) if ok else None
            text = (found or {}).get("follow_up")
            if isinstance(text, str) and text.strip():
                follow_ups.append(text)
        return follow_ups


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
