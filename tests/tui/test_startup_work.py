"""What the app does (and does not do) between launch and the session being up.

Start-up time is measured in ``tests/perf``; these pin the behaviour the speed rests on, so a
change that brings the work back fails here: each stylesheet is parsed once, with the
theme's colours from the start.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from textual.css.stylesheet import Stylesheet

from .helpers import running


@pytest.mark.parametrize("theme", ["dark", "light"])
async def test_the_stylesheets_are_parsed_once_with_the_theme_in_force(faux, project, monkeypatch, theme):
    from wolli.modes.tui.app import WolliApp
    from wolli.runtime.startup.request import StartupRequest

    reparsed: list[int] = []
    original = Stylesheet.reparse

    def counting(self: Stylesheet) -> None:
        reparsed.append(1)
        original(self)

    monkeypatch.setattr(Stylesheet, "reparse", counting)
    app = WolliApp(StartupRequest(mode="tui", cwd=str(project), model="faux/faux-1", require_model=False),
                   theme_name=theme)
    async with running(app) as pilot:
        await pilot.pause()
        assert reparsed == []  # a theme set after the parse re-parses every stylesheet
        assert app.theme == f"wolli-{theme}"
        assert f"-theme-wolli-{theme}" in app.classes
        assert ("-dark-mode" in app.classes) is (theme == "dark")
        assert ("-light-mode" in app.classes) is (theme == "light")
        # The widgets are drawn in the theme's colours from the first frame.
        background = app.theme_spec.export.get("pageBg") or ("#1a1b20" if theme == "dark" else "#fbfbfc")
        assert app.screen.styles.background.hex.lower() == background.lower()


def test_the_colour_system_is_generated_once_for_the_apps_own_theme(project, monkeypatch):
    """Textual's App makes its stylesheet with the default theme's variables; the app's own
    theme replaces them before anything is parsed, so only that one is generated."""
    from textual.design import ColorSystem

    from wolli.modes.tui.app import WolliApp
    from wolli.runtime.startup.request import StartupRequest

    generated: list[str] = []
    original = ColorSystem.generate

    def counting(self: ColorSystem) -> dict[str, str]:
        variables = original(self)
        generated.append(variables["primary"])
        return variables

    monkeypatch.setattr(ColorSystem, "generate", counting)
    app = WolliApp(StartupRequest(mode="tui", cwd=str(project), require_model=False), theme_name="light")
    assert len(generated) == 1 and generated[0].lower() == (app.theme_spec.color("accent") or "").lower()
    assert app.stylesheet._variables["w-accent"] == app.theme_spec.color("accent")


def styles_of(app: object) -> dict[object, object]:
    """Every node's rules on the main screen (and the app's), with its component styles."""
    nodes = [app, *app.screen.walk_children(with_self=True)]  # type: ignore[attr-defined]
    return {node: (node._css_styles.get_rules(), {name: styles.get_rules() for name, styles
                                                  in node._component_styles.items()}) for node in nodes}


@pytest.mark.parametrize("theme", ["dark", "light"])
async def test_the_first_frame_is_styled_once_and_as_a_full_restyle_would_style_it(
        faux, project, monkeypatch, theme):
    """The screen's first resume does not restyle what was styled as it was mounted: every
    node's styles are then those a full restyle gives."""
    from wolli.modes.tui.app import WolliApp
    from wolli.runtime.startup.request import StartupRequest

    app = WolliApp(StartupRequest(mode="tui", cwd=str(project), model="faux/faux-1", require_model=False),
                   theme_name=theme)
    resumes: list[int] = []
    original = Stylesheet.update_nodes

    def counting(self: Stylesheet, nodes: object, animate: bool = False) -> None:
        nodes = list(nodes)  # type: ignore[call-overload]
        resumes.append(len(nodes))
        original(self, nodes, animate)

    monkeypatch.setattr(Stylesheet, "update_nodes", counting)
    async with running(app) as pilot:
        await pilot.pause()
        assert max(resumes, default=0) < len(list(app.screen.walk_children()))  # no whole-screen pass
        shown = styles_of(app)
        for node in shown:
            app.stylesheet.apply(node, animate=False)  # type: ignore[arg-type]
        assert styles_of(app) == shown


