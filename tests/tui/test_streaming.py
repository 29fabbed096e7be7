"""A prompt, a streamed answer, tool rows, and how often streamed text reaches the screen."""

from __future__ import annotations

import pytest

from tests.support.sample_extensions import REDACTOR
from tests.support.waiting import wait_until
from wolli.ai.providers.faux import faux_thinking, faux_tool_call
from wolli.modes.tui.frame_batcher import FPS
from wolli.modes.tui.widgets.assistant_message import AssistantMessageView
from wolli.modes.tui.widgets.thinking_block import ThinkingBlock
from wolli.modes.tui.widgets.tool_row import ToolRow
from wolli.modes.tui.widgets.user_message import UserMessageView

from .helpers import idle_after, mounted, running, type_and_send


async def test_a_prompt_shows_the_user_message_and_the_streamed_markdown_answer(make_app, faux):
    app = make_app()
    async with running(app, (100, 30)) as pilot:
        faux.push("Here is **bold** and `code`.\n\n```python\nprint('hi')\n```")
        await type_and_send(pilot, "hello there")
        await idle_after(app, pilot, 2)
        users = mounted(app, UserMessageView)
        assert [u.text for u in users] == ["hello there"]
        answer = mounted(app, AssistantMessageView)[-1]
        assert "print('hi')" in answer.markdown_text and "**bold**" in answer.markdown_text
        assert app.editor.text == ""
        assert faux.contexts[-1].messages[-1].content == "hello there"


async def test_streamed_tokens_reach_the_screen_in_frames_not_one_update_per_token(make_app, faux):
    app = make_app()
    async with running(app, (100, 30)) as pilot:
        faux.tokens_per_second = 2000
        words = " ".join(f"word{i}" for i in range(600))
        faux.push(words)
        await type_and_send(pilot, "go")
        await idle_after(app, pilot, 2)
        answer = mounted(app, AssistantMessageView)[-1]
        assert answer.markdown_text == words
        # 600 words stream in ~0.3-0.6 s: at most ~30 flushes a second, far fewer than tokens.
        assert 0 < app.adapter.batcher.flushes < 100


async def test_the_first_words_of_a_slow_answer_are_drawn_while_it_still_streams(make_app, faux):
    # The batcher flushes at once after a quiet spell: that flush must really run (a Textual
    # timer of 0 s never fires), or nothing is drawn until the answer ends.
    app = make_app()
    async with running(app, (100, 30)) as pilot:
        faux.tokens_per_second = 20
        faux.push(" ".join(f"word{i}" for i in range(40)))  # ~2 s
        await type_and_send(pilot, "go")
        await wait_until(lambda: bool(mounted(app, AssistantMessageView))
                         and "word0" in mounted(app, AssistantMessageView)[-1].markdown_text, 5, "the first words")
        assert "word39" not in mounted(app, AssistantMessageView)[-1].markdown_text
        assert not app.controller.session.is_idle()


async def test_the_model_is_read_at_the_screen_s_frame_rate(make_app, faux):
    # A token wakes the provider, the agent, the session and the adapter in turn; the screen
    # shows them once a frame, so the answer is read a frame's worth at a time.
    app = make_app()
    async with running(app, (100, 30)) as pilot:
        faux.push("ok")
        await type_and_send(pilot, "go")
        await idle_after(app, pilot, 1)
        assert faux.options[-1].read_interval == pytest.approx(1 / FPS)


async def test_a_tool_call_becomes_a_row_that_finishes_with_its_result(make_app, faux, project):
    (project / "notes.txt").write_text("alpha\nbeta\n")
    app = make_app()
    async with running(app, (100, 30)) as pilot:
        faux.push([faux_tool_call("read", {"path": "notes.txt"})], "read it")
        await type_and_send(pilot, "read notes")
        await idle_after(app, pilot, 4)
        rows = mounted(app, ToolRow)
        assert len(rows) == 1 and rows[0].state == "success"
        assert "read notes.txt" in str(rows[0].header.render())
        assert "alpha" in str(rows[0].body.render())


