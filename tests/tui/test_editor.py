"""The editor and the keys around it: send, steer, follow up, abort, history, pastes, quit."""

from __future__ import annotations

import time

import pytest
from textual import events
from textual.screen import ModalScreen

from tests.support.waiting import wait_until
from wolli.modes.tui.widgets.assistant_message import AssistantMessageView
from wolli.modes.tui.widgets.simple_messages import BashExecutionView

from .helpers import idle_after, running, type_and_send


async def test_enter_while_streaming_steers_and_esc_aborts_and_restores_the_queue(make_app, faux):
    app = make_app()
    async with running(app) as pilot:
        faux.tokens_per_second = 40
        faux.push(" ".join(["slow"] * 400))
        await type_and_send(pilot, "start")
        session = app.controller.session
        await wait_until(lambda: session.is_streaming, 5, "streaming")
        assert app.working.display
        await type_and_send(pilot, "steer this")
        await pilot.press(*"later", "alt+enter")
        await wait_until(lambda: app.queued.display, 5, "the queue row")
        assert app.queued.steering == ["steer this"] and app.queued.follow_up == ["later"]
        shown = str(app.queued.render())
        assert "steer: steer this" in shown and "follow-up: later" in shown
        await pilot.press("escape")
        await wait_until(lambda: session.is_idle(), 5, "the abort")
        assert app.editor.text == "steer this\nlater"
        await pilot.pause()
        assert not app.working.display
        last = session.messages[-1]
        assert last.stop_reason == "aborted"
        assert "Interrupted" in str(app.query(AssistantMessageView).last().error.render())


async def test_history_with_up_and_down_persists_per_agent(make_app, faux, wolli_home):
    app = make_app()
    async with running(app) as pilot:
        faux.push("one", "two")
        await type_and_send(pilot, "first prompt")
        await idle_after(app, pilot, 2)
        await type_and_send(pilot, "second prompt")
        await idle_after(app, pilot, 4)
        await pilot.press(*"draft")
        await pilot.press("up")
        assert app.editor.text == "second prompt"
        await pilot.press("up")
        assert app.editor.text == "first prompt"
        await pilot.press("down", "down")
        assert app.editor.text == "draft"
    assert (wolli_home / "agents" / "default" / "prompt-history.jsonl").read_text().splitlines() == [
        '"first prompt"', '"second prompt"']
    again = make_app()
    async with running(again) as pilot:
        await pilot.press("up")
        assert again.editor.text == "second prompt"


async def test_a_long_paste_collapses_and_is_sent_whole(make_app, faux):
    app = make_app()
    async with running(app) as pilot:
        pasted = "\n".join(f"log line {i}" for i in range(30))
        app.editor.post_message(events.Paste(pasted))
        await wait_until(lambda: "[paste #1 +30 lines]" in app.editor.text, 5, "the paste marker")
        await pilot.press("end", *" explain")
        faux.push("ok")
        await pilot.press("enter")
        await idle_after(app, pilot, 2)
        assert faux.contexts[-1].messages[-1].content == pasted + " explain"


async def test_up_brings_a_sent_paste_back_collapsed_and_down_keeps_the_draft_s_own(make_app, faux):
    app = make_app()
    async with running(app) as pilot:
        pasted = "\n".join(f"log line {i}" for i in range(30))
        app.editor.post_message(events.Paste(pasted))
        await wait_until(lambda: "[paste #1 +30 lines]" in app.editor.text, 5, "the paste marker")
        await pilot.press("end", *" explain")
        faux.push("ok", "again")
        await pilot.press("enter")
        await idle_after(app, pilot, 2)
        draft = "\n".join(f"draft line {i}" for i in range(12))
        app.editor.post_message(events.Paste(draft))
        await wait_until(lambda: "[paste #2 +12 lines]" in app.editor.text, 5, "the draft's marker")
        await pilot.press("home", "up")
        assert app.editor.text == "[paste #1 +30 lines] explain"
        await pilot.press("down")
        assert app.editor.text == "[paste #2 +12 lines]"
        await pilot.press("up")
        await pilot.press("enter")
        await idle_after(app, pilot, 4)
        assert faux.contexts[-1].messages[-1].content == pasted + " explain"


@pytest.mark.parametrize("newline", ["\r", "\r\n"], ids=["CR", "CRLF"])
async def test_a_long_paste_with_terminal_line_ends_collapses_and_is_sent_with_newlines(make_app, faux, newline):
    # Terminals and tmux turn a pasted LF into CR (tmux paste-buffer without -r does): the
    # paste is just as long, and the model gets ordinary newlines.
    app = make_app()
    async with running(app) as pilot:
        lines = [f"log line {i}" for i in range(30)]
        app.editor.post_message(events.Paste(newline.join(lines)))
        await wait_until(lambda: "[paste #1 +30 lines]" in app.editor.text, 5, "the paste marker")
        faux.push("ok")
        await pilot.press("enter")
        await idle_after(app, pilot, 2)
        assert faux.contexts[-1].messages[-1].content == "\n".join(lines)


