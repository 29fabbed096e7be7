"""Text from extensions, tools and models is shown literally in every surface of the TUI:
``[draft]`` stays, ``[/x]`` is text and never a MarkupError that ends the app."""

from __future__ import annotations

import asyncio
import textwrap

from textual.command import CommandList, CommandPalette
from textual.widgets import Input, OptionList, Static

from tests.support.waiting import wait_until
from wolli.ai.providers.faux import faux_text, faux_thinking, faux_tool_call
from wolli.modes.tui.screens.confirm_dialog import ConfirmDialog
from wolli.modes.tui.screens.dialog_base import TimedDialog
from wolli.modes.tui.widgets.assistant_message import AssistantMessageView
from wolli.modes.tui.widgets.simple_messages import CustomMessageView
from wolli.modes.tui.widgets.tool_row import ToolRow
from wolli.modes.tui.widgets.user_message import UserMessageView

from .helpers import idle_after, running, type_and_send

MARKUP = "[draft] [bold]b[/bold] [/x] [link=x]"

SURFACES = textwrap.dedent(f"""
    MARKUP = {MARKUP!r}

    def extension(wolli):
        def echo(tool_call_id, params, signal, on_update, ctx):
            return "out " + MARKUP

        wolli.register_tool({{"name": "echo", "description": "Echo", "execute": echo,
                             "parameters": {{"type": "object", "properties": {{"q": {{"type": "string"}}}}}}}})

        async def show(args, ctx):
            ui = ctx.ui
            ui.notify("saved " + MARKUP)
            ui.set_status("s", "status " + MARKUP)
            ui.set_widget("w", ["widget " + MARKUP, "[/y]"])
            ui.set_widget("f", lambda app, theme: "factory " + MARKUP, placement="below_editor")
            ui.set_title("title " + MARKUP)
            ui.set_working_message("working " + MARKUP)
            ctx.session.set_session_name("name " + MARKUP)
            await ctx.session.send_message({{"custom_type": "[/t]", "content": "custom " + MARKUP, "display": True}})

        wolli.register_command("show", handler=show, description="desc " + MARKUP)
""")


def _text(widget) -> str:
    return str(widget.render())


async def test_extension_text_is_literal_in_notify_status_widgets_title_footer_and_messages(make_app):
    app = make_app(code={"surfaces": SURFACES})
    async with running(app, (140, 40), notifications=True) as pilot:
        await type_and_send(pilot, "/show")
        await wait_until(lambda: app.query(CustomMessageView), 5, "the custom message")
        await pilot.pause()
        assert [n.message for n in app._notifications] == ["saved " + MARKUP]
        await wait_until(lambda: app.screen.query("Toast"), 5, "the toast")
        assert "saved " + MARKUP in _text(app.screen.query("Toast").first())
        footer = _text(app.footer)
        assert "status " + MARKUP in footer and "name " + MARKUP in footer
        assert _text(app.slot_above.widgets["w"]) == f"widget {MARKUP}\n[/y]"
        assert _text(app.slot_below.widgets["f"]) == "factory " + MARKUP
        assert app.title == "title " + MARKUP
        app.working.start()
        assert "working " + MARKUP in _text(app.working)
        app.working.stop()
        shown = _text(app.query(CustomMessageView).first())
        assert shown.startswith("[[/t]]") and "custom " + MARKUP in shown
        assert app.is_running


async def test_tool_and_model_text_is_literal_in_rows_and_the_transcript(make_app, faux):
    app = make_app(code={"surfaces": SURFACES})
    async with running(app, (140, 40)) as pilot:
        faux.push([faux_thinking("think " + MARKUP), faux_tool_call("echo", {"q": MARKUP})],
                  [faux_text("answer " + MARKUP)])
        await type_and_send(pilot, "typed " + MARKUP)
        await idle_after(app, pilot, 4)
        assert _text(app.query(UserMessageView).first()).startswith("typed " + MARKUP)
        row = app.query(ToolRow).first()
        assert MARKUP.replace('"', "") in _text(row.header).replace('\\"', '"').replace('"', "")
        assert "out " + MARKUP in _text(row.body)
        answer = app.query(AssistantMessageView).last()
        assert "answer " + MARKUP in answer.markdown_text
        assert app.is_running


