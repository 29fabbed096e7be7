"""``ctx.ui`` dialogs in the TUI: answer, cancel, timeout, abort signal, two at once, and an
extension's confirm during a real tool call."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import Input, OptionList

from tests.support.waiting import wait_until
from wolli.ai.abort import AbortController
from wolli.ai.providers.faux import faux_tool_call
from wolli.modes.tui.screens.confirm_dialog import ConfirmDialog
from wolli.modes.tui.screens.dialog_base import TimedDialog
from wolli.modes.tui.widgets.tool_row import ToolRow

from .helpers import idle_after, running, type_and_send

EXAMPLES = Path(__file__).resolve().parents[2] / "extensions"


async def _dialog_open(app, cls=TimedDialog):
    await wait_until(lambda: isinstance(app.screen, cls), 5, f"a {cls.__name__}")
    return app.screen


async def test_confirm_answers_yes_with_y_and_no_with_escape(make_app):
    app = make_app()
    async with running(app) as pilot:
        asked = asyncio.ensure_future(app.ui.confirm("Delete?", "really"))
        await _dialog_open(app, ConfirmDialog)
        await pilot.press("y")
        assert await asked is True
        asked = asyncio.ensure_future(app.ui.confirm("Delete?", "really"))
        await _dialog_open(app, ConfirmDialog)
        await pilot.press("escape")
        assert await asked is False
        assert not isinstance(app.screen, TimedDialog)


async def test_select_picks_with_arrows_and_enter_and_input_returns_the_text(make_app):
    app = make_app()
    async with running(app) as pilot:
        asked = asyncio.ensure_future(app.ui.select("Pick", ["red", {"label": "Green", "value": "g"}, "blue"]))
        screen = await _dialog_open(app)
        await wait_until(lambda: screen.query(OptionList), 5, "the options")
        await pilot.press("down", "enter")
        assert await asked == "g"
        asked = asyncio.ensure_future(app.ui.input("Name?", "type here"))
        screen = await _dialog_open(app)
        await wait_until(lambda: screen.query(Input), 5, "the input")
        await pilot.press(*"wolli", "enter")
        assert await asked == "wolli"


async def test_editor_dialog_returns_the_edited_text_or_none(make_app):
    app = make_app()
    async with running(app) as pilot:
        asked = asyncio.ensure_future(app.ui.editor("Edit", "draft"))
        await _dialog_open(app)
        await pilot.press("end", *" two", "ctrl+s")
        assert await asked == "draft two"
        asked = asyncio.ensure_future(app.ui.editor("Edit", "draft"))
        await _dialog_open(app)
        await pilot.press("escape")
        assert await asked is None


async def test_a_timeout_counts_down_and_answers_the_cancel_value(make_app):
    app = make_app()
    async with running(app) as pilot:
        asked = asyncio.ensure_future(app.ui.confirm("Quick?", timeout=0.6))
        screen = await _dialog_open(app, ConfirmDialog)
        await pilot.pause()
        assert "closes in 1s" in str(screen.countdown.render())
        assert await asyncio.wait_for(asked, 5) is False
        asked = asyncio.ensure_future(app.ui.select("Quick?", ["a"], timeout=0.3))
        assert await asyncio.wait_for(asked, 5) is None


async def test_an_abort_signal_closes_the_dialog(make_app):
    app = make_app()
    async with running(app):
        controller = AbortController()
        asked = asyncio.ensure_future(app.ui.input("Wait", signal=controller.signal))
        await _dialog_open(app)
        controller.abort()
        assert await asyncio.wait_for(asked, 5) is None
        await wait_until(lambda: not isinstance(app.screen, TimedDialog), 5, "the dialog to close")


async def test_two_dialogs_at_once_queue_instead_of_overlapping(make_app):
    app = make_app()
    async with running(app) as pilot:
        first = asyncio.ensure_future(app.ui.confirm("First?"))
        second = asyncio.ensure_future(app.ui.confirm("Second?"))
        screen = await _dialog_open(app, ConfirmDialog)
        assert screen.title_text == "First?"
        assert sum(isinstance(s, TimedDialog) for s in app.screen_stack) == 1
        await pilot.press("y")
        assert await first is True
        screen = await _dialog_open(app, ConfirmDialog)
        await wait_until(lambda: app.screen.title_text == "Second?", 5, "the second dialog")
        await pilot.press("n")
        assert await second is False


async def test_the_permission_gate_asks_in_the_tui_and_a_no_blocks_the_command(make_app, faux, project):
    app = make_app(extensions=[str(EXAMPLES / "permission_gate.py")])
    async with running(app) as pilot:
        (project / "build").mkdir()
        faux.push([faux_tool_call("bash", {"command": "rm -rf build"})], "understood")
        await type_and_send(pilot, "clean up")
        screen = await _dialog_open(app, ConfirmDialog)
        assert "rm -rf build" in screen.message
        await pilot.press("n")
        await idle_after(app, pilot, 4)
        assert (project / "build").is_dir()
        row = app.query(ToolRow).first()
        assert row.state == "error" and "did not allow" in str(row.body.render())


async def test_a_dialog_asked_from_a_worker_thread_is_answered_on_the_app(make_app):
    app = make_app()
    async with running(app) as pilot:
        # A sync tool running in a thread has no loop of its own: it runs the dialog with asyncio.run.
        asked = asyncio.ensure_future(asyncio.to_thread(lambda: asyncio.run(app.ui.confirm("From a thread?"))))
        await _dialog_open(app, ConfirmDialog)
        await pilot.press("y")
        assert await asyncio.wait_for(asked, 5) is True
