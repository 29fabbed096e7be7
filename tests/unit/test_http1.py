"""The model requests' HTTP/1.1 client (``wolli.ai.http1``) against a real socket server
writing the raw answers an HTTP server may send: each body framing, gzip, redirects, a
kept-alive connection the server closed meanwhile, credentials in the URL, and a proxy
setting that hands the request to httpx."""

from __future__ import annotations

import asyncio
import gzip
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from wolli.ai import http1
from wolli.ai.http import open_stream, sse_events
from wolli.ai.types import StreamOptions

Answer = Callable[[bytes], "bytes | Paced | None"]  # the raw request in, the raw answer out (None: close)


class Paced:
    """An answer written in pieces ``gap`` seconds apart, as a model streams tokens."""

    def __init__(self, head: bytes, pieces: list[bytes], gap: float) -> None:
        self.head, self.pieces, self.gap = head, pieces, gap


class RawServer:
    """Answers each request on a connection with the next scripted function, keeping the
    connection open between them unless a function returns None (or asks to close)."""

    def __init__(self, answers: list[Answer]) -> None:
        self.answers = answers
        self.requests: list[bytes] = []
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        with conn:
            while self.answers:
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    line = reader.readline()
                    if not line:
                        return
                    head += line
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                request = head + reader.read(length)
                self.requests.append(request)
                answer = self.answers.pop(0)(request)
                if answer is None:
                    return
                if isinstance(answer, Paced):
                    try:
                        conn.sendall(answer.head)
                        for piece in answer.pieces:
                            time.sleep(answer.gap)
                            conn.sendall(piece)
                    except OSError:  # the client stopped reading (an abort)
                        return
                    continue
                conn.sendall(answer)
                if b"connection: close" in answer.lower():
                    return

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., RawServer]]:
    servers: list[RawServer] = []

    def start(*answers: Answer) -> RawServer:
        servers.append(RawServer(list(answers)))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def sse(text: str) -> bytes:
    return f"data: {text}\n\n".encode()


def fixed(body: bytes, *extra: str, status: str = "200 OK") -> Answer:
    head = "\r\n".join([f"HTTP/1.1 {status}", f"content-length: {len(body)}", *extra])
    return lambda _request: head.encode() + b"\r\n\r\n" + body


def chunked(*pieces: bytes) -> Answer:
    body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"
    return lambda _request: b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + body


async def events(url: str, **options: object) -> list[str]:
    async with open_stream(url + "/v1/chat", {"authorization": "Bearer k"}, {"q": 1},
                           StreamOptions(max_retries=0, **options)) as response:  # type: ignore[arg-type]
        return [event.data async for event in sse_events(response)]


