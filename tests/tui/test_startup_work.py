"""What the app does (and does not do) between launch and the session being up.

Start-up time is measured in ``tests/perf``; these pin the behaviour the speed rests on, so a
change that brings the work back fails here: each stylesheet is parsed once, with the
theme's colours from the start.
"""

from __future__ import annotations

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