async def test_ctrl_c_clears_then_twice_quits_and_ctrl_d_quits_on_empty(make_app):
    app = make_app()
    async with running(app) as pilot:
        await pilot.press(*"some text")
        await pilot.press("ctrl+c")
        assert app.editor.text == ""
        await pilot.press("ctrl+c")
        assert app.is_running
        await pilot.press("ctrl+c")
        await wait_until(lambda: not app.is_running, 5, "the app to quit")
    app = make_app()
    async with running(app) as pilot:
        await pilot.press("x", "ctrl+d")
        assert app.is_running  # not empty: Ctrl+D is not quit
        await pilot.press("backspace", "ctrl+d")
        await wait_until(lambda: not app.is_running, 5, "the app to quit")


async def test_bang_runs_a_shell_command_and_shows_its_output(make_app, project):
    app = make_app()
    async with running(app) as pilot:
        await type_and_send(pilot, "!echo hello-from-shell")
        await wait_until(lambda: len(app.query(BashExecutionView)) == 1, 10, "the bash row")
        assert "hello-from-shell" in str(app.query(BashExecutionView).first().render())
        assert app.controller.session.messages[-1].role == "bashExecution"


async def test_esc_stops_a_running_bang_command(make_app, project):
    # A !cmd is no run of the agent, so the session stays idle while it works: Esc took that
    # for the first half of Esc Esc (/rewind) and the command ran on (`!tail -f` for good).
    app = make_app()
    async with running(app) as pilot:
        await type_and_send(pilot, "!touch started && sleep 60")
        await wait_until((project / "started").exists, 10, "the command to start")
        began = time.monotonic()
        await pilot.press("escape")
        await wait_until(lambda: len(app.query(BashExecutionView)) == 1, 10, "the bash row")
        assert time.monotonic() - began < 10
        assert "cancelled" in str(app.query(BashExecutionView).first().render())
        assert not isinstance(app.screen, ModalScreen)  # no /rewind either


async def test_a_running_bang_command_shows_the_working_row_until_it_ends(make_app, project):
    # Its row comes when it ends; before, nothing on screen said a command was running.
    app = make_app()
    async with running(app) as pilot:
        await type_and_send(pilot, "!touch started && sleep 1")
        await wait_until((project / "started").exists, 10, "the command to start")
        await wait_until(lambda: app.working.display, 5, "the working row")
        await wait_until(lambda: len(app.query(BashExecutionView)) == 1, 10, "the bash row")
        await pilot.pause()
        assert not app.working.display


async def test_a_running_bang_command_shows_its_latest_line_of_output(make_app):
    app = make_app()
    async with running(app) as pilot:
        await type_and_send(pilot, "!echo building; printf '\\033[32mstep 2 of 3\\033[0m\\n\\n'; sleep 30")
        await wait_until(lambda: "step 2 of 3" in app.working.render().plain, 10, "the command's last line")
        assert "building" not in app.working.render().plain and "\x1b" not in app.working.render().plain
        await pilot.press("escape")
        await wait_until(lambda: len(app.query(BashExecutionView)) == 1, 10, "the stopped command's row")
        assert app.working.detail is None


async def test_shift_tab_cycles_the_thinking_level(make_app):
    app = make_app()
    async with running(app) as pilot:
        before = app.controller.session.thinking_level
        await pilot.press("shift+tab")
        await wait_until(lambda: app.controller.session.thinking_level != before, 5, "a new level")
        assert app.controller.session.thinking_level in app.footer.render_text().plain


async def test_without_a_model_the_app_opens_says_how_and_keeps_the_prompt(make_app, wolli_home):
    (wolli_home / "models.json").unlink()
    from wolli.modes.tui.widgets.simple_messages import NoticeView

    app = make_app(model=None)
    async with running(app) as pilot:
        notices = " ".join(str(n.render()) for n in app.query(NoticeView))
        assert "No model is set up yet" in notices and "/login" in notices and "models.json" in notices
        await type_and_send(pilot, "hello")
        await wait_until(lambda: app.editor.text == "hello", 5, "the prompt back in the editor")


def tiny_png() -> bytes:
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + \
        chunk(b"IEND", b"")


