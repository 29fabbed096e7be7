"""Fuzzing what providers send: damaged versions of real recorded streams over real HTTP.

Each example takes a recorded stream of one provider API (``tests/fixtures/wire``), damages
it the ways networks and proxies do (cut at any byte, events dropped or repeated, a byte of
JSON changed, junk lines, another event's data spliced in) and serves it from a loopback
server. Property: the stream always ends with exactly one terminal event and a well-formed
message (``check_event_grammar``; its closing events may make good a lost delta), and an ``error`` ending carries a message saying what went
wrong. Never an exception out of the stream, never a hang.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.loopback import LoopbackServer, sse_reply
from tests.support.stream_checks import check_event_grammar
from tests.support.wire import load_body, recordings
from wolli.ai.stream import stream
from wolli.ai.types import Context, Model, StreamOptions, UserMessage

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# folder of recordings -> (api, provider, path appended to the server url for base_url)
APIS = {
    "anthropic": ("anthropic-messages", "anthropic", ""),
    "openai_chat": ("openai-completions", "openai", "/v1"),
    "openai_responses": ("openai-responses", "openai", "/v1"),
    "gemini": ("google-generative-ai", "google", ""),
}
BODIES = {folder: [load_body(p) for p in recordings(folder)] for folder in APIS}


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer(seed=7) as loopback:
        yield loopback


def split_events(body: bytes) -> tuple[list[bytes], bytes]:
    separator = b"\r\n\r\n" if b"\r\n\r\n" in body else b"\n\n"
    return [e for e in body.split(separator) if e.strip()], separator


@st.composite
def damaged(draw: st.DrawFn, folder: str) -> bytes:
    body = draw(st.sampled_from(BODIES[folder]))
    events, separator = split_events(body)
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["drop", "repeat", "flip", "junk", "splice"]))
        if not events:
            break
        i = draw(st.integers(0, len(events) - 1))
        if kind == "drop":
            del events[i]
        elif kind == "repeat":
            events.insert(i, events[i])
        elif kind == "flip":
            event = bytearray(events[i])
            at = draw(st.integers(0, len(event) - 1))
            event[at] = draw(st.sampled_from(b'{}[]":,0a\\\n'))
            events[i] = bytes(event)
        elif kind == "junk":
            events.insert(i, draw(st.sampled_from([b"data: ", b"data: {", b": keep-alive", b"event: x", b"data: null",
                                                   b"data: []", b"data: 42", b'data: {"type": 7}'])))
        else:
            j = draw(st.integers(0, len(events) - 1))
            events[i] = events[i].split(b"data:")[0] + b"data:" + events[j].partition(b"data:")[2]
    out = separator.join(events) + separator
    if draw(st.booleans()):
        out = out[: draw(st.integers(0, len(out)))]  # the connection drops mid-stream
    return out


async def play(server: LoopbackServer, folder: str, body: bytes) -> tuple[list[Any], Any]:
    api, provider, suffix = APIS[folder]
    model = Model(id="m", api=api, provider=provider, base_url=server.url + suffix, reasoning=True,
                  input=["text", "image"])
    server.push(sse_reply(body))
    s = stream(model, Context(messages=[UserMessage(content="hi")]),
               StreamOptions(api_key="k", max_retries=0, retry_base_delay=0.01))
    events = [event async for event in s]
    return events, await s.result()


@pytest.mark.parametrize("folder", list(APIS))
def test_a_damaged_stream_ends_in_one_terminal_event_and_a_well_formed_message(server, folder) -> None:
    assert BODIES[folder], f"no recordings for {folder}"

    @FUZZ
    @given(damaged(folder))
    def check(body: bytes) -> None:
        events, message = asyncio.run(asyncio.wait_for(play(server, folder, body), 20))
        final = check_event_grammar(events, message, deltas_add_up=False)
        if final.stop_reason == "error":
            assert final.error_message and final.error_message.strip()
        assert final.stop_reason in ("stop", "length", "toolUse", "error", "aborted")

    check()