async def test_dialog_titles_options_and_the_palette_are_literal(make_app):
    app = make_app(code={"surfaces": SURFACES})
    async with running(app, (140, 40)) as pilot:
        asked = asyncio.ensure_future(app.ui.select("pick " + MARKUP, ["[a]", "[/b]", {"label": "[/c]", "value": 3}]))
        await wait_until(lambda: isinstance(app.screen, TimedDialog) and app.screen.query(OptionList), 5, "select")
        options = app.screen.query_one(OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert labels == ["[a]", "[/b]", "[/c]"]
        assert any(_text(s) == "pick " + MARKUP for s in app.screen.query(Static))
        await pilot.press("down", "down", "enter")
        assert await asked == 3

        asked = asyncio.ensure_future(app.ui.confirm("sure " + MARKUP, "message " + MARKUP))
        await wait_until(lambda: isinstance(app.screen, ConfirmDialog), 5, "confirm")
        statics = [_text(s) for s in app.screen.query(Static)]
        assert "sure " + MARKUP in statics and "message " + MARKUP in statics
        await pilot.press("n")
        assert await asked is False

        asked = asyncio.ensure_future(app.ui.input("input " + MARKUP, "placeholder " + MARKUP))
        await wait_until(lambda: isinstance(app.screen, TimedDialog) and app.screen.query(Input), 5, "input")
        await pilot.press("escape")
        assert await asked is None

        await pilot.press("ctrl+s")
        await wait_until(lambda: CommandPalette.is_open(app), 5, "the palette")
        await pilot.press(*"/show")
        results = app.screen.query_one(CommandList)
        await wait_until(lambda: results.option_count >= 1, 5, "a search result")
        prompt = str(results.get_option_at_index(0).prompt)
        assert "/show" in prompt and "desc " + MARKUP in prompt
        await pilot.press("escape")
        assert app.is_running


async def test_completion_menu_shows_descriptions_literally(make_app):
    app = make_app(code={"surfaces": SURFACES})
    async with running(app, (140, 40)) as pilot:
        await pilot.press(*"/sho")
        menu = app.completion.menu
        await wait_until(lambda: menu.open and menu.current()["value"] == "/show", 5, "the /show entry")
        prompt = str(menu.get_option_at_index(menu.highlighted or 0).prompt)
        assert "desc " + MARKUP in prompt


async def test_a_session_name_with_a_newline_leaves_the_footer_two_lines(make_app):
    # /name typed with Ctrl+J (or set by an extension) held a newline: the name's second half
    # took the footer's second row and pushed the tokens, context and model off screen. A name
    # is one line now (its newline a space); a status with one shows it as a picture.
    app = make_app()
    async with running(app, (100, 30)) as pilot:
        await pilot.press(*"/name first", "ctrl+j", *"second", "enter")
        await wait_until(lambda: "first" in _text(app.footer), 5, "the name in the footer")
        app.surface.set_status("ext", "busy\nbee")
        await wait_until(lambda: "busy" in _text(app.footer), 5, "the status in the footer")
        lines = _text(app.footer).split("\n")
        assert len(lines) == 2, lines
        assert "first second" in lines[0] and "busy␊bee" in lines[0] and "faux" in lines[1]


async def test_html_in_an_answer_is_shown_as_text_not_dropped(make_app, faux):
    # Markdown's HTML (on in the gfm-like preset) has no widget in Textual: a tag in prose and
    # a whole HTML block vanished ("List<String>" showed as "List", "<div>…</div>" as nothing).
    app = make_app()
    async with running(app, (100, 30)) as pilot:
        faux.push("Wrap it in a <details> element; List<String> too.\n\n<div align=\"center\">\nblock text\n</div>")
        await type_and_send(pilot, "html")
        await idle_after(app, pilot, 2)
        await wait_until(lambda: "too." in _screen(app), 5, "the answer on screen")
        screen = _screen(app)
        assert "a <details> element; List<String> too." in screen, screen
        assert '<div align="center">' in screen and "block text" in screen, screen


def _screen(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def test_a_file_name_with_a_newline_keeps_the_tool_header_on_one_row(make_app, faux, project):
    # "read new\nline.txt" read as a header "read new" and a first result line "line.txt".
    (project / "new\nline.txt").write_text("content\n")
    app = make_app()
    async with running(app, (100, 30)) as pilot:
        faux.push([faux_tool_call("read", {"path": "new\nline.txt"})], "done")
        await type_and_send(pilot, "read it")
        await idle_after(app, pilot, 4)
        header = _text(app.query(ToolRow).first().header)
        assert header == "read new␊line.txt", header
