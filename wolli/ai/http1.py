"""A small HTTP/1.1 client on asyncio streams for the model requests.

httpx with httpcore, h11 and anyio costs ~65 ms of CPU to import, a third of a print-mode
run, to send one POST and read its streamed answer. This module does that much with the
standard library: one keep-alive pool per event loop, ``Content-Length``, chunked and
read-until-close bodies, gzip/deflate answers, redirects as httpx follows them, TLS with the
the TLS context :mod:`wolli.ai.http` makes (the same trust as httpx). A request
through a proxy (``HTTP(S)_PROXY``/``ALL_PROXY`` set) goes through httpx instead
(:mod:`wolli.ai.http` decides). Errors are named as httpx names them (``ConnectError``,
``ReadTimeout``...) so the messages users read stay the same. Timeouts use ``asyncio.timeout``,
not ``wait_for``, which on Python 3.11 can swallow a cancellation (an abort) that arrives
as the awaited read completes.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import weakref
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from urllib.parse import urljoin, urlsplit

USER_AGENT = "wolli"
MAX_REDIRECTS = 20  # as httpx
HEADER_LIMIT = 64 * 1024  # the status line and headers of one answer
CHUNK_LINE_LIMIT = 4096


class TransportError(Exception):
    """The request did not get (all of) an answer: connection, protocol or timeout."""


class TimeoutException(TransportError):
    pass


class ConnectError(TransportError):
    pass


class UnsupportedURL(ConnectError):
    """The URL itself cannot be requested (no http/https scheme, no host): a configuration
    mistake, so asking again cannot help (httpx names it ``UnsupportedProtocol``)."""


class ConnectTimeout(TimeoutException):
    pass


class ReadTimeout(TimeoutException):
    pass


class WriteTimeout(TimeoutException):
    pass


class ReadError(TransportError):
    pass


class RemoteProtocolError(TransportError):
    pass


class TooManyRedirects(TransportError):
    pass


class Headers:
    """An answer's headers: case-insensitive; a repeated header's values joined by ", "."""

    def __init__(self, items: list[tuple[str, str]] | None = None) -> None:
        self.raw = items or []
        self._joined: dict[str, str] = {}
        for name, value in self.raw:
            key = name.lower()
            self._joined[key] = f"{self._joined[key]}, {value}" if key in self._joined else value

    def get(self, name: str, default: str | None = None) -> str | None:
        return self._joined.get(name.lower(), default)

    def __getitem__(self, name: str) -> str:
        return self._joined[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._joined

    def __iter__(self) -> Iterator[str]:
        return iter(self._joined)

    def items(self) -> list[tuple[str, str]]:
        return list(self._joined.items())

    def __repr__(self) -> str:
        return f"Headers({self.raw!r})"


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def close(self) -> None:
        try:
            self.writer.close()
        except Exception:  # already gone
            pass


Origin = tuple[str, str, int]


class Pool:
    """Idle keep-alive connections by origin, for one event loop."""

    def __init__(self, tls: Callable[[], ssl.SSLContext]) -> None:
        self.tls = tls  # the TLS context for https, made when the first https request goes out
        self.idle: dict[Origin, list[_Connection]] = {}
        self.closed = False

    async def connect(self, origin: Origin, timeout: float) -> tuple[_Connection, bool]:
        """A connection to ``origin`` and whether it was kept alive from an earlier request."""
        spare = self.idle.get(origin)
        while spare:
            connection = spare.pop()
            if not connection.reader.at_eof() and not connection.writer.is_closing():
                return connection, True
            connection.close()
        scheme, host, port = origin
        context = self.tls() if scheme == "https" else None
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    host, port, ssl=context, server_hostname=host if context else None, limit=HEADER_LIMIT)
        except TimeoutError:
            raise ConnectTimeout(f"no connection to {host}:{port} within {timeout:g}s") from None
        except (OSError, ssl.SSLError) as exc:
            raise ConnectError(str(exc) or type(exc).__name__) from exc
        return _Connection(reader, writer), False

    def give_back(self, origin: Origin, connection: _Connection) -> None:
        if self.closed:
            connection.close()
        else:
            self.idle.setdefault(origin, []).append(connection)

    def close(self) -> None:
        self.closed = True
        for connections in self.idle.values():
            for connection in connections:
                connection.close()
        self.idle.clear()


class Response:
    """A streamed answer: ``status_code``, ``headers``, ``aiter_bytes()``, ``aclose()``."""

    def __init__(self, pool: Pool, origin: Origin, connection: _Connection, status: int, headers: Headers,
                 url: str, method: str) -> None:
        self.pool = pool
        self.origin = origin
        self.connection: _Connection | None = connection
        self.status_code = status
        self.headers = headers
        self.url = url
        encoding = (headers.get("transfer-encoding") or "").lower()
        self._chunked = "chunked" in encoding
        length = headers.get("content-length")
        self._length: int | None = None
        if not self._chunked and length is not None:
            try:
                self._length = int(length.split(",")[0].strip())
            except ValueError:
                raise RemoteProtocolError(f"bad Content-Length {length!r}") from None
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            self._length = 0
        self._reusable = (headers.get("connection") or "").lower() != "close" and (
            self._chunked or self._length is not None)
        self._done = self._length == 0
        # Shortest time between two waits for more of the body (0: read as it arrives); see
        # :meth:`_pace`. Set by the caller before iterating.
        self.read_interval = 0.0
        self._batch_at = float("-inf")

    async def _pace(self, reader: asyncio.StreamReader) -> None:
        """Before a read that would wait for the network, let at least ``read_interval``
        pass since the last such wait, with the socket not watched meanwhile.

        A front end drawing at most N frames a second gains nothing from waking for every
        token of a paced answer (four event-loop turns through the provider, the agent, the
        session and the front end each): what arrives meanwhile stays in the socket and is
        read and handled in one pass. Data already received is never held back, and a pause
        longer than the interval (the first token, a slow model) costs no wait at all."""
        # StreamReader keeps what it has received in ``_buffer`` (CPython 3.8-3.13); where that
        # cannot be seen, nothing is held back.
        buffered = getattr(reader, "_buffer", None)
        if buffered is None or buffered:  # more of the body is here already: parse it first
            return
        loop = asyncio.get_running_loop()
        wait = self._batch_at + self.read_interval - loop.time()
        if wait > 0:
            connection = self.connection
            transport = connection.writer.transport if connection is not None else None
            if not isinstance(transport, asyncio.ReadTransport):
                transport = None
            if transport is not None:
                transport.pause_reading()  # no wake-up per arriving packet meanwhile
            try:
                await asyncio.sleep(wait)
            finally:
                if transport is not None and not transport.is_closing():
                    transport.resume_reading()
        self._batch_at = loop.time()

    async def _raw(self) -> AsyncIterator[bytes]:
        connection = self.connection
        if connection is None or self._done:
            return
        reader = connection.reader
        with _reading("peer closed connection without sending complete message body", "chunk size line too long"):
            if self._chunked:
                while True:
                    if self.read_interval:
                        await self._pace(reader)
                    line = await reader.readuntil(b"\n")
                    if len(line) > CHUNK_LINE_LIMIT:
                        raise RemoteProtocolError("chunk size line too long")
                    try:
                        size = int(line.split(b";")[0].strip(), 16)
                    except ValueError:
                        raise RemoteProtocolError(f"bad chunk size {line[:40]!r}") from None
                    if size == 0:
                        while (await reader.readuntil(b"\n")).strip():  # trailers
                            pass
                        break
                    async for data in _exactly(reader, size):
                        yield data
                    await reader.readexactly(2)
            elif self._length is not None:
                async for data in _exactly(reader, self._length):
                    yield data
            else:
                while True:
                    if self.read_interval:
                        await self._pace(reader)
                    data = await reader.read(65536)
                    if not data:
                        break
                    yield data
        self._done = True

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        coding = (self.headers.get("content-encoding") or "").lower().strip()
        decoder = None
        if coding in ("gzip", "x-gzip"):
            decoder = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif coding == "deflate":
            decoder = zlib.decompressobj()
        async for data in self._raw():
            if decoder is not None:
                try:
                    data = decoder.decompress(data)
                except zlib.error as exc:
                    raise RemoteProtocolError(f"bad {coding} body: {exc}") from None
            if data:
                yield data
        if decoder is not None:
            tail = decoder.flush()
            if tail:
                yield tail

    async def aread(self) -> bytes:
        return b"".join([data async for data in self.aiter_bytes()])

    async def aclose(self) -> None:
        connection, self.connection = self.connection, None
        if connection is None:
            return
        if self._done and self._reusable:
            self.pool.give_back(self.origin, connection)
        else:
            connection.close()


def _origin(url: str) -> tuple[Origin, str]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise UnsupportedURL(f"unsupported URL {url!r}")
    port = parts.port or (443 if scheme == "https" else 80)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return (scheme, parts.hostname, port), target


def _userinfo(url: str) -> str | None:
    """Basic credentials (base64 of ``user:password``) from the URL's user info, if any."""
    parts = urlsplit(url)
    if parts.username is None:
        return None
    import base64
    from urllib.parse import unquote

    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
    return base64.b64encode(pair.encode("utf-8")).decode("ascii")


