"""HTTP plumbing shared by the providers: one pooled client, retries, SSE events, abort.

Retries happen here, before any byte of the answer reaches the caller: 408/409/429/5xx/529
and connection failures back off exponentially, honouring ``retry-after-ms``, ``retry-after``
(seconds or HTTP date), ``x-should-retry`` and Gemini's ``RetryInfo``. A stream that drops
after it has started is not retried here (the caller has already shown partial output); it
ends with an error and the session layer's auto-retry decides.
"""

from __future__ import annotations

import asyncio
import codecs
import datetime
import json
import os
import random
import re
import sys
import time
import typing
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

from ..base.loop_turns import LoopTurns
from ..base.text_safety import without_surrogates
from . import http1
from .abort import AbortError, AbortSignal
from .failures import kind_for_status

if TYPE_CHECKING:
    import ssl

    import httpx
from .payload_hook import apply_payload_hook  # noqa: F401 - providers import it from here
from .sse import SSEEvent, iter_sse
from .types import StreamOptions


class HeaderLookup(Protocol):
    """An answer's headers as the retry logic reads them (httpx's or :class:`http1.Headers`)."""

    def get(self, name: str, default: str | None = None) -> str | None: ...


class StreamResponse(Protocol):
    """A streamed answer as the providers read it (httpx's or :class:`http1.Response`)."""

    @property
    def status_code(self) -> int: ...
    @property
    def headers(self) -> HeaderLookup: ...
    def aiter_bytes(self) -> AsyncIterator[bytes]: ...
    async def aclose(self) -> None: ...


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


def _httpx() -> Any:
    """httpx, imported on first use: the model requests use :mod:`.http1` unless a proxy is
    configured; httpx serves proxies and :func:`get_client`'s other callers."""
    if "httpx" not in sys.modules:
        with _hidden_modules("httpx._main"):
            import httpx  # noqa: F401
    return sys.modules["httpx"]


def proxied() -> bool:
    """A proxy is configured in the environment (``HTTP_PROXY``, ``https_proxy``,
    ``ALL_PROXY``...): requests then go through httpx, which speaks to proxies."""
    return any(value and name.lower().endswith("_proxy") and name.lower() != "no_proxy"
               for name, value in os.environ.items())


def _import_httpcore() -> None:
    """httpx imports httpcore lazily, when the first client is built; do it without trio."""
    if "httpcore" not in sys.modules:
        with _hidden_modules("trio"):
            import httpcore  # noqa: F401


def preload(*, tls: bool = True) -> None:
    """Import now what the first request would import (with a proxy: httpx, httpcore and the
    anyio backend its locks and events load on first use, ~50-100 ms), so the first answer
    does not wait for it. Safe to call from a worker thread while the app is idle. ``tls``:
    the model is reached over https, so load the CA bundle too (~20 ms, ~1.6 MiB); a local
    model on plain http never needs it."""
    if tls:
        _tls_context()
    if not proxied():
        return
    _httpx()
    _import_httpcore()
    try:
        import anyio._backends._asyncio  # noqa: F401
    except ImportError:  # httpcore without anyio uses asyncio's own primitives
        pass


_tls: ssl.SSLContext | None = None  # one TLS context for every client: loading the CA bundle costs ~50-80 ms


def _tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, else certifi's
    bundle), made once; httpx's own function is not used so that httpx need not load."""
    global _tls
    if _tls is None:
        import ssl

        if os.environ.get("SSL_CERT_FILE"):
            context = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
        elif os.environ.get("SSL_CERT_DIR"):
            context = ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
        else:
            import certifi

            context = ssl.create_default_context(cafile=certifi.where())
        context.set_alpn_protocols(["http/1.1"])  # as httpcore sets it on every connection
        _tls = context
    return _tls


RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def _transport_errors() -> tuple[type[BaseException], ...]:
    """What a failed request raises: :mod:`.http1`'s errors, httpx's once it is loaded, OSError."""
    httpx = sys.modules.get("httpx")
    return (http1.TransportError, OSError) + ((httpx.TransportError,) if httpx is not None else ())


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""