def test_each_body_framing_and_gzip_reads_the_same_events(serve):
    server = serve(fixed(sse("a") + sse("b")), chunked(sse("a"), sse("b")),
                   fixed(gzip.compress(sse("a") + sse("b")), "content-encoding: gzip"),
                   lambda _r: b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n" + sse("a") + sse("b"))

    async def four() -> list[list[str]]:
        return [await events(server.url) for _ in range(4)]

    assert asyncio.run(four()) == [["a", "b"]] * 4
    assert server.connections == 1  # kept alive until the server said close
    first = server.requests[0].decode()
    assert first.startswith("POST /v1/chat HTTP/1.1\r\n")
    assert "\r\nauthorization: Bearer k\r\n" in first and first.endswith('{"q": 1}')
    assert f"\r\nhost: {server.url.removeprefix('http://')}\r\n" in first


def test_a_kept_alive_connection_the_server_closed_is_replaced_once(serve):
    server = serve(fixed(sse("one")), lambda _request: None, fixed(sse("two")))

    async def twice() -> list[list[str]]:
        return [await events(server.url), await events(server.url)]

    assert asyncio.run(twice()) == [["one"], ["two"]]
    assert server.connections == 2 and len(server.requests) == 3


def test_redirects_are_followed_as_httpx_follows_them(serve):
    target = serve(fixed(sse("moved")), fixed(sse("seen")))
    server = serve(fixed(b"", f"location: {target.url}/v2/chat", status="307 Temporary Redirect"),
                   fixed(b"", f"location: {target.url}/other", status="303 See Other"))

    async def both() -> list[list[str]]:
        return [await events(server.url), await events(server.url)]

    assert asyncio.run(both()) == [["moved"], ["seen"]]
    kept, changed = (request.decode() for request in target.requests)
    assert kept.startswith("POST /v2/chat ") and kept.endswith('{"q": 1}')
    assert changed.startswith("GET /other ") and "content-length" not in changed.lower()


def test_credentials_in_the_url_become_basic_auth(serve):
    server = serve(fixed(sse("ok")))
    url = server.url.replace("http://", "http://me:s%40cret@")

    async def one() -> list[str]:
        async with open_stream(url, {}, {}, StreamOptions(max_retries=0)) as response:
            return [event.data async for event in sse_events(response)]

    assert asyncio.run(one()) == ["ok"]
    assert b"\r\nauthorization: Basic bWU6c0BjcmV0\r\n" in server.requests[0]  # me:s@cret


def test_a_server_that_closes_without_answering_is_a_protocol_error(serve):
    server = serve(lambda _request: None)

    async def send() -> None:
        await http1.send(http1.Pool(lambda: None), "POST", server.url, {}, b"x", (5, 5, 5))  # type: ignore[arg-type, return-value]

    with pytest.raises(http1.RemoteProtocolError, match="without sending a response"):
        asyncio.run(send())


def test_a_refused_connection_is_a_connect_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    async def send() -> None:
        await http1.send(http1.Pool(lambda: None), "GET", f"http://127.0.0.1:{port}/", {}, b"", (5, 5, 5))  # type: ignore[arg-type, return-value]

    with pytest.raises(http1.ConnectError):
        asyncio.run(send())


def test_with_a_proxy_configured_the_request_goes_through_httpx(serve, monkeypatch):
    # the "proxy" here is the server itself: httpx sends it the absolute URL
    server = serve(fixed(sse("via proxy")))
    monkeypatch.setenv("HTTP_PROXY", server.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    assert asyncio.run(events("http://model.invalid")) == ["via proxy"]
    assert server.requests[0].startswith(b"POST http://model.invalid/v1/chat HTTP/1.1\r\n")


def paced_chunks(count: int, gap: float) -> Answer:
    pieces = [b"%x\r\n%s\r\n" % (len(sse(str(n))), sse(str(n))) for n in range(count)] + [b"0\r\n\r\n"]
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    return lambda _request: Paced(head, pieces, gap)


async def arrivals(url: str, read_interval: float) -> list[tuple[float, str]]:
    """Each event with the loop time its consumer got it."""
    loop = asyncio.get_running_loop()
    async with open_stream(url + "/v1/chat", {}, {}, StreamOptions(max_retries=0, read_interval=read_interval)) as response:
        return [(loop.time(), event.data) async for event in sse_events(response)]


def wake_ups(times: list[float]) -> int:
    """How many separate moments the events were handled in (a batch is handled at once)."""
    return 1 + sum(1 for before, after in zip(times, times[1:], strict=False) if after - before > 0.003)


def test_a_paced_answer_is_read_a_frame_at_a_time_and_nothing_is_lost(serve):
    # 40 events 10 ms apart, read at most every 100 ms: ~5 batches instead of 40 wake-ups.
    server = serve(paced_chunks(40, 0.01), fixed(sse("after")))

    async def both() -> tuple[list[tuple[float, str]], list[str]]:
        return await arrivals(server.url, 0.1), await events(server.url)

    paced, after = asyncio.run(both())
    assert [data for _, data in paced] == [str(n) for n in range(40)]
    assert wake_ups([at for at, _ in paced]) <= 10
    # the connection went back to the pool reading again: the next answer came on it
    assert after == ["after"] and server.connections == 1


def test_what_has_arrived_is_never_held_back_by_the_read_interval(serve):
    server = serve(chunked(*(sse(str(n)) for n in range(40))))
    got = asyncio.run(arrivals(server.url, 5.0))
    assert [data for _, data in got] == [str(n) for n in range(40)]
    assert got[-1][0] - got[0][0] < 1.0  # one burst, read at once, not after the 5 s interval


def test_an_abort_during_the_pause_ends_the_read_at_once(serve):
    server = serve(paced_chunks(100, 0.01))

    async def abort_early() -> tuple[list[str], float]:
        seen: list[str] = []
        loop = asyncio.get_running_loop()

        async def read() -> None:
            async with open_stream(server.url, {}, {}, StreamOptions(max_retries=0, read_interval=5.0)) as response:
                async for event in sse_events(response):
                    seen.append(event.data)

        task = asyncio.create_task(read())
        while not seen:  # the first event is read at once; the next read waits 5 s
            await asyncio.sleep(0.005)
        started = loop.time()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return seen, loop.time() - started

    seen, took = asyncio.run(abort_early())
    assert seen == ["0"] and took < 1.0
