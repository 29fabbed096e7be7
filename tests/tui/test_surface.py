"""What extensions draw on besides dialogs: widgets, footer, custom components, the editor,
the working row, notices, themes and shortcuts."""

from __future__ import annotations

import asyncio
import textwrap

from textual.widgets import Static

from tests.support.waiting import wait_until
from wolli.modes.tui.custom_editor import CustomEditor

from .helpers import idle_after, running, type_and_send


async def test_widgets_go_above_or_below_the_editor_and_a_failing_factory_shows_its_error(make_app):
    app = make_app()
    async with running(app) as pilot:
        app.ui.set_widget("todo", ["1. write tests", "2. ship"])
        app.ui.set_widget("below", lambda app_, theme: Static("under the editor"), placement="below_editor")

        def broken(app_, theme):
            raise RuntimeError("no data")

        app.ui.set_widget("broken", broken)
        await pilot.pause()
        above = app.slot_above.widgets
        assert "1. write tests" in str(above["todo"].render()) and "no data" in str(above["broken"].render())
        assert str(app.slot_below.widgets["below"].render()) == "under the editor"
        assert app.slot_above.region.y < app.editor.region.y < app.slot_below.region.y
        app.ui.set_widget("todo", None)
        await pilot.pause()
        assert "todo" not in app.slot_above.widgets


async def test_set_footer_replaces_the_footer_and_none_restores_it(make_app):
    app = make_app()
    async with running(app) as pilot:
        app.ui.set_footer(lambda app_, theme: Static("my footer"))
        await pilot.pause()
        assert not app.footer.display
        assert any(str(w.render()) == "my footer" for w in app.footer_area.query(Static))
        app.ui.set_footer(None)
        await pilot.pause()
        assert app.footer.display and len(app.footer_area.children) == 1


async def test_custom_replaces_the_editor_until_done(make_app):
    app = make_app()
    async with running(app) as pilot:

        class Picker(Static):
            can_focus = True

            def __init__(self, done, keys):
                super().__init__("press enter")
                self.done = done
                self.keys = keys

            def on_key(self, event):
                if self.keys.matches(event.key, "tui.select.confirm"):
                    event.stop()
                    self.done("picked")

        result = asyncio.ensure_future(app.ui.custom(lambda app_, theme, keys, done: Picker(done, keys)))
        await wait_until(lambda: app.custom_widget is not None, 5, "the custom component")
        assert not app.editor.display and app.focused is app.custom_widget
        await pilot.press("enter")
        assert await result == "picked"
        assert app.editor.display and app.custom_widget is None


async def test_editor_text_get_set_paste_and_a_custom_editor_keeps_the_app_keys(make_app, faux):
    app = make_app()
    async with running(app) as pilot:
        app.ui.set_editor_text("hello")
        app.ui.paste_to_editor(" world")
        assert app.ui.get_editor_text() == "hello world"

        class Shouting(CustomEditor):
            async def _on_key(self, event):
                if event.is_printable and event.character and event.character.isalpha():
                    event.prevent_default()
                    event.stop()
                    self.insert(event.character.upper())
                    return
                await super()._on_key(event)  # Enter still sends

        app.ui.set_editor_component(lambda app_, theme, keys: Shouting())
        await pilot.pause()
        assert isinstance(app.editor, Shouting) and app.editor.text == "hello world"
        app.editor.clear_all()
        faux.push("ok")
        await pilot.press(*"hi", "enter")
        await wait_until(lambda: len(app.controller.session.messages) >= 2, 5, "the prompt")
        assert faux.contexts[-1].messages[-1].content == "HI"
        app.ui.set_editor_component(None)
        await pilot.pause()
        assert type(app.editor).__name__ == "PromptEditor"


async def test_working_message_indicator_and_visibility(make_app):
    app = make_app()
    async with running(app) as pilot:
        working = app.working
        working.start()
        app.ui.set_working_message("Reading the repo")
        app.ui.set_working_indicator(["●"], 500)
        await pilot.pause()
        assert working.display and "● Reading the repo" in str(working.render())
        app.ui.set_working_visible(False)
        assert not working.display
        app.ui.set_working_visible(True)
        working.stop()
        assert not working.display and working._timer is None  # no timer while idle


async def test_notify_titles_tools_expanded_and_themes(make_app):
    app = make_app()
    async with running(app) as pilot:
        app.ui.notify("saved", "warning")
        await pilot.pause()
        assert [n.message for n in app._notifications] == ["saved"]
        app.ui.set_title("wolli · project")
        assert app.title == "wolli · project"
        app.ui.set_tools_expanded(True)
        assert app.ui.get_tools_expanded() is True
        names = [t["name"] for t in app.ui.get_all_themes()]
        assert {"dark", "light"} <= set(names)
        assert app.ui.set_theme("light") == {"success": True} and app.theme == "wolli-light"
        assert app.ui.set_theme("nope")["success"] is False
        styled = app.ui.theme.fg("accent", "x")
        assert styled.startswith("\x1b[38;2;") and styled.endswith("x\x1b[39m")
        assert app.ui.get_theme("dark").color("accent") == app.themes["dark"].color("accent")


