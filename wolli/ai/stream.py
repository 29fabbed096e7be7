"""``stream()`` / ``complete()`` and the registry of API implementations.

A provider implementation is ``async def run(model, context, options, builder)``: it sends
the request and maps wire events onto the :class:`~wolli.ai.builder.MessageBuilder`. This
module guarantees the contract around it: the stream always ends with exactly one ``done``
or ``error`` event, an abort cancels the request and keeps the partial content, and no
exception ever reaches the caller. Built-in providers are imported on first use so that
``import wolli.ai`` stays light (no httpx).
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable
from typing import Any

from .abort import AbortError
from .builder import MessageBuilder
from .event_stream import AssistantMessageEventStream
from .redact import request_secrets
from .types import AssistantMessage, Context, Model, StreamOptions

ProviderRun = Callable[[Model, Context, StreamOptions, MessageBuilder], Awaitable[None]]

_BUILTIN: dict[str, str] = {
    "anthropic-messages": "wolli.ai.providers.anthropic:run",
    "openai-completions": "wolli.ai.providers.openai_completions:run",
    "openai-responses": "wolli.ai.providers.openai_responses:run",
    "google-generative-ai": "wolli.ai.providers.google:run",
    "faux": "wolli.ai.providers.faux:run",
}
_registered: dict[str, ProviderRun] = {}


def register_api(api: str, run: ProviderRun) -> None:
    """Make ``api`` streamable with ``run`` (replaces a built-in of the same name)."""
    _registered[api] = run


def unregister_api(api: str) -> None:
    _registered.pop(api, None)


def known_apis() -> list[str]:
    return sorted(set(_BUILTIN) | set(_registered))


def get_api(api: str) -> ProviderRun | None:
    run = _registered.get(api)
    if run is None and api in _BUILTIN:
        module_name, _, attr = _BUILTIN[api].partition(":")
        run = getattr(importlib.import_module(module_name), attr)
        _registered[api] = run
    return run


def stream(
    model: Model, context: Context, options: StreamOptions | dict[str, Any] | None = None
) -> AssistantMessageEventStream:
    """Start a request and return its event stream (call from a running event loop)."""
    out = AssistantMessageEventStream()
    builder = MessageBuilder(model, out)
    try:
        opts = StreamOptions.coerce(options)
    except TypeError as exc:
        builder.fail(str(exc))
        return out
    builder.secrets = request_secrets(opts.api_key, (model.headers, opts.headers), model.base_url)
    out.task = asyncio.get_running_loop().create_task(_drive(model, context, opts, builder))
    return out


async def complete(
    model: Model, context: Context, options: StreamOptions | dict[str, Any] | None = None
) -> AssistantMessage:
    return await stream(model, context, options).result()


async def _drive(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
    run = get_api(model.api)
    if run is None:
        builder.fail(f"No provider implements api '{model.api}' (model {model.provider}/{model.id}).")
        return
    signal = options.signal
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    remove = None
    if signal is not None:
        if signal.aborted:
            builder.abort(signal.reason)
            return
        remove = signal.add_listener(lambda: loop.call_soon_threadsafe(_cancel, task))
    try:
        await run(model, context, options, builder)
        if not builder.finished:
            builder.fail("The provider stream ended without a final message (connection closed early).", kind="stream_cut")
    except asyncio.CancelledError:
        if signal is not None and signal.aborted:
            builder.abort(signal.reason)
        else:
            builder.abort("Request was cancelled")
            raise
    except AbortError as exc:
        builder.abort(exc.reason)
    except Exception as exc:  # a provider never raises to its caller
        builder.fail_from(exc, _describe(exc))
    finally:
        if remove is not None:
            remove()


def _cancel(task: asyncio.Task[Any] | None) -> None:
    if task is not None and not task.done():
        task.cancel()


def _describe(exc: Exception) -> str:
    message = str(exc)
    if type(exc).__name__ in ("ProviderHTTPError", "ProviderConnectionError", "ProviderStreamError"):
        return message
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