# What a server can make Wolli hold (docs/providers.md, "Limits"):
# an error body is read up to this size (the message is in its first bytes, if anywhere);
ERROR_BODY_LIMIT = 64 * 1024
# one line of an event stream (a server that never sends a newline must not grow memory);
STREAM_LINE_LIMIT = 16 * 1024 * 1024
# one whole streamed answer (a 128k-token answer is ~25 MB of events: five times that is
# a server that does not stop).
RESPONSE_LIMIT = 128 * 1024 * 1024
# Silence allowed between two pieces of a streamed answer (settings streamIdleTimeoutMs
# passes its own); before the first piece the model may be reading a long prompt or
# thinking, so that wait is at least FIRST_BYTE_TIMEOUT.
DEFAULT_IDLE_TIMEOUT = 30.0
FIRST_BYTE_TIMEOUT = 300.0


def idle_limits(options: StreamOptions | None) -> tuple[float, float]:
    """(before the first byte, between bytes) in seconds for a request with ``options``."""
    idle = options.idle_timeout if options is not None and options.idle_timeout else DEFAULT_IDLE_TIMEOUT
    return max(idle, FIRST_BYTE_TIMEOUT), idle


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
        headers: HeaderLookup | None = None,
        retry_after_ms: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.body = body
        self.headers: HeaderLookup = headers if headers is not None else http1.Headers()
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


def _lazy_tls_transport() -> Any:
    """httpx's own transport, split by scheme so that a plain-http server (a local model)
    never makes Wolli load the CA bundle (~20 ms): the https pool gets the shared TLS
    context when the first https request goes out. The plain pool's context trusts no
    certificate, so it cannot be used to reach a TLS server unverified."""
    httpx = _httpx()

    class LazyTLSTransport(httpx.AsyncBaseTransport):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            self._pools: dict[str, Any] = {}

        def _pool(self, scheme: str) -> Any:
            pool = self._pools.get(scheme)
            if pool is None:
                import ssl

                context = _tls_context() if scheme == "https" else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                pool = self._pools[scheme] = httpx.AsyncHTTPTransport(verify=context)
            return pool

        async def handle_async_request(self, request: Any) -> Any:
            return await self._pool("http" if request.url.scheme == "http" else "https").handle_async_request(request)

        async def aclose(self) -> None:
            for pool in list(self._pools.values()):
                await pool.aclose()

    return LazyTLSTransport()


def warm() -> None:
    """Make the running loop's connection pool ahead of the first request (the httpx client
    when a proxy is configured)."""
    if proxied():
        get_client()
    else:
        http1.pool(_tls_context)