async def test_an_extension_shortcut_fires_with_ctx(make_app, tmp_path):
    ext = tmp_path / "keys.py"
    ext.write_text(textwrap.dedent("""
        def extension(wolli):
            def on_key(ctx):
                ctx.ui.notify("shortcut " + ctx.mode)
            wolli.register_shortcut("ctrl+y", description="say hi", handler=on_key)
            wolli.register_shortcut("ctrl+o", description="clashes", handler=on_key)
    """))
    app = make_app(extensions=[str(ext)])
    async with running(app) as pilot:
        await pilot.press("ctrl+y")
        await wait_until(lambda: [n.message for n in app._notifications] == ["shortcut tui"], 5, "the notice")
        from wolli.modes.tui.widgets.simple_messages import NoticeView

        await wait_until(lambda: any("shortcut Ctrl+O is already app.tools.expand" in str(n.render())
                                     for n in app.query(NoticeView)), 5, "the clash notice")
        await pilot.press("ctrl+o")
        assert app.tools_expanded  # the built-in key won


async def test_ui_calls_from_a_worker_thread_reach_the_screen(make_app):
    app = make_app()
    async with running(app) as pilot:
        await asyncio.to_thread(app.ui.set_status, "thread", "from a thread")
        await asyncio.to_thread(app.ui.notify, "thread notice")
        await pilot.pause()
        assert "from a thread" in app.footer.render_text().plain
        assert "thread notice" in [n.message for n in app._notifications]


async def test_prints_become_notices_and_quitting_runs_session_shutdown(make_app, tmp_path):
    ext = tmp_path / "noisy.py"
    marker = tmp_path / "shutdown.txt"
    ext.write_text(textwrap.dedent(f"""
        import sys

        def extension(wolli):
            def started(event, ctx):
                print("hello from an extension")
                print("a warning", file=sys.stderr)

            def stopped(event, ctx):
                open({str(marker)!r}, "w").write(event.reason)

            wolli.on("session_start", started)
            wolli.on("session_shutdown", stopped)
    """))
    from wolli.modes.tui.widgets.simple_messages import NoticeView

    app = make_app(extensions=[str(ext)])
    async with running(app) as pilot:
        await wait_until(lambda: len(app.query(NoticeView)) >= 2, 5, "the notices")
        texts = [str(n.render()) for n in app.query(NoticeView)]
        assert "hello from an extension" in texts and "a warning" in texts
        await pilot.press("ctrl+d")
    assert marker.read_text() == "quit"


async def test_keybindings_json_moves_app_and_editor_keys(make_app, faux, wolli_home):
    import json

    (wolli_home / "keybindings.json").write_text(json.dumps(
        {"app.tools.expand": "ctrl+e", "submit": "ctrl+s", "newline": "enter"}))
    app = make_app()
    async with running(app) as pilot:
        await pilot.press("ctrl+e")
        assert app.tools_expanded
        await pilot.press("ctrl+o")
        assert app.tools_expanded  # the old key no longer toggles
        faux.push("ok")
        await pilot.press("a", "enter", "b", "ctrl+s")
        await wait_until(lambda: len(app.controller.session.messages) >= 2, 5, "the prompt")
        assert faux.contexts[-1].messages[-1].content == "a\nb"


async def test_a_user_theme_applies_and_is_redrawn_when_its_file_changes(faux, project, wolli_home):
    import json

    from wolli.config.themes import builtin_theme
    from wolli.modes.tui.app import WolliApp
    from wolli.runtime.startup.request import StartupRequest

    folder = wolli_home / "themes"
    folder.mkdir()
    colors = dict(builtin_theme("dark").colors)
    colors = {k: (v or "") for k, v in colors.items()}
    theme_file = folder / "mine.json"
    theme_file.write_text(json.dumps({"name": "mine", "colors": {**colors, "accent": "#112233"}}))
    app = WolliApp(StartupRequest(mode="tui", cwd=str(project), model="faux/faux-1", require_model=False),
                   themes_dirs=[folder], theme_name="mine")
    async with running(app):
        assert app.theme == "wolli-mine" and app.theme_spec.color("accent") == "#112233"
        # The watcher arms in the background: save until it sees a save (state, not a sleep).
        for _ in range(20):
            theme_file.write_text(json.dumps({"name": "mine", "colors": {**colors, "accent": "#445566"}}))
            try:
                await wait_until(lambda: app.theme_spec.color("accent") == "#445566", 0.5, "the reloaded theme")
                break
            except AssertionError:
                continue
        assert app.theme_spec.color("accent") == "#445566"
        assert app.theme == "wolli-mine" and app.current_theme.primary.lower() == "#445566"


async def test_the_working_indicator_moves_with_streamed_frames_and_alone_when_they_stop(make_app, faux):
    """While an answer streams, the indicator is drawn in the answer's frames (one screen
    update for both, not ten more a second of its own); without frames its timer moves it."""
    app = make_app()
    async with running(app) as pilot:
        working = app.working
        moved_by: list[str] = []
        tick = working._tick

        def counted_tick() -> None:
            import inspect

            moved_by.append(inspect.stack()[1].function)
            tick()

        working._tick = counted_tick
        faux.tokens_per_second = 100
        faux.push(" ".join(f"word{i}" for i in range(120)))  # ~1.2 s of frames
        await type_and_send(pilot, "go")
        await wait_until(lambda: len(moved_by) >= 8, 5, "the indicator moving while the answer streams")
        streamed = list(moved_by)
        assert streamed.count("pulse") >= 6 and streamed.count("_on_timer") <= 1, streamed
        await idle_after(app, pilot, 2)
        # No frames: the timer moves it (a static wait, e.g. a tool running).
        moved_by.clear()
        working.start()
        await wait_until(lambda: len(moved_by) >= 3, 5, "the indicator moving on its own timer")
        assert set(moved_by) == {"_on_timer"}
        working.stop()
