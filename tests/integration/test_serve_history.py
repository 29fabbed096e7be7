"""A long history over ``wolli serve``: ``attach`` with ``historyLimit`` sends only its tail
(never opening on a tool result whose call it leaves out) and ``get_messages`` pages the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.long_session import write_long_session


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
