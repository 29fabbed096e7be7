"""HTTP plumbing shared by the providers: one pooled client, retries, SSE events, abort.

Retries happen here, before any byte of the answer reaches the caller: 408/409/429/5xx/529
and connection failures back off exponentially, honouring ``retry-after-ms``, ``retry-after``
(seconds or HTTP date), ``x-should-retry`` and Gemini's ``RetryInfo``. A stream that drops
after it has started is not retried here (the caller has already shown partial output); it
ends with an error and the session layer's auto-retry decides.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import json
import random
import re
import sys
import time
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from .abort import AbortError
from .failures import kind_for_status
from .payload_hook import apply_payload_hook  # noqa: F401 - providers import it from here
from .sse import SSEEvent, iter_sse
from .types import StreamOptions


class _hidden_modules:
    """Make ``import name`` fail (ImportError) inside the block, for names not yet imported.

    httpx's __init__ imports its command-line client (httpx._main: click, rich, pygments) and
    httpcore imports trio whenever it is installed, though wolli runs on asyncio: together
    over 100 ms of CPU on every headless start, for nothing. Both packages fall back cleanly
    when the import fails. The ``None`` entries go right after, so a later ``import trio``
    elsewhere still works.
    """

    def __init__(self, *names: str) -> None:
        self.names = [name for name in names if name not in sys.modules]

    def __enter__(self) -> None:
        for name in self.names:
            sys.modules[name] = None  # type: ignore[assignment]

    def __exit__(self, *exc: object) -> None:
        for name in self.names:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


with _hidden_modules("httpx._main"):
    import httpx


def _import_httpcore() -> None:
    """httpx imports httpcore lazily, when the first client is built; do it without trio."""
    if "httpcore" not in sys.modules:
        with _hidden_modules("trio"):
            import httpcore  # noqa: F401


def preload() -> None:
    """Import now what the first request would import (httpcore, and the anyio backend its
    locks and events load on first use: ~50-100 ms), so the first answer does not wait for
    it. Safe to call from a worker thread while the app is idle."""
    _import_httpcore()
    _tls_context()
    try:
        import anyio._backends._asyncio  # noqa: F401
    except ImportError:  # httpcore without anyio uses asyncio's own primitives
        pass


_tls: Any = None  # one TLS context for every client: loading the CA bundle costs ~50-80 ms


def _tls_context() -> Any:
    """httpx's default TLS context (certifi, or SSL_CERT_FILE / SSL_CERT_DIR), made once."""
    global _tls
    if _tls is None:
        _tls = httpx.create_ssl_context()
    return _tls


RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()
_TIMEOUT = httpx.Timeout(connect=30.0, read=600.0, write=60.0, pool=30.0)


