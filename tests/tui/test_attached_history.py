"""The full-screen app attached to ``wolli serve`` (Pilot, a real server process): a long
history's tail is drawn from the attach response and the older part is fetched a page at a
time, above it, as scrolling reaches it."""

from __future__ import annotations

from pathlib import Path

from tests.support.long_session import write_long_session
from tests.support.rpc import write_models
from tests.support.serve import ServeProcess
from tests.support.waiting import wait_until
from wolli.agent.events import to_jsonable
from wolli.modes.server.ahead import HISTORY_TAIL, attach_command, send_ahead
from wolli.modes.server.attach_tui import HISTORY_PAGE
from wolli.modes.server.link import ServerLink
from wolli.modes.tui.widgets.assistant_message import AssistantMessageView
from wolli.modes.tui.widgets.user_message import UserMessageView

from .helpers import attached_app


def recording_connect(server: ServeProcess, sent: list[dict]):
    """The app's connection to ``server``, every command it sends appended to ``sent``."""
    async def connect(on_record):
        link = await ServerLink.unix(server.socket_path, on_record)
        call = link.call

        async def recorded(command, *args):
            sent.append(dict(command))
            return await call(command, *args)

        link.call = recorded  # type: ignore[method-assign]
        return link

    return connect


async def page_to_the_top(pilot, transcript) -> None:
    """Ctrl+Home until no row is hidden above, each press waited on (a page may be fetched)."""
    while transcript.hidden_count:
        before = transcript.hidden_count
        await pilot.press("ctrl+home")
        await wait_until(lambda before=before: transcript.hidden_count < before, 20, "earlier rows")


def last_answer(app) -> str:
    """The text of the last answer row ("" before there is one)."""
    views = app.query(AssistantMessageView)
    return views.last().markdown_text if views else ""


async def test_the_tail_is_drawn_first_and_the_rest_is_fetched_as_scrolling_reaches_it(
        project: Path, wolli_home: Path, loopback, tmp_path: Path):
    write_models(wolli_home, loopback.url + "/v1")
    saved = tmp_path / "long.jsonl"
    # 900 messages (every answer calls a tool: question, call, result), 900 transcript rows;
    # two of the pages asked for begin at a result, which waits for the page with its call
    write_long_session(saved, str(project), 300, tools_every=1)
    server = ServeProcess(project, project / "s.sock", "--model", "local/local-model")
    try:
        server.wait_listening()
        sent: list[dict] = []
        connect = recording_connect(server, sent)
        app = attached_app(server.socket_path, str(saved), project, wolli_home / "agents" / "default", connect=connect)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(lambda: app.controller.session is not None and app.controller.session.messages,
                             20, "the tail")
            attach = next(c for c in sent if c["type"] == "attach")
            assert attach["historyLimit"] == HISTORY_TAIL  # only the tail came with it
            session = app.controller.session
            tail = len(session.messages)
            assert HISTORY_TAIL <= tail <= HISTORY_TAIL + 1
            # the rows are mounted (their blocks filled) a loop turn or two after the messages came
            await wait_until(lambda: last_answer(app).startswith("answer 299"), 20, "the last answer drawn")
            transcript = app.transcript
            assert transcript.unfetched == 900 - tail and transcript.hidden_count > 800
            assert f"{transcript.hidden_count} earlier messages" in str(transcript.more.render())
            await pilot.pause()
            assert not [c for c in sent if c["type"] == "get_messages"]  # nothing fetched before it is wanted

            # Ctrl+Home pages up to the very first question, fetching pages on the way
            await page_to_the_top(pilot, transcript)
            assert app.query(UserMessageView).first().text == "question 0"
            pages = [c for c in sent if c["type"] == "get_messages"]
            assert len(pages) == 5 and all(0 < c["end"] - c["start"] <= HISTORY_PAGE for c in pages)
            assert pages[-1]["start"] == 0
            assert [b["end"] - a["start"] for a, b in zip(pages, pages[1:], strict=False)] == [0, 1, 0, 1]  # results held back
            # every message once, in order: the same list the server holds
            whole = server.client().call({"type": "attach", "sessionId": session.session_id})["messages"]
            assert [to_jsonable(m) for m in session.messages] == whole and len(whole) == 900
            assert len(transcript.items) == 901  # and the "Attached to session" notice
    finally:
        server.stop()


