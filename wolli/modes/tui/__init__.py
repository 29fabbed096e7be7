"""The full-screen TUI (``wolli`` with no ``-p``). Only this package imports Textual."""

from __future__ import annotations

import os

from ...runtime.request import StartupRequest


def run_tui(request: StartupRequest) -> int:
    from ...config.paths import agent_home
    from ...config.settings import Settings
    from ...config.themes import theme_folders
    from .app import WolliApp

    home = agent_home(request.agent)
    settings = Settings(request.agent)  # read again by the host; cheap, and keeps the app standalone
    theme = settings.get("theme") or "dark"
    hide_thinking = bool(settings.get("hideThinkingBlock"))
    app = WolliApp(request, agent_home=home, themes_dirs=theme_folders(home),
                   theme_name=theme, hide_thinking=hide_thinking)
    profile = os.environ.get("WOLLI_PROFILE")  # opt-in: a cProfile of the whole run, for perf work
    if profile:
        import cProfile

        with cProfile.Profile() as prof:
            code = app.run()
        prof.dump_stats(profile)
    else:
        code = app.run()
    if app.signal_exit_code is not None:  # ended by a signal: the shell sees 128 + its number
        return app.signal_exit_code
    return code if isinstance(code, int) else 0