def _host_header(origin: Origin) -> str:
    scheme, host, port = origin
    shown = f"[{host}]" if ":" in host else host
    return shown if port == (443 if scheme == "https" else 80) else f"{shown}:{port}"


async def _send_once(pool: Pool, method: str, url: str, headers: dict[str, str], body: bytes,
                     timeouts: tuple[float, float, float]) -> Response:
    connect_timeout, read_timeout, write_timeout = timeouts
    origin, target = _origin(url)
    lines = [f"{method} {target} HTTP/1.1", f"host: {_host_header(origin)}"]
    given = {name.lower() for name in headers}
    credentials = _userinfo(url)
    if credentials is not None and "authorization" not in given:  # as httpx: user:pass@ in the URL
        lines.append(f"authorization: Basic {credentials}")
    for name, value in (("accept", "*/*"), ("accept-encoding", "gzip, deflate"), ("connection", "keep-alive"),
                        ("user-agent", USER_AGENT)):
        if name not in given:
            lines.append(f"{name}: {value}")
    for name, value in headers.items():
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
            raise ValueError(f"header {name!r} holds a line break")
        lines.append(f"{name}: {value}")
    if body or method in ("POST", "PUT", "PATCH"):
        lines.append(f"content-length: {len(body)}")
    head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "strict")
    while True:  # each retry takes a kept-alive connection off the pool, so this ends
        connection, reused = await pool.connect(origin, connect_timeout)
        try:
            connection.writer.write(head + body)
            try:
                async with asyncio.timeout(write_timeout):
                    await connection.writer.drain()
            except TimeoutError:
                raise WriteTimeout(f"sending the request took over {write_timeout:g}s") from None
            try:
                async with asyncio.timeout(read_timeout):
                    status_line = await connection.reader.readuntil(b"\n")
            except TimeoutError:
                raise ReadTimeout(f"no answer within {read_timeout:g}s") from None
        except (asyncio.IncompleteReadError, ConnectionResetError, BrokenPipeError) as exc:
            connection.close()
            if reused and not (isinstance(exc, asyncio.IncompleteReadError) and exc.partial):
                continue  # a kept-alive connection the server had closed meanwhile: once more, fresh
            raise RemoteProtocolError("Server disconnected without sending a response.") from exc
        except (asyncio.LimitOverrunError, OSError, ssl.SSLError) as exc:
            connection.close()
            raise ReadError(str(exc) or type(exc).__name__) from exc
        except BaseException:  # a timeout above, or the request aborted
            connection.close()
            raise
        break
    try:
        async with asyncio.timeout(read_timeout):
            status, response_headers = await _read_head(connection, status_line)
    except TimeoutError:
        connection.close()
        raise ReadTimeout(f"no answer within {read_timeout:g}s") from None
    except BaseException:
        connection.close()
        raise
    return Response(pool, origin, connection, status, response_headers, url, method)


