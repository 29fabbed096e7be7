"""Smaller things an extension author runs into: the cursor after text is put into the editor,
what /reload and auto-reload leave behind, open_url without a browser, where toasts and
dialogs sit."""

from __future__ import annotations

import asyncio
import json
import textwrap

from textual.widgets import TextArea

from tests.support.waiting import wait_until
from wolli.ai.providers.faux import faux_hang
from wolli.modes.tui.screens.dialog_base import TimedDialog
from wolli.modes.tui.widgets.simple_messages import NoticeView

from .helpers import running, type_and_send


def _notices(app) -> list[str]:
    return [str(n.render()) for n in app.query(NoticeView)]


async def test_text_put_into_the_editor_leaves_the_cursor_at_its_end(make_app, faux):
    app = make_app()
    async with running(app) as pilot:
        app.ui.set_editor_text("from an extension")
        await pilot.pause()
        assert app.editor.cursor_location == (0, len("from an extension"))

        faux.push(faux_hang())  # a run that waits: messages typed now are queued
        await type_and_send(pilot, "start working")
        await wait_until(lambda: not app.controller.session.is_idle(), 5, "the run")
        await type_and_send(pilot, "queued one")
        await type_and_send(pilot, "queued two")
        await wait_until(lambda: app.queued.display, 5, "the queue")
        await pilot.press("escape")  # the queued messages come back
        await wait_until(lambda: app.editor.text == "queued one\nqueued two", 5, "the restored text")
        assert app.editor.cursor_location == (1, len("queued two"))

        asked = asyncio.ensure_future(app.ui.editor("Edit", "line one\nline two"))
        await wait_until(lambda: isinstance(app.screen, TimedDialog), 5, "the editor dialog")
        await pilot.pause()
        field = app.screen.query_one(TextArea)
        assert field.cursor_location == (1, len("line two"))
        await pilot.press(*"!", "ctrl+s")
        assert await asked == "line one\nline two!"


PROVIDER_V1 = textwrap.dedent("""
    def extension(wolli):
        def provider(current):
            class Issues:
                trigger_characters = ["#"]

                async def get_suggestions(self, lines, line, col, options):
                    before = lines[line][:col]
                    if before.endswith("#"):
                        return {"prefix": "#", "items": [{"value": "#2983", "label": "#2983"}]}
                    return await current.get_suggestions(lines, line, col, options)

                def apply_completion(self, lines, line, col, item, prefix):
                    return current.apply_completion(lines, line, col, item, prefix)

            return Issues()

        def start(event, ctx):
            ctx.ui.add_autocomplete_provider(provider)
            ctx.ui.set_status("v1", "from v1")
            ctx.ui.set_widget("v1", ["widget of v1"])

        wolli.on("session_start", start)
""")
PROVIDER_V2 = textwrap.dedent("""
    def extension(wolli):
        wolli.register_command("v2", handler=lambda args, ctx: None, description="the new version")
""")


async def test_reload_removes_what_the_old_version_registered_with_the_ui(make_app, project):
    app = make_app(code={"issues": PROVIDER_V1})
    async with running(app) as pilot:
        menu = app.completion.menu
        await pilot.press("#")
        await wait_until(lambda: menu.open and menu.current()["value"] == "#2983", 5, "the provider's suggestion")
        await pilot.press("escape", "ctrl+c")
        assert "from v1" in str(app.footer.render()) and "v1" in app.slot_above.widgets
        (project.parent / "issues.py").write_text(PROVIDER_V2)
        await type_and_send(pilot, "/reload")
        await wait_until(lambda: "v2" in app.controller.host.commands, 5, "the reload")
        await pilot.pause()
        assert app.ui.autocomplete_providers == []
        assert "from v1" not in str(app.footer.render()) and not app.slot_above.widgets
        await pilot.press("#")
        await pilot.pause(0.3)
        assert not menu.open


async def test_open_url_without_a_browser_shows_the_url(make_app, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = make_app()
    async with running(app):
        app.ui.open_url("https://example.com/docs?a=[1]")
        await wait_until(lambda: any("https://example.com/docs?a=[1]" in n for n in _notices(app)), 5, "the URL")
        assert "Open this link in a browser: https://example.com/docs?a=[1]" in _notices(app)


async def test_toasts_cover_neither_editor_nor_footer_and_dialogs_dim_the_screen(make_app):
    app = make_app()
    async with running(app, (80, 24), notifications=True) as pilot:
        app.notify("a toast " * 6)
        await wait_until(lambda: app.screen.query("Toast"), 5, "the toast")
        await pilot.pause()
        toast = app.screen.query_one("Toast").region
        for widget in (app.editor, app.footer):
            assert not toast.overlaps(widget.region), (toast, widget.region)
        asked = asyncio.ensure_future(app.ui.confirm("Sure?", "really"))
        await wait_until(lambda: isinstance(app.screen, TimedDialog), 5, "the dialog")
        await pilot.pause()
        assert app.screen.styles.background.a >= 0.8  # the transcript behind reads as dimmed
        await pilot.press("n")
        assert await asked is False


BROKEN_LATER = textwrap.dedent("""
    def extension(wolli):
        wolli.register_command("fine", handler=lambda args, ctx: None)
""")


async def test_auto_reload_says_what_failed_and_the_setting_applies_at_once(make_app, project, wolli_home):
    (wolli_home / "settings.json").write_text(json.dumps({"autoReload": True}))
    app = make_app(code={"live": BROKEN_LATER})
    async with running(app):
        host = app.controller.host
        await wait_until(lambda: host.auto_reloader is not None, 5, "the watcher")
        await asyncio.wait_for(host.auto_reloader.ready.wait(), 10)
        (project.parent / "live.py").write_text("def extension(wolli):\n    return 1 +\n")
        await wait_until(lambda: any("auto-reload:" in n and "live.py:2: SyntaxError" in n for n in _notices(app)),
                         15, "the failure notice")
        host.settings.update({"autoReload": False})  # what /settings does
        await wait_until(lambda: host.auto_reloader is None, 5, "the watcher to stop")
        host.settings.update({"autoReload": True})
        await wait_until(lambda: host.auto_reloader is not None, 5, "the watcher to start again")


RECORDS_BEHAVIOR = textwrap.dedent("""
    seen = []

    def extension(wolli):
        def on_input(event, ctx):
            seen.append((event.text, event.streaming_behavior))

        wolli.on("input", on_input)
""")


async def test_an_input_handler_sees_follow_up_and_steer_as_in_every_mode(make_app, faux):
    import sys

    app = make_app(code={"behavior": RECORDS_BEHAVIOR})
    async with running(app) as pilot:
        faux.push(faux_hang())
        await type_and_send(pilot, "start")
        await wait_until(lambda: not app.controller.session.is_idle(), 5, "the run")
        await type_and_send(pilot, "steer this")
        await pilot.press(*"follow that", "alt+enter")
        record = next(r for r in app.controller.host.extensions.registry.records if r.name == "behavior")
        seen = sys.modules[record.module_name].seen
        await wait_until(lambda: len(seen) == 3, 5, "three inputs")
        assert seen == [("start", None), ("steer this", "steer"), ("follow that", "follow_up")]
        await pilot.press("escape")
