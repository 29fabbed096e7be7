"""The two shapes of ``register_provider(name, {"stream": fn})`` (docs/providers.md, providers from extensions).

* ``fn(model, context, options, builder)`` drives Wolli's message builder directly (what the
  built-in providers do);
* ``fn(model, context, options)`` returns (or is) an async iterator of event dicts with the
  stream's names: ``{"type": "text_delta", "content_index": 0, "delta": "Hi"}``. Block
  indexes are the extension's own; they are mapped onto the message's. ``done`` may carry
  ``reason`` (``stop``, ``length``, ``toolUse``) and ``usage`` (``input``, ``output``...);
  ``error`` carries ``error`` or ``message`` text. A ``*_start`` that was never sent is
  implied by the first delta, and a block left open is closed at the end, so a minimal
  stream of ``text_delta`` events and a ``done`` is enough.

Which shape a function has is read from its signature (four parameters: the builder form).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import AsyncIterable

    from ..ai.builder import MessageBuilder
    from ..ai.types import Context, Model, StreamOptions

_KINDS = ("text", "thinking", "toolcall")


def adapt_stream(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A provider ``run(model, context, options, builder)`` for either shape of ``fn``."""
    try:
        parameters = [
            p for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        parameters = []
    if len(parameters) >= 4:
        return fn

    async def run(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
        events = fn(model, context, options)
        if inspect.isawaitable(events) and not hasattr(events, "__aiter__"):
            events = await events
        await _replay(events, builder)

    return run


async def _replay(events: AsyncIterable[object], builder: MessageBuilder) -> None:
    indexes: dict[tuple[str, int], int] = {}
    builder.start()

    def block(kind: str, event: dict[str, Any]) -> int:
        key = (kind, int(event.get("content_index", 0)))
        if key not in indexes:
            if kind == "text":
                indexes[key] = builder.text_start()
            elif kind == "thinking":
                indexes[key] = builder.thinking_start()
            else:
                indexes[key] = builder.toolcall_start(str(event.get("id") or f"call_{len(indexes)}"),
                                                      str(event.get("name") or ""))
        return indexes[key]

    async for raw in events:
        event = raw if isinstance(raw, dict) else _as_dict(raw)
        kind, _, phase = str(event.get("type", "")).rpartition("_")
        if kind in _KINDS:
            index = block(kind, event)
            if phase == "delta":
                delta = str(event.get("delta") or "")
                {"text": builder.text_delta, "thinking": builder.thinking_delta,
                 "toolcall": builder.toolcall_delta}[kind](index, delta)
            elif phase == "end":
                if kind == "text":
                    builder.text_end(index)
                elif kind == "thinking":
                    builder.thinking_end(index)
                else:
                    call = event.get("tool_call") or {}
                    arguments = call.get("arguments") if isinstance(call, dict) else getattr(call, "arguments", None)
                    builder.toolcall_end(index, arguments if isinstance(arguments, dict) else None)
        elif event.get("type") == "done":
            _usage(builder, event.get("usage"))
            builder.close_open_blocks()
            builder.done(event.get("reason") or event.get("stop_reason"))
            return
        elif event.get("type") == "error":
            builder.fail(str(event.get("error") or event.get("message") or "the custom provider reported an error"))
            return
    builder.close_open_blocks()
    builder.done()


def _usage(builder: MessageBuilder, usage: object) -> None:
    if not isinstance(usage, dict):
        return
    target = builder.message.usage
    for key in ("input", "output", "cache_read", "cache_write"):
        if isinstance(usage.get(key), int):
            setattr(target, key, usage[key])


def _as_dict(event: object) -> dict[str, Any]:
    dump = getattr(event, "model_dump", None)
    if dump is not None:
        return dict(dump())
    if dataclasses.is_dataclass(event) and not isinstance(event, type):
        return {f.name: getattr(event, f.name) for f in dataclasses.fields(event)}
    return dict(getattr(event, "__dict__", {}))
