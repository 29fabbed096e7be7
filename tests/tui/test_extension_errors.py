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
            raise ValueError("no plan yet")

        def on_input(event, ctx):
            if event.text == "trigger":
                raise KeyError("handler broke")

        wolli.register_command("plan", handler=explode, description="fails")
        wolli.register_command("later", handler=explode, description="off", availability="disabled",
                               disabled_reason="not today")
        wolli.on("input", on_input)
""")


def _notices(app) -> list[str]:
    return [str(n.render()) for n in app.query(NoticeView)]


async def test_a_command_that_raises_is_one_line_and_the_editor_stays_empty(make_app, wolli_home):
    app = make_app(code={"failing": FAILING})
    async with running(app) as pilot:
        await type_and_send(pilot, "/plan now")
        await wait_until(lambda: any("/plan failed" in n for n in _notices(app)), 5, "the failure")
        assert "failing: /plan failed: ValueError: no plan yet" in _notices(app)
        await pilot.pause()
        assert app.editor.text == "" and not app.completion.menu.open  # Enter does not run it again
        log = (wolli_home / "agents" / "default" / "logs" / "extensions.log").read_text()
        assert "/plan failed" in log and "Traceback" in log and 'raise ValueError("no plan yet")' in log

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
