"""A long history over ``wolli serve``: ``attach`` with ``historyLimit`` sends only its tail
(never opening on a tool result whose call it leaves out) and ``get_messages`` pages the rest.
The server opens such a session tail-first and answers the attach before the rest is built."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support.long_session import write_long_session
from tests.support.rpc import write_models
from tests.support.serve import in_process_server
from wolli.session.manager import SessionManager


def test_attach_sends_the_tail_and_the_rest_pages_in(served, project: Path, tmp_path: Path):
    saved = tmp_path / "long.jsonl"
    # 50 questions and answers, every second answer a tool call with its result: 125 messages
    write_long_session(saved, str(project), 50, tools_every=2)
    server = served()
    client = server.client()
    data = client.call({"type": "attach", "sessionId": str(saved), "historyLimit": 11})
    tail, start = data["messages"], data["historyStart"]
    # 11 messages back is a tool result: the tail begins one earlier, at its call
    assert (start, len(tail)) == (113, 12)
    assert tail[0]["role"] == "assistant" and tail[0]["content"][1]["type"] == "toolCall"
    assert tail[-2]["content"][0]["text"].startswith("answer 49") and tail[-1]["role"] == "toolResult"

    older = client.call({"type": "get_messages", "end": start})["messages"]
    whole = client.call({"type": "get_messages"})["messages"]
    assert older + tail == whole and len(whole) == 125
    assert client.call({"type": "get_messages", "start": 4, "end": 6})["messages"] == whole[4:6]

    nothing = server.client().call({"type": "attach", "sessionId": data["sessionId"], "historyLimit": 0})
    assert (nothing["messages"], nothing["historyStart"]) == ([], 125)

    # without historyLimit the response carries all of it, as pi's clients expect
    other = server.client().call({"type": "attach", "sessionId": data["sessionId"]})
    assert other["messages"] == whole and "historyStart" not in other


@pytest.mark.parametrize("command", [
    {"type": "attach", "new": True, "historyLimit": -1},
    {"type": "attach", "new": True, "historyLimit": "10"},
    {"type": "attach", "new": True, "historyLimit": True},
])
def test_a_bad_history_limit_is_refused(served, command):
    with pytest.raises(RuntimeError, match="historyLimit"):
        served().client().call(command)


@pytest.mark.parametrize("field, value", [("end", -2), ("start", "1"), ("end", 2.5)])
def test_a_bad_page_is_refused(served, field, value):
    client = served().client()
    client.call({"type": "attach", "new": True})
    with pytest.raises(RuntimeError, match=f"'{field}' must be a whole number"):
        client.call({"type": "get_messages", field: value})


async def _record_with_id(reader: asyncio.StreamReader, wanted: int) -> dict[str, Any]:
    """The next response carrying an ``id`` (events in between skipped); fails on another id."""
    while True:
        record = json.loads(await asyncio.wait_for(reader.readline(), 30))
        if "id" in record:
            assert record["id"] == wanted, record
            return record


async def test_the_server_answers_attach_from_the_tail_and_later_commands_wait(
        project: Path, wolli_home: Path, loopback, tmp_path: Path, monkeypatch):
    """The server opens a long session tail-first: the attach is answered while the older part
    is still to be built, and the client's next command waits for the whole context."""
    write_models(wolli_home, loopback.url + "/v1")
    saved = write_long_session(tmp_path / "long.jsonl", str(project), 100, tools_every=2)  # 250 messages
    gate = threading.Event()
    build_rest = SessionManager.finish_context

    def held(manager: SessionManager) -> None:  # the older part's build, kept waiting
        if manager.context_pending:
            gate.wait(30)
        build_rest(manager)

    monkeypatch.setattr(SessionManager, "finish_context", held)
    server, task = await in_process_server(project)
    writer = None
    try:
        reader, writer = await asyncio.open_unix_connection(str(project / "s.sock"))
        assert json.loads(await reader.readline())["type"] == "server_hello"

        def send(record: dict[str, Any]) -> None:
            writer.write((json.dumps(record) + "\n").encode())

        send({"id": 1, "type": "attach", "sessionId": str(saved), "historyLimit": 11})
        data = (await _record_with_id(reader, 1))["data"]
        live = server.host.get_session(data["sessionId"])
        assert live is not None and live.context_pending  # answered before the rest was built
        tail, start = data["messages"], data["historyStart"]
        assert (start, len(tail), data["state"]["messageCount"]) == (238, 12, 250)

        send({"id": 2, "type": "get_state"})  # a query: it waits for the whole context...
        send({"id": 3, "type": "clear_queue"})  # ...while this one is answered at once
        assert (await _record_with_id(reader, 3))["success"]
        gate.set()
        state = (await _record_with_id(reader, 2))["data"]
        assert state["messageCount"] == 250 and not live.context_pending

        send({"id": 4, "type": "get_messages", "end": start})
        send({"id": 5, "type": "get_messages"})
        older = (await _record_with_id(reader, 4))["data"]["messages"]
        whole = (await _record_with_id(reader, 5))["data"]["messages"]
        assert older + tail == whole and len(whole) == 250
    finally:
        gate.set()
        if writer is not None:
            writer.close()
        server.stop()
        assert await asyncio.wait_for(task, 30) == 0


def test_paging_is_right_when_the_index_miscounts_the_older_part(served, project: Path, tmp_path: Path):
    """A tool call far back left without its result (a hand-edited file) gets one filled in
    when the context is built, which the index's count before the tail cannot know: the
    attach's ``historyStart`` is one short, and paging with it is corrected."""
    saved = write_long_session(tmp_path / "long.jsonl", str(project), 100, tools_every=2)
    lines = saved.read_text().splitlines()
    results = [i for i, line in enumerate(lines) if '"toolResult"' in line]
    del lines[results[3]]  # the fourth call's result, far above the tail
    following = json.loads(lines[results[3]])
    following["parentId"] = json.loads(lines[results[3] - 1])["id"]
    lines[results[3]] = json.dumps(following)
    saved.write_text("\n".join(lines) + "\n")

    client = served().client()
    data = client.call({"type": "attach", "sessionId": str(saved), "historyLimit": 11})
    tail, start = data["messages"], data["historyStart"]
    older = client.call({"type": "get_messages", "end": start})["messages"]
    whole = client.call({"type": "get_messages"})["messages"]
    assert len(whole) == 250  # 249 messages in the file, one interrupted result filled in
    assert start == 237 and older + tail == whole
    assert sum(1 for m in whole if m["role"] == "toolResult" and m.get("isError")) == 1
