"""Run by ``test_startup_work.py`` in a fresh interpreter: starts the app headless on a local
model (no request is made) and prints, as JSON, the modules imported when the session is up."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path


async def main(cwd: str) -> None:
    from wolli.modes.tui import run_tui  # noqa: F401  (the import chain ``wolli`` takes)
    from wolli.modes.tui.app import WolliApp
    from wolli.runtime.startup.request import StartupRequest

    request = StartupRequest(mode="tui", cwd=cwd, model="local/probe", require_model=False)
    app = WolliApp(request, themes_dirs=[Path(p) for p in sys.argv[2:]])
    seen: list[str] = []
    async with app.run_test(size=(100, 30)) as pilot:
        await app.controller.ready.wait()
        seen = sorted(sys.modules)  # before the warm-up, which runs 50 ms after this
        await pilot.pause()
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