class ProviderHTTPError(Exception):
    """A non-2xx answer (after retries). ``str()`` is the provider's own message.

    ``kind`` (:mod:`.failures`) and ``retry_after_ms`` (what the server asked for) travel on
    to the failed message, where the session's auto-retry reads them.
    """

    def __init__(
        self,
        status: int,
        message: str,
        body: str = "",
        headers: httpx.Headers | None = None,
        retry_after_ms: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.body = body
        self.headers = headers or httpx.Headers()
        self.kind = kind_for_status(status, message)
        self.retry_after_ms = retry_after_ms


class ProviderConnectionError(Exception):
    """No answer at all: the connection failed or dropped (``kind`` says which)."""

    def __init__(self, message: str, kind: str = "connection") -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after_ms: int | None = None


def connection_failure(url: str, exc: BaseException) -> str:
    """What the user reads when nothing answered at ``url``: where, why, what to check."""
    detail = f"{type(exc).__name__}: {exc}".rstrip(": ")
    return (
        f"Connection failed: could not reach {url} ({detail}). "
        "Is the server running and reachable, and is the provider's baseUrl right (models.json)?"
    )


def _gave_up(error: Exception, attempts: int) -> Exception:
    """``error`` with the number of attempts spent in its text; kind and wait unchanged."""
    note = f" (gave up after {attempts} {'retry' if attempts == 1 else 'retries'})"
    if isinstance(error, ProviderHTTPError):
        return ProviderHTTPError(error.status, f"{error.message}{note}", error.body, error.headers, error.retry_after_ms)
    kind = getattr(error, "kind", "connection")
    return ProviderConnectionError(f"{error}{note}", kind)


def get_client() -> httpx.AsyncClient:
    """One pooled client per event loop, sharing one TLS context."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        _import_httpcore()
        client = httpx.AsyncClient(timeout=_TIMEOUT, follow_redirects=True, verify=_tls_context())
        _clients[loop] = client
    return client


# ---------------------------------------------------------------------------- errors


def extract_error_message(status: int, body: str) -> str:
    """The human message inside any provider's error body (Anthropic, OpenAI, Gemini, arrays)."""
    text = body.strip()
    try:
        data: Any = json.loads(text) if text else None
    except ValueError:
        data = None
    if isinstance(data, list) and data:
        data = data[0]
    message: str | None = None
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            message = error.get("message") or error.get("msg")
            if not message and isinstance(error.get("errors"), list) and error["errors"]:
                first = error["errors"][0]
                message = first.get("message") if isinstance(first, dict) else str(first)
        elif isinstance(error, str):
            message = error
        if not message and isinstance(data.get("message"), str):
            message = data["message"]
        if not message and isinstance(data.get("detail"), str):
            message = data["detail"]
    if not message:
        message = text[:500] if text else httpx.codes.get_reason_phrase(status) or "no body"
    return f"{status} {message}"


_DURATION = re.compile(r"^\s*([\d.]+)\s*(ms|s|m)?\s*$")


def _parse_duration(value: str) -> float | None:
    match = _DURATION.match(value)
    if not match:
        return None
    number = float(match.group(1))
    unit = match.group(2) or "s"
    return number / 1000 if unit == "ms" else number * 60 if unit == "m" else number


def retry_delay_hint(headers: httpx.Headers, body: str) -> float | None:
    """Seconds the server asked us to wait, from headers or a Gemini ``RetryInfo`` detail."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            try:
                parsed = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError, IndexError):  # garbage: fall back to backoff
                parsed = None
            if parsed is not None:
                if parsed.tzinfo is None:  # HTTP dates are GMT
                    parsed = parsed.replace(tzinfo=datetime.UTC)
                return max(0.0, parsed.timestamp() - time.time())
    if "RetryInfo" in body:
        try:
            data = json.loads(body)
            if isinstance(data, list):
                data = data[0]
            for detail in data.get("error", {}).get("details", []):
                if str(detail.get("@type", "")).endswith("RetryInfo") and "retryDelay" in detail:
                    return _parse_duration(str(detail["retryDelay"]))
        except (ValueError, AttributeError, TypeError):
            pass
    return None


def should_retry(status: int, headers: httpx.Headers) -> bool:
    flag = headers.get("x-should-retry")
    if flag == "true":
        return True
    if flag == "false":
        return False
    return status in RETRYABLE_STATUS or status >= 500


# ---------------------------------------------------------------------------- requests


async def _sleep_or_abort(seconds: float, signal: Any) -> None:
    if signal is None:
        await asyncio.sleep(seconds)
        return
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait_for(asyncio.shield(waiter), timeout=seconds)
    except TimeoutError:
        pass
    finally:
        waiter.cancel()
    if signal.aborted:
        raise AbortError(signal.reason)


@asynccontextmanager
async def open_stream(
    url: str,
    headers: dict[str, str],
    payload: dict[str, Any],
    options: StreamOptions,
    *,
    on_retry: Callable[[int, float, str], None] | None = None,
) -> AsyncIterator[httpx.Response]:
    """POST ``payload`` and yield the successful streaming response, retrying first failures."""
    client = get_client()
    signal = options.signal
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    send_headers = {"content-type": "application/json", "accept": "text/event-stream", **headers}
    attempt = 0
    while True:
        if signal is not None and signal.aborted:
            raise AbortError(signal.reason)
        failure: str
        delay_hint: float | None = None
        retryable: bool
        try:
            request = client.build_request("POST", url, content=body, headers=send_headers)
            response = await client.send(request, stream=True)
        except (httpx.TransportError, OSError) as exc:
            failure = connection_failure(url, exc)
            retryable = True
            timeout = isinstance(exc, httpx.TimeoutException)
            error: Exception = ProviderConnectionError(failure, "timeout" if timeout else "connection")
        else:
            if response.status_code < 300:
                try:
                    yield response
                finally:
                    await response.aclose()
                return
            raw = (await response.aread()).decode("utf-8", "replace")
            await response.aclose()
            failure = extract_error_message(response.status_code, raw)
            delay_hint = retry_delay_hint(response.headers, raw)
            wait_ms = None if delay_hint is None else int(delay_hint * 1000)
            error = ProviderHTTPError(response.status_code, failure, raw, response.headers, wait_ms)
            retryable = should_retry(response.status_code, response.headers)
        if not retryable or attempt >= options.max_retries:
            raise _gave_up(error, attempt) if attempt else error
        if isinstance(error, ProviderHTTPError) and delay_hint is not None and delay_hint > options.max_retry_delay:
            raise ProviderHTTPError(
                error.status,
                f"{failure} (the server asked to retry in {delay_hint:.0f}s, more than the "
                f"{options.max_retry_delay:.0f}s limit)",
                error.body,
                error.headers,
                wait_ms,
            )
        delay = delay_hint if delay_hint is not None else options.retry_base_delay * (2**attempt)
        delay *= 1 if delay_hint is not None else random.uniform(0.8, 1.2)
        attempt += 1
        if on_retry is not None:
            on_retry(attempt, delay, failure)
        await _sleep_or_abort(delay, signal)


async def sse_events(response: httpx.Response) -> AsyncIterator[SSEEvent]:
    """The SSE events of a streaming response; a dropped connection becomes an exception.

    One network read can hold hundreds of events, parsed without a pause: the loop gets a
    turn every few milliseconds, so a front end's input (an abort, a status query) is not
    kept waiting until the burst ends."""
    yielded_at = time.monotonic()
    try:
        async for event in iter_sse(response.aiter_lines()):
            yield event
            now = time.monotonic()
            if now - yielded_at > 0.001:
                yielded_at = now
                await asyncio.sleep(0)
    except (httpx.TransportError, OSError) as exc:
        raise ProviderConnectionError(
            f"Connection lost mid-stream: {type(exc).__name__}: {exc}".rstrip(": "), "stream_cut"
        ) from exc


def merge_headers(*parts: dict[str, str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in parts:
        if part:
            out.update(part)
    return out
