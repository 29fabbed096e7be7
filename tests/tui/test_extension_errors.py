"""Extension errors you can act on: one line naming the extension, what failed and the
exception; the traceback in logs/extensions.log; the editor left empty."""

from __future__ import annotations

import textwrap

from tests.support.waiting import wait_until
from wolli.modes.tui.widgets.simple_messages import NoticeView

from .helpers import running, type_and_send

FAILING = textwrap.dedent("""
    def extension(wolli):
        def explode(args, ctx):
            raise ValueError("no review yet")

        def on_input(event, ctx):
            if event.text == "trigger":
                raise KeyError("handler broke")

        wolli.register_command("review", handler=explode, description="fails")
        wolli.register_command("later", handler=explode, description="off", availability="disabled",
                               disabled_reason="not today")
        wolli.on("input", on_input)
""")


def _notices(app) -> list[str]:
    return [str(n.render()) for n in app.query(NoticeView)]


async def test_a_command_that_raises_is_one_line_and_the_editor_stays_empty(make_app, wolli_home):
    app = make_app(code={"failing": FAILING})
    async with running(app) as pilot:
        await type_and_send(pilot, "/review now")
        await wait_until(lambda: any("/review failed" in n for n in _notices(app)), 5, "the failure")
        assert "failing: /review failed: ValueError: no review yet" in _notices(app)
        await pilot.pause()
        assert app.editor.text == "" and not app.completion.menu.open  # Enter does not run it again
        log = (wolli_home / "agents" / "default" / "logs" / "extensions.log").read_text()
        assert "/review failed" in log and "Traceback" in log and 'raise ValueError("no review yet")' in log

        await type_and_send(pilot, "/later")
        await wait_until(lambda: any("/later is not available: not today" in n for n in _notices(app)), 5, "why")
        assert app.editor.text == ""


async def test_a_handler_that_raises_names_the_extension_and_logs_the_traceback(make_app, faux, wolli_home):
    app = make_app(code={"failing": FAILING})
    async with running(app) as pilot:
        faux.push("answered anyway")
        await type_and_send(pilot, "trigger")
        await wait_until(lambda: any("input handler failed" in n for n in _notices(app)), 5, "the failure")
        assert "failing: input handler failed: KeyError: 'handler broke'" in _notices(app)
        log = (wolli_home / "agents" / "default" / "logs" / "extensions.log").read_text()
        assert "input handler failed" in log and 'raise KeyError("handler broke")' in log


UI_FACTORIES = textwrap.dedent("""
    def extension(wolli):
        def broken(*args):
            raise ValueError("not drawable")

        def provider(current):
            raise LookupError("no provider today")

        async def decorate(args, ctx):
            ctx.ui.set_widget("w", broken)
            ctx.ui.set_footer(broken)
            ctx.ui.set_editor_component(broken)
            ctx.ui.add_autocomplete_provider(provider)

        async def pick(args, ctx):
            await ctx.ui.custom(broken)

        wolli.register_command("decorate", handler=decorate, description="broken UI factories")
        wolli.register_command("pick", handler=pick, description="a broken custom component")
""")


async def test_a_ui_factory_that_raises_names_its_extension_on_screen_and_in_the_log(make_app, wolli_home):
    app = make_app(code={"decor": UI_FACTORIES})
    async with running(app) as pilot:
        await type_and_send(pilot, "/decorate")
        await wait_until(lambda: "w" in app.slot_above.widgets, 5, "the widget slot")
        await wait_until(lambda: any("the custom editor failed" in n for n in _notices(app)), 5, "the editor's failure")
        assert "decor: the widget 'w' failed: ValueError: not drawable" in str(app.slot_above.widgets["w"].render())
        footer = [str(w.render()) for w in app.footer_area.children if w is not app.footer]
        assert footer == ["decor: the footer failed: ValueError: not drawable"]
        assert "decor: the custom editor failed: ValueError: not drawable" in _notices(app)
        await pilot.press(*"see #")  # the provider stack is built for the first completion
        await wait_until(lambda: any("autocomplete provider failed" in n for n in _notices(app)), 5, "the provider")
        assert "decor: the autocomplete provider failed: LookupError: no provider today" in _notices(app)
        app.editor.text = ""
        await type_and_send(pilot, "/pick")
        await wait_until(lambda: any("a custom component failed" in n for n in _notices(app)), 5, "the component")
        assert "decor: a custom component failed: ValueError: not drawable" in _notices(app)
        assert app.is_running
    log = (wolli_home / "agents" / "default" / "logs" / "extensions.log").read_text()
    for what in ("the widget 'w'", "the footer", "the custom editor", "the autocomplete provider",
                 "a custom component"):
        assert f"wolli.extension.decor: {what} failed" in log
    assert "wolli.extension.extension:" not in log
