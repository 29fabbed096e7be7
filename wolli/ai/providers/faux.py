"""The ``faux`` provider: scripted, deterministic answers for tests and extension authors.

    faux = FauxProvider()                       # registers provider "faux", model "faux-1"
    faux.push(faux_text("hello"), faux_tool_call("read", {"path": "a.txt"}))
    message = await complete(faux.model, context)

Each call to the model takes the next scripted response. A response is a list of blocks
(text, thinking, tool calls) or a callable ``(context, options) -> response`` for answers
that depend on what the model was sent. Responses stream in small token-sized pieces,
optionally paced (``tokens_per_second``), and honour abort between pieces. ``calls`` counts
requests and ``contexts`` keeps what each one was sent.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..abort import AbortError
from ..builder import MessageBuilder
from ..payload_hook import apply_payload_hook
from ..types import (
    Context,
    ImageContent,
    Model,
    ModelCost,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    content_text,
)


@dataclass
class FauxResponse:
    """One scripted model answer."""

    blocks: list[TextContent | ThinkingContent | ToolCall] = field(default_factory=list)
    stop_reason: str | None = None  # default: toolUse when there are tool calls, else stop
    error_message: str | None = None  # set => the stream ends with an error after the blocks
    error_kind: str | None = None  # what a real provider would have said the failure was
    retry_after_ms: int | None = None  # the wait a real server would have asked for
    tokens_per_second: float | None = None  # overrides the provider's pacing
    # Ask the provider to wait for an abort after streaming the blocks (tests of abort).
    hang: bool = False
    usage: dict[str, int] | None = None


ResponseLike = FauxResponse | TextContent | ThinkingContent | ToolCall | str | list[Any]
ResponseFactory = Callable[[Context, StreamOptions], "ResponseLike | FauxResponse"]

_TOKEN = re.compile(r"\s*\S{1,6}|\s+")
_registry: dict[str, FauxProvider] = {}
_ids = 0


def _next_id() -> str:
    global _ids
    _ids += 1
    return f"faux_call_{_ids}"


def faux_text(text: str) -> TextContent:
    return TextContent(text=text)


def faux_thinking(text: str, signature: str | None = None) -> ThinkingContent:
    return ThinkingContent(thinking=text, thinking_signature=signature)


def faux_tool_call(name: str, arguments: dict[str, Any] | None = None, id: str | None = None) -> ToolCall:
    return ToolCall(id=id or _next_id(), name=name, arguments=arguments or {})


def faux_error(message: str, *blocks: Any, kind: str | None = None, retry_after_ms: int | None = None) -> FauxResponse:
    """Streams ``blocks`` then fails with ``message`` (``kind``: see :mod:`wolli.ai.failures`)."""
    return FauxResponse(
        blocks=list(_as_blocks(list(blocks))), error_message=message, error_kind=kind, retry_after_ms=retry_after_ms
    )


def faux_hang(*blocks: Any) -> FauxResponse:
    """Streams ``blocks`` then waits until the request is aborted."""
    return FauxResponse(blocks=list(_as_blocks(list(blocks))), hang=True)


def _as_blocks(value: Any) -> Iterable[TextContent | ThinkingContent | ToolCall]:
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, str):
            yield TextContent(text=item)
        elif isinstance(item, TextContent | ThinkingContent | ToolCall):
            yield item
        else:
            raise TypeError(f"faux: cannot script {type(item).__name__}")


def _as_response(value: Any) -> FauxResponse:
    if isinstance(value, FauxResponse):
        return value
    return FauxResponse(blocks=list(_as_blocks(value)))


def estimate_tokens(text: str) -> int:
    """Rough token count (chars / 4), the same estimate the session layer uses."""
    return (len(text) + 3) // 4


def _context_chars(context: Context) -> int:
    total = len(context.system_prompt or "")
    for message in context.messages:
        content = getattr(message, "content", "")
        if isinstance(content, str):
            total += len(content)
            continue
        for block in content:
            if isinstance(block, TextContent):
                total += len(block.text)
            elif isinstance(block, ThinkingContent):
                total += len(block.thinking)
            elif isinstance(block, ToolCall):
                total += len(block.name) + len(json.dumps(block.arguments))
            elif isinstance(block, ImageContent):
                total += 4800  # ~1200 tokens per image
    for tool in context.tools or []:
        total += len(tool.name) + len(tool.description) + len(json.dumps(tool.parameters))
    return total


class FauxProvider:
    def __init__(
        self,
        *,
        provider: str = "faux",
        model_id: str = "faux-1",
        responses: Iterable[ResponseLike | ResponseFactory] = (),
        tokens_per_second: float | None = None,
        context_window: int = 200_000,
        max_tokens: int = 16_384,
        reasoning: bool = True,
        cost: ModelCost | None = None,
        register: bool = True,
    ) -> None:
        self.model = Model(
            id=model_id,
            name=f"Faux {model_id}",
            api="faux",
            provider=provider,
            reasoning=reasoning,
            input=["text", "image"],
            context_window=context_window,
            max_tokens=max_tokens,
            cost=cost or ModelCost(),
        )
        self.tokens_per_second = tokens_per_second
        self.responses: deque[ResponseLike | ResponseFactory] = deque(responses)
        self.calls = 0
        self.contexts: list[Context] = []
        self.options: list[StreamOptions] = []
        # The request body of each call, after the ``on_payload`` hook (what a real provider sends).
        self.payloads: list[dict[str, Any]] = []
        if register:
            self.register()

    def register(self) -> FauxProvider:
        _registry[self.model.provider] = self
        return self

    def unregister(self) -> None:
        if _registry.get(self.model.provider) is self:
            del _registry[self.model.provider]

    def push(self, *responses: ResponseLike | ResponseFactory) -> FauxProvider:
        """Queue answers; a list or several blocks in one argument make one answer."""
        self.responses.extend(responses)
        return self

    def set_responses(self, responses: Iterable[ResponseLike | ResponseFactory]) -> None:
        self.responses = deque(responses)

    @property
    def pending(self) -> int:
        return len(self.responses)

    async def run(self, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
        self.calls += 1
        self.contexts.append(context.model_copy(deep=True))
        self.options.append(options)
        self.payloads.append(await apply_payload_hook(self._payload(context, options), self.model, options))
        if not self.responses:
            builder.fail("faux: no scripted response left (push more with FauxProvider.push)")
            return
        scripted = self.responses.popleft()
        if callable(scripted) and not isinstance(scripted, FauxResponse | TextContent | ThinkingContent | ToolCall):
            scripted = scripted(context, options)
            if asyncio.iscoroutine(scripted):
                scripted = await scripted
        response = _as_response(scripted)
        await self._play(response, context, options, builder)

    def _payload(self, context: Context, options: StreamOptions) -> dict[str, Any]:
        """A provider-neutral request body, so payload hooks can be tested against faux."""
        payload: dict[str, Any] = {
            "model": self.model.id,
            "system": context.system_prompt,
            "messages": [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in context.messages],
            "tools": [t.name for t in context.tools or []],
        }
        for name in ("temperature", "max_tokens", "reasoning"):
            value = getattr(options, name, None)
            if value is not None:
                payload[name] = value
        return payload

    async def _play(
        self, response: FauxResponse, context: Context, options: StreamOptions, builder: MessageBuilder
    ) -> None:
        rate = response.tokens_per_second or self.tokens_per_second
        delay = 1.0 / rate if rate else 0.0
        signal = options.signal
        output_chars = 0

        async def tick() -> None:
            if signal is not None and signal.aborted:
                raise AbortError(signal.reason)
            # Yield to the loop between pieces even unpaced, like a real network stream.
            await asyncio.sleep(delay)
            if signal is not None and signal.aborted:
                raise AbortError(signal.reason)

        builder.start()
        for block in response.blocks:
            if isinstance(block, TextContent):
                index = builder.text_start()
                for piece in _TOKEN.findall(block.text):
                    await tick()
                    builder.text_delta(index, piece)
                builder.text_end(index)
                output_chars += len(block.text)
            elif isinstance(block, ThinkingContent):
                index = builder.thinking_start(signature=block.thinking_signature)
                for piece in _TOKEN.findall(block.thinking):
                    await tick()
                    builder.thinking_delta(index, piece)
                builder.thinking_end(index)
                output_chars += len(block.thinking)
            else:
                index = builder.toolcall_start(block.id, block.name)
                text = json.dumps(block.arguments)
                for start in range(0, len(text), 24):
                    await tick()
                    builder.toolcall_delta(index, text[start : start + 24])
                builder.toolcall_end(index, dict(block.arguments))
                output_chars += len(text)
        usage = builder.message.usage
        if response.usage:
            for key, value in response.usage.items():
                setattr(usage, key, value)
        else:
            usage.input = (_context_chars(context) + 3) // 4
            usage.output = (output_chars + 3) // 4
        if response.hang:
            if signal is None:
                raise RuntimeError("faux: a hanging response needs an abort signal")
            await signal.wait()
            raise AbortError(signal.reason)
        if response.error_message is not None:
            builder.fail(response.error_message, kind=response.error_kind, retry_after_ms=response.retry_after_ms)
            return
        builder.done(response.stop_reason)


def get_faux(provider: str) -> FauxProvider | None:
    return _registry.get(provider)


async def run(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
    faux = _registry.get(model.provider)
    if faux is None:
        builder.fail(f"faux: no FauxProvider registered for provider '{model.provider}'")
        return
    await faux.run(context, options, builder)


__all__ = [
    "FauxProvider",
    "FauxResponse",
    "content_text",
    "estimate_tokens",
    "faux_error",
    "faux_hang",
    "faux_text",
    "faux_thinking",
    "faux_tool_call",
    "get_faux",
]