@contextlib.contextmanager
def _reading(incomplete: str, too_long: str) -> Iterator[None]:
    """asyncio's and the socket's read failures under the names callers catch (httpx's)."""
    try:
        yield
    except asyncio.IncompleteReadError:
        raise RemoteProtocolError(incomplete) from None
    except asyncio.LimitOverrunError:
        raise RemoteProtocolError(too_long) from None
    except (OSError, ssl.SSLError) as exc:
        raise ReadError(str(exc) or type(exc).__name__) from exc


async def _read_head(connection: _Connection, status_line: bytes) -> tuple[int, Headers]:
    while True:
        parts = status_line.decode("latin-1").split(None, 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise RemoteProtocolError(f"not an HTTP/1.1 answer: {status_line[:80]!r}")
        status = int(parts[1])
        items: list[tuple[str, str]] = []
        size = len(status_line)
        with _reading("Server disconnected without sending a response.", "the answer's headers are too large"):
            while True:
                line = await connection.reader.readuntil(b"\n")
                size += len(line)
                if size > HEADER_LIMIT:
                    raise RemoteProtocolError("the answer's headers are too large")
                if line in (b"\r\n", b"\n"):
                    break
                name, sep, value = line.decode("latin-1").partition(":")
                if not sep:
                    raise RemoteProtocolError(f"bad header line {line[:80]!r}")
                items.append((name.strip(), value.strip()))
            if status == 100 or 102 <= status < 200:  # interim answers: the real one follows
                status_line = await connection.reader.readuntil(b"\n")
                continue
        return status, Headers(items)


_REDIRECTS = (301, 302, 303, 307, 308)


async def send(pool: Pool, method: str, url: str, headers: dict[str, str], body: bytes,
               timeouts: tuple[float, float, float]) -> Response:
    """Send one request, following redirects as httpx does (303, and 301/302 after a POST,
    become a GET without a body; ``Authorization`` is not sent to another origin); the
    answer's body is left to read."""
    for _ in range(MAX_REDIRECTS + 1):
        response = await _send_once(pool, method, url, headers, body, timeouts)
        location = response.headers.get("location")
        if response.status_code not in _REDIRECTS or not location:
            return response
        await response.aclose()  # its body is not read: the connection is closed, not reused
        target = urljoin(url, location)
        if _origin(target)[0] != _origin(url)[0]:
            headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        if response.status_code == 303 and method != "HEAD" or (
                response.status_code in (301, 302) and method == "POST"):
            method, body = "GET", b""
            headers = {k: v for k, v in headers.items()
                       if k.lower() not in ("content-type", "content-length", "transfer-encoding")}
        url = target
    raise TooManyRedirects(f"more than {MAX_REDIRECTS} redirects")


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Pool] = weakref.WeakKeyDictionary()


def pool(tls: Callable[[], ssl.SSLContext]) -> Pool:
    """The pool of the running event loop (``tls`` makes the https context, see :class:`Pool`)."""
    loop = asyncio.get_running_loop()
    found = _pools.get(loop)
    if found is None or found.closed:
        found = _pools[loop] = Pool(tls)
    return found


async def _exactly(reader: asyncio.StreamReader, size: int) -> AsyncIterator[bytes]:
    """``size`` bytes of a body (a chunk, or a Content-Length body) as they arrive."""
    left = size
    while left:
        data = await reader.read(min(left, 65536))
        if not data:
            raise RemoteProtocolError("peer closed connection without sending complete message body")
        left -= len(data)
        yield data