def modules_when_ready(project: Path, wolli_home: Path) -> set[str]:
    """The modules a fresh process has imported once the app's session is up (before the
    warm-up loads what the first answer needs)."""
    (wolli_home / "models.json").write_text(json.dumps({"providers": {"local": {
        "api": "openai-completions", "baseUrl": "http://127.0.0.1:9/v1", "apiKey": "none",
        "models": [{"id": "probe"}]}}}))
    themes = wolli_home / "themes"
    themes.mkdir(exist_ok=True)
    probe = Path(__file__).with_name("startup_probe.py")
    out = subprocess.run([sys.executable, str(probe), str(project), str(themes)], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parents[2], timeout=60).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_nothing_the_session_does_not_need_is_imported_before_it_is_up(project, wolli_home):
    modules = modules_when_ready(project, wolli_home)
    assert "wolli.runtime.startup.start" in modules  # the probe did reach the session
    # Watching theme files starts once the session is up (its imports are not needed before).
    assert "watchfiles" not in modules
    # The rows of a conversation load with the first row (or the warm-up), not before.
    rows = {"assistant_message", "streaming_text", "stream_tail", "tool_row", "subagent_row", "user_message"}
    assert not {f"wolli.modes.tui.widgets.{name}" for name in rows} & modules
    # Nor the completion menu: it is made with the first suggestions.
    assert "wolli.modes.tui.widgets.completion_menu" not in modules


async def test_what_is_typed_before_the_session_is_up_reaches_it(make_app, faux, monkeypatch):
    """The runtime starts once the first frame is drawn; a prompt typed and sent before the
    session is up waits for it and is then sent, in full."""
    import asyncio

    from tests.support.waiting import wait_until
    from wolli.runtime.startup import start as start_module

    gate = asyncio.Event()
    real_start = start_module.start

    async def held(*args, **kwargs):
        await gate.wait()
        return await real_start(*args, **kwargs)

    monkeypatch.setattr(start_module, "start", held)
    faux.push("an answer")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press(*"hello there", "enter")
        await pilot.pause()
        assert not app.controller.ready.is_set() and app.controller.session is None
        gate.set()
        await wait_until(lambda: len(faux.contexts) == 1, 10, "the prompt typed early")
        assert faux.contexts[0].messages[-1].content == "hello there"


async def test_a_new_session_is_made_on_the_loop_and_a_continued_one_read_in_a_thread(make_app, monkeypatch):
    """A session file being resumed is read in a worker thread (the screen stays live); a new
    session has nothing to read and is made at once, so no turn of the loop (where Textual's
    frame timer would paint an intermediate frame) comes between the first frame and the one
    showing the session."""
    import asyncio

    threaded: list[str] = []
    real = asyncio.to_thread

    async def recording(func, /, *args, **kwargs):
        threaded.append(getattr(func, "__name__", repr(func)))
        return await real(func, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", recording)
    async with running(make_app()):
        pass
    assert "_manager_for" not in threaded
    async with running(make_app(continue_recent=True)) as pilot:
        await pilot.pause()
    assert "_manager_for" in threaded


async def test_the_warm_up_compiles_linkifys_patterns_before_the_first_answer(make_app):
    """Scanning a text for links compiles linkify's long patterns the first time (~4 ms, which
    fell in the first answer's last frame); the warm-up thread does it while the editor waits."""
    import re

    from linkify_it import LinkifyIt

    from tests.support.waiting import wait_until

    pretest = LinkifyIt().re["pretest"]
    re.purge()  # as in a fresh process
    app = make_app()
    async with running(app):
        # the warm-up runs in a thread once the session is up; nothing else scans for links
        await wait_until(lambda: (str, pretest, re.IGNORECASE) in re._cache,  # type: ignore[attr-defined]
                         10, "linkify's pretest pattern compiled")