def get_client() -> httpx.AsyncClient:
    """One pooled httpx client per event loop, sharing one TLS context (the model requests
    use it when a proxy is configured)."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        httpx = _httpx()
        _import_httpcore()
        timeout = httpx.Timeout(connect=30.0, read=600.0, write=60.0, pool=30.0)
        if httpx._utils.get_environment_proxies():  # proxies are mounts made with ``verify``: eager
            client = httpx.AsyncClient(timeout=timeout, follow_redirects=True, verify=_tls_context())
        else:
            client = httpx.AsyncClient(timeout=timeout, follow_redirects=True, transport=_lazy_tls_transport())
        _clients[loop] = client
    return client


# ---------------------------------------------------------------------------- errors


_HTML_START = re.compile(r"^\s*(<!doctype\s+html|<html|<head|<body|<\?xml)", re.IGNORECASE)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_HTML_HEADING = re.compile(r"<h1[^>]*>(.*?)</h1>", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(r"<[^>]+>")


def _html_summary(status: int, body: str) -> str | None:
    """``502 Bad Gateway (an HTML page: "nginx")`` for an HTML error page, else None: a
    proxy's or load balancer's page says nothing useful beyond its title."""
    if not _HTML_START.match(body):
        return None
    found = _HTML_TITLE.search(body) or _HTML_HEADING.search(body)
    import html  # an HTML error page is rare: not on every start

    title = " ".join(html.unescape(_TAGS.sub(" ", found.group(1))).split())[:200] if found else ""
    reason = _reason(status) or "error"
    if title and title not in (reason, f"{status} {reason}"):
        return f"{status} {reason} (the server answered with an HTML page: {json.dumps(title, ensure_ascii=False)})"
    return f"{status} {reason} (the server answered with an HTML page, not the provider's API)"


def extract_error_message(status: int, body: str) -> str:
    """The human message inside any provider's error body (Anthropic, OpenAI, Gemini, arrays);
    an HTML page is reduced to its status and title."""
    summary = _html_summary(status, body)
    if summary is not None:
        return summary
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
        message = text[:500] if text else _reason(status) or "no body"
    return f"{status} {message}"


_DURATION = re.compile(r"^\s*([\d.]+)\s*(ms|s|m)?\s*$")


def _parse_duration(value: str) -> float | None:
    match = _DURATION.match(value)
    if not match:
        return None
    number = float(match.group(1))
    unit = match.group(2) or "s"
    return number / 1000 if unit == "ms" else number * 60 if unit == "m" else number


def retry_delay_hint(headers: HeaderLookup, body: str) -> float | None:
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
            import email.utils  # an HTTP date here is rare: not on every start

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


def should_retry(status: int, headers: HeaderLookup) -> bool:
    flag = headers.get("x-should-retry")
    if flag == "true":
        return True
    if flag == "false":
        return False
    return status in RETRYABLE_STATUS or status >= 500


# ---------------------------------------------------------------------------- requests


async def _sleep_or_abort(seconds: float, signal: AbortSignal | None) -> None:
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
) -> AsyncIterator[StreamResponse]:
    """POST ``payload`` and yield the successful streaming response, retrying first failures."""
    signal = options.signal
    text = json.dumps(payload, ensure_ascii=False)
    try:
        body = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from undecodable input: send U+FFFD
        body = without_surrogates(text).encode("utf-8")
    send_headers = {"content-type": "application/json", "accept": "text/event-stream", **headers}
    # The answer's first bytes may take long (a long prompt, thinking); its body is watched
    # by sse_events' idle timer, this read timeout only bounds the wait for the headers.
    first_byte = idle_limits(options)[0]
    send = _sender(url, body, send_headers, first_byte)
    transport_errors = _transport_errors()
    attempt = 0
    while True:
        if signal is not None and signal.aborted:
            raise AbortError(signal.reason)
        failure: str
        delay_hint: float | None = None
        retryable: bool
        try:
            response = await send()
        except transport_errors as exc:
            failure = connection_failure(url, exc)
            # A URL that cannot be requested at all (a baseUrl without http://) fails the same way every time.
            bad_url = isinstance(exc, http1.UnsupportedURL) or type(exc).__name__ in ("UnsupportedProtocol", "InvalidURL")
            retryable = not bad_url
            timed_out = isinstance(exc, http1.TimeoutException) or type(exc).__name__.endswith("Timeout")
            error: Exception = ProviderConnectionError(
                failure, "invalid_request" if bad_url else "timeout" if timed_out else "connection")
        else:
            if response.status_code < 300:
                if isinstance(response, http1.Response):  # httpx's (via a proxy) are read as they come
                    response.read_interval = options.read_interval
                try:
                    yield response
                finally:
                    await response.aclose()
                return
            raw = await _error_body(response, idle_limits(options)[1])
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


def _sender(url: str, body: bytes, headers: dict[str, str], first_byte: float) -> Callable[[], Any]:
    """Sends the request once per call: through :mod:`.http1`, or httpx with a proxy."""
    if not proxied():
        async def lite() -> StreamResponse:
            return await http1.send(http1.pool(_tls_context), "POST", url, headers, body, (30.0, first_byte, 60.0))

        return lite
    client = get_client()
    httpx = _httpx()
    timeout = httpx.Timeout(connect=30.0, read=first_byte, write=60.0, pool=30.0)

    async def proxied_send() -> StreamResponse:
        request = client.build_request("POST", url, content=body, headers=headers, timeout=timeout)
        return typing.cast(StreamResponse, await client.send(request, stream=True))

    return proxied_send


async def _error_body(response: StreamResponse, idle: float) -> str:
    """The first :data:`ERROR_BODY_LIMIT` bytes of an error answer (a page that never ends,
    or never comes, must not hold the request): the rest is not read."""
    chunks: list[bytes] = []
    size = 0

    async def read() -> None:
        nonlocal size
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= ERROR_BODY_LIMIT:
                return

    ended: tuple[type[BaseException], ...] = (TimeoutError, *_transport_errors())
    try:
        await asyncio.wait_for(read(), timeout=idle)
    except ended:
        pass  # what arrived is the body we have
    finally:
        await response.aclose()
    return b"".join(chunks)[:ERROR_BODY_LIMIT].decode("utf-8", "replace")


class _IdleWatch:
    """Cancels the reading task when the stream has been silent too long.

    One timer per stream, re-armed only when it fires: a chunk costs a clock read, not a
    timer (the streaming path stays as cheap as it was). Before the first chunk the wait
    is ``first``, then ``idle``.
    """

    def __init__(self, first: float, idle: float) -> None:
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        self.idle = idle
        self.limit = first
        self.last = self.loop.time()
        self.fired = False
        # Checked at the shorter wait: the first chunk may come at once and the limit drop.
        self._handle = self.loop.call_later(min(first, idle), self._check)

    def touch(self) -> None:
        self.last = self.loop.time()
        self.limit = self.idle

    def _check(self) -> None:
        due = self.last + self.limit
        now = self.loop.time()
        if now + 0.001 >= due:
            self.fired = True
            if self.task is not None:
                self.task.cancel()
        else:
            self._handle = self.loop.call_later(due - now, self._check)

    def close(self) -> None:
        self._handle.cancel()


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


async def _lines(response: StreamResponse, watch: _IdleWatch) -> AsyncIterator[str]:
    """The text lines of a streamed body (``\\r\\n``, ``\\n`` or ``\\r`` ends one), each at most
    :data:`STREAM_LINE_LIMIT` characters, the body at most :data:`RESPONSE_LIMIT` bytes.

    A line still open is kept as pieces, joined once it ends (a long line arriving in many
    reads is not copied again on every read)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pieces: list[str] = []
    open_length = 0
    held_cr = False  # the last chunk ended in \r: maybe the first half of a \r\n
    total = 0
    async for chunk in response.aiter_bytes():
        watch.touch()
        total += len(chunk)
        if total > RESPONSE_LIMIT:
            raise ProviderConnectionError(
                f"The provider sent more than {RESPONSE_LIMIT // (1024 * 1024)} MB for one answer, far more "
                "than any model writes; stopped reading it.", "server_error")
        text = decoder.decode(chunk)
        if held_cr:
            text, held_cr = "\r" + text, False
        if text.endswith("\r"):
            text, held_cr = text[:-1], True
        if "\n" not in text and "\r" not in text:
            pieces.append(text)
            open_length += len(text)
            if open_length > STREAM_LINE_LIMIT:
                raise ProviderConnectionError(
                    f"The provider sent a line of over {STREAM_LINE_LIMIT // (1024 * 1024)} MB without ending "
                    "it; this is not an event stream. Stopped reading it.", "server_error")
            continue
        parts = _LINE_BREAK.split(text)
        if pieces:
            parts[0] = "".join(pieces) + parts[0]
        rest = parts.pop()
        pieces, open_length = [rest], len(rest)
        for line in parts:
            yield line
    tail = "".join(pieces) + decoder.decode(b"", final=True)
    if held_cr or tail:  # a held \r ended a line after all; else an unterminated last line
        yield tail


