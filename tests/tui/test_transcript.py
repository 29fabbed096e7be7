"""History on resume, a bounded number of mounted rows, renderers and their fallbacks."""

from __future__ import annotations

import textwrap

from tests.support.waiting import wait_until
from wolli.ai.providers.faux import faux_tool_call
from wolli.modes.tui.widgets.assistant_message import AssistantMessageView
from wolli.modes.tui.widgets.simple_messages import CustomMessageView
from wolli.modes.tui.widgets.tool_row import ToolRow
from wolli.modes.tui.widgets.transcript import MAX_MOUNTED
from wolli.modes.tui.widgets.user_message import UserMessageView

from .helpers import idle_after, running, type_and_send


async def test_resuming_a_session_shows_its_history_with_tool_rows(make_app, faux, project):
    (project / "a.txt").write_text("content of a\n")
    app = make_app()
    async with running(app) as pilot:
        faux.push([faux_tool_call("read", {"path": "a.txt"})], "it says content")
        await type_and_send(pilot, "what is in a.txt")
        await idle_after(app, pilot, 4)
        session_id = app.controller.session.session_id
    resumed = make_app(session=session_id)
    async with running(resumed) as pilot:
        await wait_until(lambda: len(resumed.query(ToolRow)) == 1, 5, "the history")
        await pilot.pause()
        assert [u.text for u in resumed.query(UserMessageView)] == ["what is in a.txt"]
        row = resumed.query(ToolRow).first()
        assert row.state == "success" and "content of a" in str(row.body.render())
        assert "it says content" in resumed.query(AssistantMessageView).last().markdown_text


async def test_a_long_session_mounts_a_bounded_window_and_pages_back(make_app, faux):
    app = make_app()
    async with running(app, (100, 30)) as pilot:
        for i in range(60):
            faux.push(f"answer {i}")
            await app.controller.session.prompt(f"question {i}")
        await pilot.pause()
        transcript = app.transcript
        assert len(transcript.items) >= 120
        assert len(transcript.mounted) <= MAX_MOUNTED
        assert transcript.hidden_count == len(transcript.items) - len(transcript.mounted)
        assert "earlier messages" in str(transcript.more.render())
        shown = transcript.show_earlier()
        await pilot.pause()
        assert shown > 0 and transcript.hidden_count == len(transcript.items) - len(transcript.mounted)


RENDERING = textwrap.dedent("""
    def extension(wolli):
        def execute(tool_call_id, params, signal, on_update, ctx):
            return {"content": [{"type": "text", "text": "counted " + str(params["n"])}], "details": {"n": params["n"]}}

        def render_call(args, theme, context):
            return theme.fg("accent", "COUNT ") + str(args["n"])

        def render_result(result, options, theme, context):
            if result.details["n"] == 13:
                raise ValueError("unlucky")
            return "RESULT " + str(result.details["n"])

        wolli.register_tool({
            "name": "count", "description": "Count", "execute": execute,
            "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            "render_call": render_call, "render_result": render_result,
        })

        def render_note(message, options, theme):
            return "NOTE: " + message.content

        wolli.register_message_renderer("note", render_note)

        async def send(args, ctx):
            await ctx.session.send_message({"custom_type": args or "note", "content": "remember", "display": True})

        wolli.register_command("send", description="send a custom message", handler=send)
""")


async def test_tool_renderers_take_their_slots_and_a_raising_one_falls_back(make_app, faux, tmp_path):
    app = make_app(code={"rendering": RENDERING})
    async with running(app) as pilot:
        faux.push([faux_tool_call("count", {"n": 7}), faux_tool_call("count", {"n": 13})], "done")
        await type_and_send(pilot, "count")
        await idle_after(app, pilot, 5)
        first, second = list(app.query(ToolRow))
        assert str(first.header.render()) == "COUNT 7" and str(first.body.render()) == "RESULT 7"
        body = str(second.body.render())
        assert "counted 13" in body and "render_result of count failed: ValueError: unlucky" in body


async def test_custom_messages_use_their_renderer_or_the_boxed_fallback(make_app, tmp_path):
    app = make_app(code={"rendering": RENDERING})
    async with running(app) as pilot:
        await type_and_send(pilot, "/send")
        await wait_until(lambda: len(app.query(CustomMessageView)) == 1, 5, "the note")
        await type_and_send(pilot, "/send other")
        await wait_until(lambda: len(app.query(CustomMessageView)) == 2, 5, "the second")
        note, other = list(app.query(CustomMessageView))
        assert str(note.render()) == "NOTE: remember"
        assert str(other.render()).startswith("[other]") and "remember" in str(other.render())


