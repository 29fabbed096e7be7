"""The full-screen TUI (``wolli`` with no ``-p``). Only this package imports Textual."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ...runtime.startup.request import StartupRequest
from . import dom_class_setup

# Before any widget class is defined: every route into the TUI (run_tui, wolli attach, an
# extension's CustomEditor) imports this package first. Textual's per-class set-up is then
# done from memos of the base classes (~14 ms of a start; see the module).
dom_class_setup.install()

if TYPE_CHECKING:
    from pathlib import Path

    from ...config.settings import Settings
    from .app import RuntimeFactory, WolliApp


def run_tui(request: StartupRequest, *, runtime: RuntimeFactory | None = None) -> int:
    """The full-screen app; ``runtime`` makes what it drives (default: the runtime in this
    process; ``wolli attach`` passes a server's session)."""
    from ...config.paths import agent_home, wolli_home
    from ...config.settings import Settings
    from . import stylesheet_cache

    stylesheet_cache.enable(wolli_home() / "cache")  # the CSS an earlier run parsed
    try:
        # the settings are read again by the host: cheap, and keeps the app standalone
        return _run(request, runtime, agent_home(request.agent), Settings(request.agent))
    finally:
        stylesheet_cache.save()
        stylesheet_cache.disable()  # run_tui may run inside another program (tests, embedders)


def _run(request: StartupRequest, runtime: RuntimeFactory | None, home: Path, settings: Settings) -> int:
    from ...config.themes import theme_folders
    from . import terminal_keys
    from .app import WolliApp

    theme = settings.get("theme") or "dark"
    hide_thinking = bool(settings.get("hideThinkingBlock"))
    from ...packages.active import installed_theme_dirs

    themes_dirs = [*theme_folders(home), *installed_theme_dirs(home, settings.get("packages"))]
    app = WolliApp(request, agent_home=home, themes_dirs=themes_dirs,
                   theme_name=theme, hide_thinking=hide_thinking, runtime=runtime)
    terminal_keys.install(app.keyboard)
    profile = os.environ.get("WOLLI_PROFILE")  # opt-in: a cProfile of the whole run, for perf work
    if profile:
        import cProfile

        with cProfile.Profile() as prof:
            code = app.run()
        prof.dump_stats(profile)
    else:
        code = app.run()
    return exit_status(app, code)


def exit_status(app: WolliApp, returned: int | None) -> int:
    """The process's exit status: 128 + the signal's number when a signal ended it, else
    what the app exited with, else 1 when it ended on an unhandled error (Textual then
    returns None and sets ``return_code``), else 0."""
    if app.signal_exit_code is not None:
        return app.signal_exit_code
    if isinstance(returned, int):
        return returned
    return int(app.return_code or 0)