async def test_a_failing_tool_row_is_marked_as_an_error(make_app, faux):
    app = make_app()
    async with running(app, (100, 30)) as pilot:
        faux.push([faux_tool_call("read", {"path": "missing.txt"})], "it is missing")
        await type_and_send(pilot, "read it")
        await idle_after(app, pilot, 4)
        row = mounted(app, ToolRow)[0]
        assert row.state == "error" and row.has_class("tool-error")
        assert "missing.txt" in str(row.body.render())


async def test_ctrl_o_expands_every_tool_row_and_ctrl_t_shows_thinking(make_app, faux, project):
    (project / "long.txt").write_text("".join(f"line {i}\n" for i in range(30)))
    app = make_app()
    async with running(app, (100, 40)) as pilot:
        faux.push([faux_thinking("first I think\nthen more"), faux_tool_call("read", {"path": "long.txt"})], "done")
        await type_and_send(pilot, "read long")
        await idle_after(app, pilot, 4)
        row = mounted(app, ToolRow)[0]
        assert "line 20" not in str(row.body.render()) and "more line" in str(row.body.render())
        await pilot.click(row)  # one row alone, by a click
        assert row.expanded and "line 20" in str(row.body.render())
        await pilot.click(row)
        assert not row.expanded and "line 20" not in str(row.body.render())
        await pilot.press("ctrl+o")
        assert row.expanded and "line 20" in str(row.body.render())
        thinking = mounted(app, ThinkingBlock)[0]
        assert thinking.expanded and "then more" in str(thinking.render())
        await pilot.press("ctrl+t")
        assert not thinking.expanded and "then more" not in str(thinking.render())
        assert "Thinking: first I think" in str(thinking.render())
        await pilot.press("ctrl+t")
        assert thinking.expanded
        await pilot.pause()  # drawn in the dark theme's colours first
        list(thinking.render_line(0))
        app.ui.set_theme("light")  # rows drawn before the switch are drawn again in the new colours
        await pilot.pause()
        color = list(thinking.render_line(0))[0].style.color
        assert color is not None and color.triplet.hex == app.themes["light"].color("thinkingText")


async def test_the_footer_shows_model_tokens_and_context(make_app, faux, project):
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    app = make_app()
    async with running(app, (100, 30)) as pilot:
        faux.push("ok")
        await type_and_send(pilot, "hi")
        await idle_after(app, pilot, 2)
        footer = app.footer.render_text().plain
        assert "faux/faux-1" in footer and "context" in footer and "↑" in footer and "(main)" in footer
        (project / ".git" / "HEAD").write_text("ref: refs/heads/feature\n")  # a checkout meanwhile
        faux.push("ok")
        await type_and_send(pilot, "again")
        await idle_after(app, pilot, 4)
        assert "(feature)" in app.footer.render_text().plain
        app.ui.set_status("ext", "● busy")
        assert "● busy" in app.footer.render_text().plain


async def test_a_running_command_streams_its_output_into_the_row(make_app, faux, project):
    (project / "go").write_text("")
    command = "echo first-line; while [ -e go ]; do sleep 0.05; done; echo second-line"
    app = make_app()
    async with running(app, (100, 30)) as pilot:
        faux.push([faux_tool_call("bash", {"command": command})], "done")
        await type_and_send(pilot, "run it")

        await wait_until(lambda: mounted(app, ToolRow) and "first-line" in str(mounted(app, ToolRow)[0].body.render()),
                         10, "partial output")
        row = mounted(app, ToolRow)[0]
        assert row.state == "running" and "second-line" not in str(row.body.render())
        (project / "go").unlink()
        await idle_after(app, pilot, 4)
        assert row.state == "success" and "second-line" in str(row.body.render()) and "exit 0" in str(row.body.render())