async def test_a_new_session_from_an_extension_switches_the_transcript(make_app, faux, tmp_path):
    ext = tmp_path / "fresh.py"
    ext.write_text(textwrap.dedent("""
        def extension(wolli):
            async def fresh(args, ctx):
                await ctx.session.new_session()
            wolli.register_command("fresh", description="start over", handler=fresh)
    """))
    app = make_app(extensions=[str(ext)])
    async with running(app) as pilot:
        faux.push("first answer", "second answer")
        await type_and_send(pilot, "in the first session")
        await idle_after(app, pilot, 2)
        first = app.controller.session
        await type_and_send(pilot, "/fresh")
        await wait_until(lambda: app.controller.session is not first, 5, "the new session")
        await wait_until(lambda: not app.query(UserMessageView), 5, "an empty transcript")
        await type_and_send(pilot, "in the second session")
        await idle_after(app, pilot, 2)
        assert [u.text for u in app.query(UserMessageView)] == ["in the second session"]
        assert "second answer" in app.query(AssistantMessageView).last().markdown_text


OVERRIDE = textwrap.dedent("""
    def extension(wolli):
        def execute(tool_call_id, params, signal, on_update, ctx):
            return "overridden read of " + params["path"]

        wolli.register_tool({
            "name": "read", "description": "Read (audited)", "execute": execute,
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            "render_result": lambda result, options, theme, context: "AUDITED " + result.content[0].text,
        })

        async def hidden(args, ctx):
            await ctx.session.send_message({"custom_type": "secret", "content": "not shown", "display": False})
            await ctx.session.send_message({"custom_type": "shown", "content": "shown note", "display": True})

        wolli.register_command("notes", description="two notes", handler=hidden)
""")


async def test_an_overriding_tool_inherits_the_builtin_header_and_hidden_messages_stay_hidden(make_app, faux, tmp_path):
    app = make_app(code={"override": OVERRIDE})
    async with running(app) as pilot:
        faux.push([faux_tool_call("read", {"path": "notes.txt"})], "ok")
        await type_and_send(pilot, "read")
        await idle_after(app, pilot, 4)
        row = app.query(ToolRow).first()
        assert str(row.header.render()) == "read notes.txt"  # the built-in header slot
        assert str(row.body.render()) == "AUDITED overridden read of notes.txt"
        await type_and_send(pilot, "/notes")
        await wait_until(lambda: len(app.query(CustomMessageView)) == 1, 5, "the shown note")
        await pilot.pause()
        assert [str(v.render()) for v in app.query(CustomMessageView)] == ["[shown]\nshown note"]


async def test_resumed_history_mounts_a_screenful_and_fills_a_tall_screen(make_app, faux):
    from wolli.modes.tui.widgets.transcript import HISTORY_WINDOW

    app = make_app()
    async with running(app, (100, 30)) as pilot:
        for i in range(40):
            faux.push(f"answer {i}")
            await app.controller.session.prompt(f"question {i}")
        await pilot.pause()
        session_id = app.controller.session.session_id
    short = make_app(session=session_id)
    async with running(short, (100, 30)) as pilot:
        await wait_until(lambda: short.transcript.mounted, 5, "the history")
        await pilot.pause()
        from wolli.modes.tui.widgets.simple_messages import NoticeView

        history = [w for w in short.transcript.mounted if not isinstance(w, NoticeView)]  # not the start-up summary
        assert len(history) == HISTORY_WINDOW  # a screenful, not MAX_MOUNTED
        assert "answer 39" in short.query(AssistantMessageView).last().markdown_text
    tall = make_app(session=session_id)
    async with running(tall, (100, 90)) as pilot:  # ten rows do not fill 90 lines: a page more
        transcript = tall.transcript
        await wait_until(lambda: len(transcript.mounted) > HISTORY_WINDOW, 5, "the page above")
        await wait_until(lambda: transcript.max_scroll_y > 0, 5, "a screen filled")
        assert transcript.hidden_count == len(transcript.items) - len(transcript.mounted)
