"""SSE decoding and the shared HTTP plumbing, against the real loopback server."""

from __future__ import annotations

import asyncio
import email.utils
import json
import re
import socket
import time

import httpx
import pytest

from tests.support.loopback import Reply, json_reply, sse_reply
from tests.support.waiting import wait_until
from tests.support.wire import WIRE_DIR, load_error
from wolli.ai.abort import AbortController, AbortError
from wolli.ai.http import (
    ProviderConnectionError,
    ProviderHTTPError,
    extract_error_message,
    merge_headers,
    open_stream,
    retry_delay_hint,
    should_retry,
    sse_events,
)
from wolli.ai.sse import SSEDecoder, SSEEvent
from wolli.ai.types import StreamOptions

FAST = {"retry_base_delay": 0.001}


async def read_events(loopback, body: bytes | str, **reply) -> list[SSEEvent]:
    loopback.push(sse_reply(body, **reply))
    async with open_stream(loopback.url + "/v1/stream", {}, {"q": 1}, StreamOptions()) as response:
        return [event async for event in sse_events(response)]


# ---------------------------------------------------------------------------- SSE


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
async def test_sse_line_endings(loopback, eol):
    body = eol.join(
        ["event: first", "data: one", "", "data: two", "data: lines", "", ": a comment", "data:three", "", ""]
    )
    # tiny chunks split every line ending (even \r from \n) across network writes
    events = await read_events(loopback, body, chunk_sizes=(1, 3))
    assert [(e.event, e.data) for e in events] == [("first", "one"), ("message", "two\nlines"), ("message", "three")]


async def test_sse_fields_and_edge_cases(loopback):
    body = (
        "\ufeffid: 7\nretry: 1500\ndata: with id\n\n"
        "data: id persists\n\n"
        "data:  two spaces keep one\n\n"
        "data\n\n"  # a field name alone: empty data, still dispatched
        "event: lonely\n\n"  # no data line: discarded
        "retry: soon\nid: a\x00b\ndata: bad retry and id ignored\n\n"
        "event: ping\n: comment only\ndata: {\"x\": 1}\n\n"
        "data: unterminated at EOF"
    )
    events = await read_events(loopback, body)
    assert [(e.event, e.data, e.id, e.retry) for e in events] == [
        ("message", "with id", "7", 1500),
        ("message", "id persists", "7", None),
        ("message", " two spaces keep one", "7", None),
        ("message", "", "7", None),
        ("message", "bad retry and id ignored", "7", None),
        ("ping", '{"x": 1}', "7", None),
    ]


def test_sse_decoder_direct():
    decoder = SSEDecoder()
    assert decoder.feed_line("event: update") is None
    assert decoder.feed_line("data: a") is None
    assert decoder.feed_line("data: b") is None
    assert decoder.feed_line("") == SSEEvent("update", "a\nb")
    assert decoder.feed_line("") is None  # blank lines alone dispatch nothing
    assert decoder.feed_line("event: x") is None
    assert decoder.feed_line("") is None  # event without data
    decoder.feed_line("data: y")
    assert decoder.feed_line("").event == "message"  # the discarded event name did not leak


async def test_sse_stream_cut_mid_body_raises_a_connection_error(loopback):
    body = "data: one\n\ndata: two\n\n" + "data: " + "x" * 500 + "\n\n"
    loopback.push(Reply(body=body.encode(), cut_after=40))
    seen: list[str] = []
    with pytest.raises(ProviderConnectionError, match="Connection lost mid-stream"):
        async with open_stream(loopback.url, {}, {}, StreamOptions()) as response:
            async for event in sse_events(response):
                seen.append(event.data)
    assert seen == ["one", "two"]  # what arrived before the cut was delivered


# ---------------------------------------------------------------------------- error bodies

EXPECTED_MESSAGES = {
    "anthropic_400_input_plus_max_tokens_exceed_context.json": "input length and `max_tokens` exceed context limit",
    "anthropic_400_invalid_request_error.json": "This model does not support effort level 'xhigh'.",
    "anthropic_400_prompt_too_long.json": "prompt is too long: 219898 tokens > 200000 maximum",
    "anthropic_404_not_found.json": "model: claude-sonet-4-5",
    "anthropic_429_rate_limit.json": "This request would exceed the rate limit",
    "anthropic_529_overloaded.json": "Overloaded",
    "gemini_400_input_token_count.json": "The input token count (132478) exceeds",
    "gemini_400_input_token_count_errors_array.json": "The input token count (1200293) exceeds",
    "gemini_404_model_not_found.json": "models/gemini-3.6-flahs is not found",
    "gemini_429_resource_exhausted_retryinfo.json": "You exceeded your current quota",
    "groq_400_tool_use_failed.json": "Tool call validation failed",
    "openai_400_context_length_exceeded.json": "This model's maximum context length is 4097 tokens.",
    "openai_429_rate_limit_exceeded.json": "Rate limit reached for 10KTPM-200RPM",
    "openai_chat_404_model_not_found.json": "The model `gpt-5.2-proo` does not exist",
    "openai_responses_400_model_not_found.json": "The requested model 'gpt-5.2-proo' does not exist.",
    "openai_responses_stream_error_context_length_exceeded.json": "Your input exceeds the context window",
}