async def test_a_long_answer_that_overflows_near_its_end_is_followed_to_its_last_word(make_app, faux):
    app = make_app()
    # Sized so that the answer overflows the screen only near its end (the case that once
    # left the transcript unanchored and the last words below the screen).
    async with running(app, (120, 40)) as pilot:
        faux.push(" ".join(f"alpha{i}" for i in range(500)) + " LASTWORD")
        await type_and_send(pilot, "go")
        await idle_after(app, pilot, 2)
        await pilot.pause()
        transcript = app.transcript
        assert transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y
        view = mounted(app, AssistantMessageView)[-1]
        assert view.markdown_text.endswith("LASTWORD")
        assert view.region.bottom >= transcript.region.y  # its end is within the visible rows


async def test_a_resize_while_streaming_reflows_the_text(make_app, faux):
    from wolli.modes.tui.widgets.stream_tail import StreamTail, wrap_row

    app = make_app()
    async with running(app, (100, 20)) as pilot:  # 20 rows: at 60 columns the answer overflows them
        faux.tokens_per_second = 30  # 150 words: five seconds, so the resize lands mid-stream
        words = " ".join(f"word{i}" for i in range(150))
        faux.push(words)
        await type_and_send(pilot, "go")
        await wait_until(lambda: app.query(StreamTail) and len(app.query(StreamTail).first().text) > 100, 10, "a tail")
        await pilot.resize_terminal(60, 20)
        tail = app.query(StreamTail).first()
        await wait_until(lambda: tail.size.width < 60, 5, "the narrower tail")
        assert tail.is_attached  # still streaming
        tail.set_text(tail.text)  # what the next frame does
        assert tail._rows == wrap_row(tail.text, tail.size.width)
        await idle_after(app, pilot, 2)
        assert mounted(app, AssistantMessageView)[-1].markdown_text == words
        transcript = app.transcript
        # The follow to the end is a scroll after the last layout pass: on a loaded machine it
        # lands a frame or two after the session went idle, so wait for it (it must still land).
        await wait_until(lambda: transcript.max_scroll_y > 5 and transcript.scroll_y == transcript.max_scroll_y, 5,
                         "the transcript to follow the reflowed answer to its end")


@pytest.mark.parametrize("first", ["", "Sure. Here is the plan:\n\n"])
async def test_markdown_appended_quickly_shows_each_block_once(make_app, first):
    from textual.widgets._markdown import MarkdownOrderedList, MarkdownParagraph

    from wolli.modes.tui.widgets.markdown_view import ThemedFence, ThemedMarkdown

    app = make_app()
    async with running(app) as pilot:
        markdown = ThemedMarkdown(first)  # "": how a streamed answer starts; text: a finished one
        app.transcript.mount(markdown)
        # Before it is mounted, and several in a row: what a fast stream does.
        if not first:
            markdown.append_text("Sure. Here is the plan:\n\n")
        markdown.append_text("1. Read `app.py`\n2. Fix the bug\n\n")
        markdown.append_text("```python\ndef add(a, b):\n    return a + b\n```")
        await wait_until(lambda: len(markdown.children) >= 3 and not markdown._appending, 5, "the blocks")
        await pilot.pause()
        kinds = [type(block) for block in markdown.children]
        assert kinds == [MarkdownParagraph, MarkdownOrderedList, ThemedFence]
        assert markdown.source.count("Sure.") == 1


async def test_the_end_of_an_answer_is_on_screen_before_its_markdown_is_parsed(make_app):
    """The final text goes into the tail at once (the last words are seen without waiting for
    the markdown parse), and the tail leaves only once the markdown holds the text: no frame
    shows the answer without its end or without its text."""
    from textual.widgets._markdown import MarkdownParagraph

    from wolli.modes.tui.widgets.stream_tail import StreamTail
    from wolli.modes.tui.widgets.streaming_text import StreamingText

    app = make_app()
    async with running(app) as pilot:
        streaming = StreamingText()
        app.transcript.mount(streaming)
        await wait_until(lambda: streaming._ready, 5, "mounted")
        streaming.update_text("First block.\n\nThe paragraph still being")
        await pilot.pause()
        assert streaming.tail.text == "The paragraph still being"
        streaming.update_text("First block.\n\nThe paragraph still being written. THE END", final=True)
        assert streaming.tail.text == "The paragraph still being written. THE END"  # at once
        assert streaming.tail.is_attached
        await wait_until(lambda: not streaming.query(StreamTail), 5, "the tail to leave")
        paragraphs = [str(p._content) for p in streaming.markdown.query(MarkdownParagraph)]
        assert paragraphs[-1].endswith("THE END") and len(paragraphs) == 2


