"""Theme files are re-read when they change, and the active theme is redrawn at once.

Watches the user theme folders that exist (``WOLLI_HOME/themes``, ``<agent home>/themes``)
with watchfiles while the app runs; only ``.json`` files count. A theme whose file now has
problems still applies with built-in values for the broken tokens (the problems are shown).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .surface import AppWithSurface


def _json_file(change: object, path: str) -> bool:
    return path.endswith(".json")


async def watch_themes(app: AppWithSurface, folders: list[Path],
                       after: Callable[[], Awaitable[None]] | None = None) -> None:
    """Watch until the app ends; starts once ``after()`` returns (the session is on screen:
    watchfiles and its imports are not needed to get there)."""
    existing = [f for f in folders if f.is_dir()]
    if not existing:
        return
    if after is not None:
        await after()
    import watchfiles

    from ...config.themes import discover_themes

    async for changes in watchfiles.awatch(*existing, watch_filter=_json_file, debounce=100, step=20):
        themes, problems = discover_themes(folders)
        active = app.theme_spec.name
        for name, spec in themes.items():
            if name not in app.themes or app.themes[name].colors != spec.colors:
                app.themes[name] = spec
                app.register_theme_spec(spec)
        for problem in problems:
            app.add_notice(problem, "warning")
        if active in themes and any(str(path) == themes[active].path for _, path in changes):
            app.surface.switch_theme(themes[active])