async def sse_events(
    response: StreamResponse, options: StreamOptions | None = None
) -> AsyncGenerator[SSEEvent, None]:
    """The SSE events of a streaming response; a dropped connection, a stall longer than the
    idle timeout (``options.idle_timeout``) or a body past the limits becomes an exception.

    One network read can hold hundreds of events, parsed without a pause: the loop gets a
    turn every few milliseconds, so a front end's input (an abort, a status query) is not
    kept waiting until the burst ends."""
    first, idle = idle_limits(options)
    watch = _IdleWatch(first, idle)
    turns = LoopTurns()
    try:
        async for event in iter_sse(_lines(response, watch)):
            yield event
            await turns.give()
    except asyncio.CancelledError:
        if not watch.fired:
            raise
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
        waited = watch.limit
        raise ProviderConnectionError(
            f"The stream stalled: no data from the provider for {waited:g}s "
            f"(settings.json streamIdleTimeoutMs allows {idle:g}s between pieces of an answer).", "timeout"
        ) from None
    except _transport_errors() as exc:
        raise ProviderConnectionError(
            f"Connection lost mid-stream: {type(exc).__name__}: {exc}".rstrip(": "), "stream_cut"
        ) from exc
    finally:
        watch.close()


def merge_headers(*parts: dict[str, str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in parts:
        if part:
            out.update(part)
    return out