async def test_an_attach_sent_ahead_is_answered_on_the_adopted_connection(project: Path, wolli_home: Path, loopback,
                                                                           tmp_path: Path):
    write_models(wolli_home, loopback.url + "/v1")
    saved = tmp_path / "long.jsonl"
    write_long_session(saved, str(project), 48, tools_every=2)  # 120 messages
    server = ServeProcess(project, project / "s.sock", "--model", "local/local-model")
    try:
        server.wait_listening()
        connects: list[object] = []
        # written before the app exists, as `wolli attach` does before it imports Textual
        ahead = send_ahead(server.socket_path, attach_command(str(saved), str(project)))
        assert ahead is not None

        async def connect(on_record):
            connects.append(on_record)
            return await ServerLink.unix(server.socket_path, on_record)

        app = attached_app(server.socket_path, str(saved), project, wolli_home / "agents" / "default",
                           connect=connect, ahead=ahead)
        async with app.run_test(size=(100, 30)):
            await wait_until(lambda: app.controller.session is not None
                             and len(app.controller.session.messages) >= HISTORY_TAIL, 20, "the history's tail")
            await wait_until(lambda: last_answer(app).startswith("answer 47"), 20, "the last answer drawn")
            assert connects == []  # the early connection carried the attach and its answer
            live = server.client().call({"type": "get_live_sessions"})["sessions"]
            assert [len(room["clients"]) for room in live] == [1]
    finally:
        server.stop()


async def test_an_attach_sent_ahead_that_fails_ends_the_app_with_the_reason(project: Path, wolli_home: Path,
                                                                            loopback, capsys):
    write_models(wolli_home, loopback.url + "/v1")
    server = ServeProcess(project, project / "s.sock", "--model", "local/local-model")
    try:
        server.wait_listening()
        ahead = send_ahead(server.socket_path, attach_command("no-such-session", str(project)))

        async def connect(on_record):
            raise AssertionError("the early connection is used")

        app = attached_app(server.socket_path, "no-such-session", project, wolli_home / "agents" / "default",
                           connect=connect, ahead=ahead)
        async with app.run_test(size=(100, 30)):
            await wait_until(lambda: app.return_code == 1, 20, "the app to end")
        assert "attach: no session 'no-such-session'" in capsys.readouterr().err
    finally:
        server.stop()


async def test_a_tree_move_elsewhere_reloads_only_the_new_tail(project: Path, wolli_home: Path, loopback,
                                                               tmp_path: Path):
    write_models(wolli_home, loopback.url + "/v1")
    saved = tmp_path / "long.jsonl"
    write_long_session(saved, str(project), 300, tools_every=1)  # 900 messages: question, call, result
    server = ServeProcess(project, project / "s.sock", "--model", "local/local-model")
    try:
        server.wait_listening()
        sent: list[dict] = []
        connect = recording_connect(server, sent)
        app = attached_app(server.socket_path, str(saved), project, wolli_home / "agents" / "default", connect=connect)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_until(lambda: app.controller.ready.is_set(), 20, "the attach")
            other = server.client()
            other.call({"type": "attach", "sessionId": app.controller.session.session_id})
            # another client moves the session back to the call of answer 199 (600 messages before it)
            entries = other.call({"type": "get_tree"})["entries"]
            target = next(e["parentId"] for e in entries if e.get("text") == "question 200")  # answer 199's result
            assert other.call({"type": "navigate_tree", "targetId": target})["moved"] is not False
            whole = other.call({"type": "get_messages"})["messages"]
            assert len(whole) == 600 and whole[-1]["role"] == "toolResult"

            before_move = app.controller.session.messages
            await wait_until(lambda: app.controller.session.messages is not before_move
                             and app.transcript.unfetched, 20, "the new tail")
            reload = [c for c in sent if c["type"] == "get_messages"]
            assert reload == [{"type": "get_messages", "start": 600 - HISTORY_TAIL}]  # the tail alone
            session = app.controller.session
            assert app.transcript.unfetched == 600 - len(session.messages) and session.messages[0].role != "toolResult"
            await page_to_the_top(pilot, app.transcript)
            assert [to_jsonable(m) for m in session.messages] == whole
    finally:
        server.stop()
