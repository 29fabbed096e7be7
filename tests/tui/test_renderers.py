"""Extension renderers that raise never reach the user as a traceback: live and on resume the
built-in rendering is used with one error line in place, and the traceback is logged."""

from __future__ import annotations

import textwrap

import pytest

from tests.support.waiting import wait_until
from wolli.ai.providers.faux import faux_tool_call
from wolli.modes.tui.widgets.simple_messages import CustomMessageView, NoticeView
from wolli.modes.tui.widgets.tool_row import ToolRow

from .helpers import idle_after, running, type_and_send

BROKEN = textwrap.dedent("""
    from rich.text import Text
    from textual.widgets import Static


    class BadWidget(Static):
        def render(self):
            raise ZeroDivisionError("cannot draw myself")


    class BadParts(Static):
        def compose(self):
            yield Static("first part")
            raise AttributeError("no second part")


    class Exploding:
        '''A Rich renderable that fails only when it is drawn.'''

        def __rich_console__(self, console, options):
            raise RuntimeError("drawn too late")
            yield ""


    def extension(wolli):
        def execute(tool_call_id, params, signal, on_update, ctx):
            return "counted " + str(params["n"])

        def render_call(args, theme, context):
            if args["n"] == 1:
                raise KeyError("missing")
            if args["n"] == 3:
                return Static("WIDGET HEADER " + str(context.args["n"]))
            context.state["seen"] = True
            return Text("[draft] " + str(args["n"]))

        def render_result(result, options, theme, context):
            if context["args"]["n"] == 2:
                return Exploding()
            return "RESULT [/x] shared=" + str(context.state.get("seen"))

        wolli.register_tool({
            "name": "count", "description": "Count", "execute": execute,
            "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            "render_call": render_call, "render_result": render_result,
        })

        def note(message, options, theme):
            raise ValueError("bad note")

        wolli.register_message_renderer("note", note)

        async def send(args, ctx):
            await ctx.session.send_message({"custom_type": "note", "content": "remember [this]", "display": True})

        async def decorate(args, ctx):
            def widget(app, theme):
                raise OSError("no widget today")

            def footer(app, theme):
                raise LookupError("no footer today")

            ctx.ui.set_widget("deco", widget)
            ctx.ui.set_widget("bad", lambda app, theme: BadWidget(), placement="belowEditor")
            ctx.ui.set_widget("parts", lambda app, theme: BadParts())
            ctx.ui.set_footer(footer)

        wolli.register_command("send", description="send a note", handler=send)
        wolli.register_command("decorate", description="broken widget and footer", handler=decorate)
""")


def _log(wolli_home) -> str:
    return (wolli_home / "agents" / "default" / "logs" / "extensions.log").read_text()


def _texts(app, cls) -> list[str]:
    return [str(w.render()) for w in app.query(cls)]


async def test_tool_renderers_that_raise_fall_back_in_place_live_and_on_resume(make_app, faux, wolli_home):
    app = make_app(code={"broken": BROKEN})
    async with running(app, (100, 40)) as pilot:
        faux.push([faux_tool_call("count", {"n": 1}), faux_tool_call("count", {"n": 2}),
                   faux_tool_call("count", {"n": 3}), faux_tool_call("count", {"n": 4})], "done")
        await type_and_send(pilot, "count")
        await idle_after(app, pilot, 7)
        first, second, third, fourth = list(app.query(ToolRow))
        header = str(first.header.render())
        assert header.startswith("count") and "broken: render_call of count failed: KeyError: 'missing'" in header
        assert "counted 1" not in header
        assert "broken: render_result of count failed: RuntimeError: drawn too late" in _painted(app, second)
        assert str(third.widgets["render_call"].render()) == "WIDGET HEADER 3"
        assert str(fourth.header.render()) == "[draft] 4"  # a Text: no markup
        assert str(fourth.body.render()) == "RESULT [/x] shared=True"
        assert not any("failed" in n for n in _texts(app, NoticeView))  # in place, not in the transcript
        session_id = app.controller.session.session_id
    assert "KeyError: 'missing'" in _log(wolli_home) and "Traceback" in _log(wolli_home)

    resumed = make_app(code={"broken": BROKEN}, session=session_id)
    async with running(resumed, (100, 40)) as pilot:
        await wait_until(lambda: len(resumed.query(ToolRow)) == 4, 5, "the history")
        await pilot.pause()
        rows = list(resumed.query(ToolRow))
        assert "render_call of count failed: KeyError" in str(rows[0].header.render())
        assert str(rows[0].body.render()) == "RESULT [/x] shared=None"
        assert resumed.is_running


def _painted(app, widget) -> str:
    """The text the widget shows on screen (after Rich rendered it)."""
    lines = widget.body.render_lines(widget.body.region.reset_offset) if widget.body.region.height else []
    return "\n".join(line.text for line in lines)


async def test_a_message_renderer_widget_or_footer_that_raises_is_one_line_in_place(make_app, wolli_home):
    app = make_app(code={"broken": BROKEN})
    async with running(app, (100, 30)) as pilot:
        await type_and_send(pilot, "/send")
        await wait_until(lambda: app.query(CustomMessageView), 5, "the note")
        shown = str(app.query(CustomMessageView).first().render())
        assert shown.startswith("[note]") and "remember [this]" in shown
        assert "broken: the renderer of 'note' messages failed: ValueError: bad note" in shown
        await type_and_send(pilot, "/decorate")
        await wait_until(lambda: app.slot_above.widgets, 5, "the widget slot")
        await pilot.pause()
        assert "broken: the widget 'deco' failed: OSError: no widget today" in str(app.slot_above.widgets["deco"].render())
        assert "broken: the widget 'bad' failed: ZeroDivisionError" in str(app.slot_below.widgets["bad"].render())
        await wait_until(lambda: app.slot_above.widgets["parts"].children, 5, "the composed widget")
        parts = [str(w.render()) for w in app.slot_above.widgets["parts"].children]
        assert len(parts) == 1 and "broken: the widget 'parts' failed: AttributeError: no second part" in parts[0]
        assert app.footer.display  # the built-in footer stays, the error under it
        footer_texts = [str(w.render()) for w in app.footer_area.children if w is not app.footer]
        assert any("broken: the footer failed: LookupError: no footer today" in t for t in footer_texts)
        assert app.is_running
    log = _log(wolli_home)
    assert "ValueError: bad note" in log and "OSError: no widget today" in log and "LookupError" in log


async def test_a_row_that_cannot_be_built_becomes_one_line(make_app):
    app = make_app()
    async with running(app) as pilot:
        def broken():
            raise RuntimeError("cannot build")

        app.transcript.add_lazy([broken])
        await pilot.pause()
        assert any("drawing a transcript row failed: RuntimeError: cannot build" in t
                   for t in [str(w.render()) for w in app.transcript.mounted])


async def test_the_exit_status_is_not_zero_after_an_unhandled_error(make_app):
    from wolli.modes.tui import exit_status

    app = make_app()
    with pytest.raises(ZeroDivisionError):  # Pilot raises what ended the app
        async with running(app):
            app.call_later(lambda: 1 / 0)  # an error nothing catches: Textual ends the app
            await wait_until(lambda: app.return_code is not None, 5, "the app to end")
    assert exit_status(app, None) == 1
    clean = make_app()
    async with running(clean):
        clean.exit(0)
    assert exit_status(clean, 0) == 0
