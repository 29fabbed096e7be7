"""Resuming a long session: its last messages on screen first, the whole context after.

The full context of a resumed session is built in a worker thread once its last messages
are drawn. Here that build (the session's entries built in one pass, ``EntryStore.keep_all``
with the whole branch) is held at a gate, so the tests can look at the app in between: the last answer is on screen, the footer shows how
full the context is but not the totals it cannot know yet, and a prompt typed then waits
and is sent, once the gate opens, with the whole conversation (to a real HTTP server on
127.0.0.1 speaking the OpenAI chat wire format).
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from tests.support.long_session import write_long_session
from tests.support.openai_chat import text_answer, write_models_json
from tests.support.waiting import wait_until
from wolli.modes.tui.widgets.assistant_message import AssistantMessageView
from wolli.session.entry_store import EntryStore

from .helpers import running, type_and_send

PAIRS = 400
TOOL_RESULTS = PAIRS // 7  # every 7th answer in the file calls a tool


@pytest.fixture
def gate(monkeypatch):
    """Holds the building of a long context until ``gate.open.set()``; ``gate.held`` is set
    once a build has started and waits. (Before the tail was read first, the whole context
    was built before anything was drawn: the last answer never showed with the gate shut.)"""

    class Gate:
        open = threading.Event()
        held = threading.Event()

    original = EntryStore.keep_all

    def gated(store: EntryStore, ids: list[str]) -> list:
        if len(ids) > 100:
            Gate.held.set()
            Gate.open.wait(30)
        return original(store, ids)

    monkeypatch.setattr(EntryStore, "keep_all", gated)
    yield Gate
    Gate.open.set()  # never leave the worker thread waiting


def last_answer(app) -> str:
    views = app.query(AssistantMessageView)
    return views.last().markdown_text if views else ""


async def test_the_last_answer_is_drawn_before_the_context_is_built(make_app, project, wolli_home, loopback, gate):
    write_models_json(wolli_home, loopback.url + "/v1")
    path = write_long_session(project.parent / "long.jsonl", str(project), PAIRS)
    app = make_app(session=str(path), model="local/local-model")
    async with running(app, (100, 30)) as pilot:
        session = app.controller.session
        await wait_until(lambda: "LAST-ANSWER" in last_answer(app), 10, "the last answer on screen")
        await asyncio.to_thread(gate.held.wait, 10)
        assert gate.held.is_set() and session.context_pending
        assert len(session.messages) < 40  # the tail, not the 857 messages of the file
        footer = str(app.footer.render())
        assert "% context" in footer and "↑" not in footer  # the totals need every answer
        transcript = app.transcript
        assert len(transcript.items) < 40

        gate.open.set()
        await wait_until(lambda: not session.context_pending, 10, "the whole context")
        assert len(session.messages) == 2 * PAIRS + TOOL_RESULTS
        await wait_until(lambda: "↑" in str(app.footer.render()), 5, "the totals in the footer")
        # The older rows are above the window, built when scrolled to.
        await wait_until(lambda: len(transcript.items) > 2 * PAIRS, 5, "the older rows")
        assert transcript.hidden_count == len(transcript.items) - len(transcript.mounted)
        assert "LAST-ANSWER" in last_answer(app)
        transcript.to_top()
        await pilot.pause()
        assert transcript.hidden_count < len(transcript.items) - 30


async def test_a_prompt_typed_during_the_build_is_sent_with_the_whole_history(
        make_app, project, wolli_home, loopback, gate):
    write_models_json(wolli_home, loopback.url + "/v1")
    path = write_long_session(project.parent / "long.jsonl", str(project), PAIRS)
    loopback.push(text_answer("the next answer"))
    app = make_app(session=str(path), model="local/local-model")
    async with running(app, (100, 30)) as pilot:
        await wait_until(lambda: "LAST-ANSWER" in last_answer(app), 10, "the last answer on screen")
        await asyncio.to_thread(gate.held.wait, 10)
        await type_and_send(pilot, "one more")
        await pilot.pause()
        assert not loopback.requests  # it waits for the context
        gate.open.set()
        await asyncio.to_thread(loopback.wait_for_requests, 1)
        messages = loopback.requests[0].json["messages"]
        users = [m for m in messages if m["role"] == "user"]
        assert len(users) == PAIRS + 1
        assert "question 0" in str(users[0]["content"]) and "one more" in str(users[-1]["content"])
        assert sum(1 for m in messages if m["role"] == "assistant") == PAIRS
        assert sum(1 for m in messages if m["role"] == "tool") == TOOL_RESULTS
        await wait_until(lambda: "the next answer" in last_answer(app), 10, "the answer")