async def test_an_answer_of_one_paragraph_keeps_its_tail_until_the_markdown_has_it(make_app):
    from textual.widgets._markdown import MarkdownParagraph

    from wolli.modes.tui.widgets.stream_tail import StreamTail
    from wolli.modes.tui.widgets.streaming_text import StreamingText

    app = make_app()
    async with running(app):
        streaming = StreamingText()
        app.transcript.mount(streaming)
        await wait_until(lambda: streaming._ready, 5, "mounted")
        streaming.update_text("only words and **bold** ZZEND", final=True)
        assert streaming.tail.text.endswith("ZZEND") and streaming.markdown is not None
        seen_without_text: list[bool] = []

        def check() -> bool:
            tail_gone = not streaming.query(StreamTail)
            parsed = bool(streaming.markdown.query(MarkdownParagraph))
            seen_without_text.append(tail_gone and not parsed)
            return tail_gone

        await wait_until(check, 5, "the swap")
        assert not any(seen_without_text)
        assert "bold" in str(streaming.markdown.query(MarkdownParagraph).first()._content)



async def test_an_answer_an_extension_rewrote_at_its_end_shows_the_rewrite(make_app, faux):
    """A ``message_end`` handler may replace the message: the streamed text is not a prefix
    of the final one, so the row is drawn again from the final message."""
    from textual.widgets._markdown import MarkdownParagraph

    app = make_app(code={"redactor": REDACTOR})
    async with running(app) as pilot:

        faux.tokens_per_second = 40
        faux.push("The secret is 42.\n\nDo not tell anyone, not even your closest friends.")
        await type_and_send(pilot, "tell me")
        await wait_until(lambda: mounted(app, AssistantMessageView)
                         and "secret" in mounted(app, AssistantMessageView)[-1].markdown_text, 5, "the streamed text")
        await idle_after(app, pilot, 2)
        answer = mounted(app, AssistantMessageView)[-1]

        await wait_until(lambda: answer.query(MarkdownParagraph), 5, "the final markdown")
        await pilot.pause()
        shown = " ".join(str(p._content) for p in answer.query(MarkdownParagraph))
        assert shown == "[redacted]", shown
        assert answer.markdown_text == "[redacted]"


async def test_no_blank_rows_are_drawn_under_a_streaming_answer(make_app, faux):
    """While an answer streams, its last row on screen is its last written row: the tail
    takes exactly the rows its text needs (once it kept six blank rows below the text, to lay
    the screen out less often)."""
    from wolli.modes.tui.widgets.stream_tail import StreamTail

    app = make_app()
    async with running(app, (100, 30)) as pilot:
        faux.tokens_per_second = 60  # ~4 s: sampled mid-stream, as rows are added
        faux.push("".join(f"word{i}" + ("\n" if i % 9 == 8 else " ") for i in range(240)) + "ZZEND")
        await type_and_send(pilot, "go")
        samples: list[tuple[int, int, str]] = []

        def sample() -> bool:
            tails = app.query(StreamTail)
            if tails and tails.first().text and not tails.first().text.endswith("ZZEND"):
                tail = tails.first()
                rows = len(tail.render().split("\n"))
                if tail.size.height and (not samples or samples[-1][1] != rows):
                    samples.append((tail.size.height, rows, tail.render_line(tail.size.height - 1).text))
            return len(samples) >= 6

        await wait_until(sample, 10, "the tail growing by six rows")
        await pilot.pause()  # the last growth laid out
        sample()
        for height, rows, last_line in samples[1:]:
            # (A row added since the last layout is laid out with the next frame.)
            assert height <= rows, f"{height - rows} blank rows under the answer"
            assert last_line.strip(), "the answer's last row on screen is blank"
        await idle_after(app, pilot, 2)