def error_bodies() -> list[str]:
    return sorted(p.name for p in (WIRE_DIR / "errors").glob("*.json") if ".response_headers." not in p.name)


def status_of(name: str) -> int:
    match = re.search(r"_(\d{3})_", name)
    return int(match.group(1)) if match else 400


@pytest.mark.parametrize("name", error_bodies())
def test_extract_error_message_from_every_recorded_body(name):
    body = load_error(name).decode("utf-8")
    status = status_of(name)
    message = extract_error_message(status, body)
    assert message.startswith(f"{status} ")
    assert "{" not in message[:20]  # the human message, not the raw JSON
    expected = EXPECTED_MESSAGES.get(name)
    assert expected is not None, f"new error recording {name}: add its expected message"
    assert expected in message


def test_extract_error_message_other_shapes():
    # An HTML page (a proxy's, a load balancer's) is reduced to its status and title.
    assert extract_error_message(502, "<html>Bad Gateway</html>") == (
        "502 Bad Gateway (the server answered with an HTML page, not the provider's API)")
    page = "<!DOCTYPE html>\n<html><head><title>Cloudflare &amp; friends: origin down</title></head>" \
           "<body><h1>Error</h1><script>var x = 1;</script></body></html>"
    assert extract_error_message(500, page) == (
        '500 Internal Server Error (the server answered with an HTML page: "Cloudflare & friends: origin down")')
    assert extract_error_message(503, "") == "503 Service Unavailable"
    assert extract_error_message(400, '{"error": "plain string"}') == "400 plain string"
    assert extract_error_message(400, '{"message": "top level"}') == "400 top level"
    assert extract_error_message(422, '{"detail": "bad field"}') == "422 bad field"
    assert extract_error_message(400, '[{"error": {"message": "in an array"}}]') == "400 in an array"
    assert extract_error_message(400, '{"error": {"errors": [{"message": "nested"}]}}') == "400 nested"
    long = "x" * 2000
    assert extract_error_message(500, long) == "500 " + "x" * 500


# ---------------------------------------------------------------------------- retry hints


def test_retry_delay_hint_sources():
    def hint(headers: dict[str, str], body: str = "") -> float | None:
        return retry_delay_hint(httpx.Headers(headers), body)

    assert hint({"retry-after-ms": "1500"}) == 1.5
    assert hint({"retry-after-ms": "250", "retry-after": "9"}) == 0.25  # ms wins
    assert hint({"retry-after": "7"}) == 7.0
    assert hint({"retry-after": "0.5"}) == 0.5
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 27 <= hint({"retry-after": future}) <= 31
    past = email.utils.formatdate(time.time() - 300, usegmt=True)
    assert hint({"retry-after": past}) == 0.0
    assert hint({"retry-after": "whenever you like"}) is None  # garbage: use backoff
    assert hint({"retry-after-ms": "soon"}) is None
    gemini = load_error("gemini_429_resource_exhausted_retryinfo.json").decode()
    assert hint({}, gemini) == pytest.approx(34.4)
    assert hint({}, json.dumps([json.loads(gemini)])) == pytest.approx(34.4)
    assert hint({}, '{"error": {"details": [{"@type": "x.RetryInfo", "retryDelay": "900ms"}]}}') == 0.9
    assert hint({}, "RetryInfo but not json") is None
    assert hint({}) is None


def test_should_retry():
    none = httpx.Headers()
    assert all(should_retry(s, none) for s in (408, 409, 429, 500, 502, 503, 504, 529, 599))
    assert not any(should_retry(s, none) for s in (400, 401, 403, 404, 422))
    assert should_retry(400, httpx.Headers({"x-should-retry": "true"}))
    assert not should_retry(503, httpx.Headers({"x-should-retry": "false"}))


def test_merge_headers():
    assert merge_headers({"a": "1"}, None, {"a": "2", "b": "3"}) == {"a": "2", "b": "3"}


# ---------------------------------------------------------------------------- open_stream


async def test_open_stream_retries_a_429_then_streams(loopback):
    loopback.push(
        json_reply(429, {"error": {"message": "slow down"}}, headers={"retry-after-ms": "20"}),
        sse_reply("data: ok\n\n"),
    )
    retries: list[tuple[int, float, str]] = []
    options = StreamOptions(max_retries=2)
    async with open_stream(
        loopback.url + "/v1/messages", {"x-api-key": "k"}, {"model": "m", "é": "ü"}, options,
        on_retry=lambda *a: retries.append(a),
    ) as response:
        events = [e.data async for e in sse_events(response)]
    assert events == ["ok"]
    assert retries == [(1, 0.02, "429 slow down")]
    assert len(loopback.requests) == 2
    request = loopback.requests[1]
    assert request.method == "POST" and request.path == "/v1/messages"
    assert request.json == {"model": "m", "é": "ü"}
    assert request.headers["x-api-key"] == "k"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["accept"] == "text/event-stream"