async def test_a_pasted_image_path_is_attached_and_sent(make_app, faux, project, wolli_home):
    import json

    (wolli_home / "models.json").write_text(json.dumps({"providers": {"faux": {
        "api": "faux", "baseUrl": "http://faux.invalid", "apiKey": "none",
        "models": [{"id": "faux-1", "input": ["text", "image"], "contextWindow": 100000}]}}}))
    shot = project / "my shot.png"
    shot.write_bytes(tiny_png())
    app = make_app()
    async with running(app) as pilot:
        app.editor.post_message(events.Paste(f"'{shot}'"))  # as a terminal types a dropped file
        await wait_until(lambda: app.editor.text == "[image #1]", 5, "the image marker")
        await pilot.press(*" what is this?")
        faux.push("a green pixel")
        await pilot.press("enter")
        await idle_after(app, pilot, 2)
        sent = faux.contexts[-1].messages[-1].content
        assert [block.type for block in sent] == ["text", "image"]
        assert sent[0].text == "[image #1] what is this?" and sent[1].mime_type == "image/png"
        assert app.editor.images == {}


TINY_GIF = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00"
            b",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")


async def test_a_pasted_image_is_sent_as_what_it_is_not_what_its_name_says(make_app, faux, project, wolli_home):
    # The type came from the name: a GIF saved as .png went out as image/png (providers
    # refuse a mismatch), and bytes that are no image at all were read as a PNG header
    # ("The image is 2421075764x2658156035 pixels").
    import json

    (wolli_home / "models.json").write_text(json.dumps({"providers": {"faux": {
        "api": "faux", "baseUrl": "http://faux.invalid", "apiKey": "none",
        "models": [{"id": "faux-1", "input": ["text", "image"], "contextWindow": 100000}]}}}))
    (project / "really-a-gif.png").write_bytes(TINY_GIF)
    (project / "not-an-image.png").write_bytes(bytes(range(256)) * 4)
    app = make_app()
    async with running(app) as pilot:
        app.editor.post_message(events.Paste(str(project / "not-an-image.png")))
        await wait_until(lambda: app._notifications, 5, "a notice")
        assert [n.message for n in app._notifications] == [
            "image not attached: not-an-image.png: not a PNG, JPEG, GIF or WebP image"]
        assert app.editor.images == {}
        app.editor.post_message(events.Paste(str(project / "really-a-gif.png")))
        await wait_until(lambda: app.editor.text == "[image #1]", 5, "the image marker")
        faux.push("a pixel")
        await pilot.press("enter")
        await idle_after(app, pilot, 2)
        assert faux.contexts[-1].messages[-1].content[-1].mime_type == "image/gif"


async def test_an_image_for_a_text_only_model_is_refused_and_a_text_path_stays_text(make_app, project):
    shot = project / "shot.png"
    shot.write_bytes(tiny_png())
    app = make_app()
    async with running(app) as pilot:
        app.editor.post_message(events.Paste(str(shot)))
        await wait_until(lambda: any("does not take images" in n.message for n in app._notifications), 5,
                         "the refusal")
        assert app.editor.text == "" and app.editor.images == {}
        app.editor.post_message(events.Paste(str(project / "notes.txt")))
        await wait_until(lambda: app.editor.text.endswith("notes.txt"), 5, "the path as text")
        await pilot.pause()


async def test_the_working_row_counts_the_seconds_the_model_has_been_silent(make_app, faux, monkeypatch):
    from wolli.ai.providers.faux import FauxResponse, faux_text
    from wolli.modes.tui.widgets import working_row

    monkeypatch.setattr(working_row, "SHOW_WAIT_AFTER_S", 1)
    app = make_app()
    async with running(app) as pilot:
        faux.push(FauxResponse(blocks=[faux_text("thinking about it")], hang=True))
        await type_and_send(pilot, "go")
        session = app.controller.session
        await wait_until(lambda: session.is_streaming, 5, "streaming")
        await wait_until(lambda: "no data from the model for 1s" in str(app.working.render()), 5, "the wait shown")
        await pilot.press("escape")
        await wait_until(lambda: session.is_idle(), 5, "the abort")
        assert app.working.waiting_since is None


@pytest.mark.parametrize("keys", [("ctrl+c", "ctrl+c"), ("ctrl+d",)], ids=["ctrl+c twice", "ctrl+d"])
async def test_quitting_while_an_answer_streams_saves_what_had_arrived(make_app, faux, keys):
    # Textual cancels the app's workers, the run among them, as it closes: quitting must stop
    # the run first, as Esc does, or the part of the answer on screen is gone after --continue.
    from wolli.session.manager import SessionManager

    app = make_app()
    async with running(app) as pilot:
        faux.tokens_per_second = 40
        faux.push(" ".join(f"w{i}" for i in range(400)))
        await type_and_send(pilot, "start")
        session = app.controller.session
        path = session.session_manager.get_session_file()

        def streamed() -> str:
            partial = session.agent.state.stream_message
            return "".join(getattr(part, "text", "") for part in partial.content) if partial else ""

        await wait_until(lambda: "w5 " in streamed(), 5, "a few words streamed")
        await pilot.press(*keys)
        await wait_until(lambda: not app.is_running, 10, "the app to quit")
    messages = SessionManager.open(path).build_session_context().messages
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[-1].stop_reason == "aborted"
    assert "w5" in messages[-1].content[0].text
