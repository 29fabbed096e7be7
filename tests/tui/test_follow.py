"""The transcript follows: a prompt or command scrolls to the end; scrolled up, arriving output
shows a "new output below" line instead of moving the view; PageUp/PageDown/Ctrl+Home/
Ctrl+End scroll the transcript from the editor, and can be bound to other keys."""

from __future__ import annotations

import json

from tests.support.waiting import wait_until

from .helpers import idle_after, running, type_and_send


async def _long_transcript(app, faux, rows: int = 12) -> None:
    for i in range(rows):
        faux.push(f"answer {i}\n\nwith a second paragraph")
        await app.controller.session.prompt(f"question {i}")


def _at_end(transcript) -> bool:
    return transcript.scroll_y >= transcript.max_scroll_y


async def test_scrolled_up_new_output_shows_a_marker_and_sending_goes_back_to_the_end(make_app, faux):
    app = make_app()
    async with running(app, (80, 24)) as pilot:
        await _long_transcript(app, faux)
        await pilot.pause()
        transcript = app.transcript
        await wait_until(lambda: transcript.max_scroll_y > 10 and _at_end(transcript), 5, "a transcript at its end")
        await pilot.press("pageup")  # from the editor: the editor keeps the focus
        await pilot.pause()
        assert app.focused is app.editor and not _at_end(transcript) and not transcript.following
        where = transcript.scroll_y
        faux.push("arrives while you read")
        await app.controller.session.prompt("a question from elsewhere")
        await pilot.pause()
        await wait_until(lambda: transcript.marker.display, 5, "the new output marker")
        assert transcript.scroll_y == where  # the view did not move
        assert "new output below" in str(transcript.marker.render()) and "Ctrl+End" in str(transcript.marker.render())

        faux.push("the answer you wait for")
        await type_and_send(pilot, "my next question")
        await idle_after(app, pilot, 2 * 14)
        await wait_until(lambda: _at_end(transcript) and not transcript.marker.display, 5, "back at the end")
        assert transcript.following


async def test_page_keys_home_and_end_scroll_the_transcript(make_app, faux):
    app = make_app()
    async with running(app, (80, 24)) as pilot:
        await _long_transcript(app, faux, rows=30)
        await pilot.pause()
        transcript = app.transcript
        await wait_until(lambda: _at_end(transcript), 5, "the end")
        bottom = transcript.scroll_y
        await pilot.press("pageup")
        await pilot.pause()
        assert transcript.scroll_y < bottom
        await pilot.press("pagedown")
        await pilot.pause()
        assert _at_end(transcript) and transcript.following
        hidden = transcript.hidden_count
        await pilot.press("ctrl+home")
        await pilot.pause()
        assert transcript.scroll_y == 0 and transcript.hidden_count < hidden  # earlier rows came in
        await pilot.press("ctrl+end")
        await pilot.pause()
        await wait_until(lambda: _at_end(transcript), 5, "the end again")
        assert app.editor.text == ""  # none of it typed or moved anything in the editor


async def test_the_scroll_keys_are_rebindable(make_app, faux, wolli_home):
    (wolli_home / "keybindings.json").write_text(json.dumps({"app.transcript.pageUp": "alt+u",
                                                              "app.transcript.end": "alt+e"}))
    app = make_app()
    async with running(app, (80, 24)) as pilot:
        await _long_transcript(app, faux)
        await pilot.pause()
        transcript = app.transcript
        await wait_until(lambda: _at_end(transcript) and transcript.max_scroll_y > 10, 5, "the end")
        await pilot.press("alt+u")
        await pilot.pause()
        assert not _at_end(transcript)
        await pilot.press("alt+e")
        await wait_until(lambda: _at_end(transcript), 5, "the end again")