async def test_open_stream_retries_overloaded_with_backoff(loopback):
    recorded = json.loads(load_error("anthropic_529_overloaded.response_headers.json"))
    headers = {k: v for k, v in recorded.items() if not k.startswith("_") and k not in ("content-length", "connection")}
    loopback.push(json_reply(529, recorded["_body_then"], headers=headers), sse_reply("data: ok\n\n"))
    retries: list[tuple[int, float, str]] = []
    async with open_stream(
        loopback.url, {}, {}, StreamOptions(**FAST), on_retry=lambda *a: retries.append(a)
    ) as response:
        assert [e.data async for e in sse_events(response)] == ["ok"]
    assert len(retries) == 1 and retries[0][2] == "529 Overloaded"
    assert retries[0][1] < 0.01  # exponential backoff from the base delay (no server hint)


async def test_open_stream_does_not_retry_client_errors(loopback):
    loopback.push(json_reply(400, load_error("anthropic_400_prompt_too_long.json")))
    with pytest.raises(ProviderHTTPError) as info:
        async with open_stream(loopback.url, {}, {}, StreamOptions(**FAST)):
            pass
    assert info.value.status == 400
    assert str(info.value) == "400 prompt is too long: 219898 tokens > 200000 maximum"
    assert "request_id" in info.value.body
    assert len(loopback.requests) == 1


async def test_open_stream_gives_up_after_max_retries(loopback):
    loopback.push(*[json_reply(500, {"error": {"message": "internal"}}) for _ in range(3)])
    with pytest.raises(ProviderHTTPError, match="500 internal"):
        async with open_stream(loopback.url, {}, {}, StreamOptions(max_retries=1, **FAST)):
            pass
    assert len(loopback.requests) == 2


async def test_open_stream_refuses_a_retry_wait_longer_than_allowed(loopback):
    loopback.push(json_reply(429, {"error": {"message": "quota"}}, headers={"retry-after": "120"}))
    began = time.monotonic()
    with pytest.raises(ProviderHTTPError) as info:
        async with open_stream(loopback.url, {}, {}, StreamOptions(max_retry_delay=60)):
            pass
    assert time.monotonic() - began < 5
    assert "429 quota" in str(info.value) and "120s" in str(info.value) and "60s" in str(info.value)
    assert len(loopback.requests) == 1


async def test_open_stream_connection_refused_gives_up(loopback):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    retries: list[tuple[int, float, str]] = []
    with pytest.raises(ProviderConnectionError, match="Connection failed"):
        async with open_stream(
            f"http://127.0.0.1:{port}/", {}, {}, StreamOptions(max_retries=2, **FAST),
            on_retry=lambda *a: retries.append(a),
        ):
            pass
    assert [r[0] for r in retries] == [1, 2]
    assert all("Connection failed" in r[2] for r in retries)


async def test_abort_during_a_retry_wait(loopback):
    loopback.push(json_reply(429, {"error": {"message": "wait"}}, headers={"retry-after": "30"}))
    controller = AbortController()
    retries: list[tuple[int, float, str]] = []

    async def attempt() -> None:
        async with open_stream(
            loopback.url, {}, {}, StreamOptions(signal=controller.signal), on_retry=lambda *a: retries.append(a)
        ):
            pass

    task = asyncio.create_task(attempt())
    await wait_until(lambda: bool(retries), 5, "the first attempt's 429")  # now it waits to try again
    began = time.monotonic()
    controller.abort("stop waiting")
    with pytest.raises(AbortError, match="stop waiting"):
        await asyncio.wait_for(task, 5)
    assert time.monotonic() - began < 1
    assert len(loopback.requests) == 1


async def test_aborted_signal_sends_nothing(loopback):
    controller = AbortController()
    controller.abort()
    with pytest.raises(AbortError):
        async with open_stream(loopback.url, {}, {}, StreamOptions(signal=controller.signal)):
            pass
    assert loopback.requests == []


async def test_failures_carry_their_kind_and_the_server_wait(loopback):
    loopback.push(json_reply(429, {"error": {"message": "slow down"}}, headers={"retry-after-ms": "1500"}))
    with pytest.raises(ProviderHTTPError) as info:
        async with open_stream(loopback.url, {}, {}, StreamOptions(max_retries=0)):
            pass
    assert (info.value.kind, info.value.retry_after_ms) == ("rate_limited", 1500)


async def test_an_unreachable_server_is_named_with_what_to_check():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    with pytest.raises(ProviderConnectionError) as info:
        async with open_stream(url, {}, {}, StreamOptions(max_retries=0)):
            pass
    assert url in str(info.value) and "baseUrl" in str(info.value) and info.value.kind == "connection"


def test_preload_loads_the_ca_bundle_only_for_https(tmp_path):
    """A local model on plain http never needs the CA bundle: preload(tls=False) leaves it
    unloaded (the TUI passes that for an http:// base URL); preload() loads it."""
    import subprocess
    import sys

    probe = (
        "import wolli.ai.http as h\n"
        "h.preload(tls=False); print(h._tls is None)\n"
        "h.preload(); print(h._tls is None)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["True", "False"]
