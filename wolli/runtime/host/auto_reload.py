"""``autoReload``: reload extensions, hooks and tools when their files are saved.

The watcher (watchfiles, inotify/FSEvents underneath) watches the agent home's
``extensions/``, ``hooks/`` and ``tools/`` folders and every extension or tool path given
in settings or on the command line. Changes are gathered for ``debounce_ms`` so a burst of
saves (an editor writing a file and its backup, a ``git checkout``) reloads once. A reload
waits until every live session is idle: a save during a run reloads right after it. Only
``.py`` files count (``__pycache__`` and editor droppings never do). What a reload did is said
in the active session: each failing extension with its file and line, or that it worked.

Long-lived front ends (the TUI, RPC mode) start it when the setting is on; print and json
mode end before it could matter.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

DEFAULT_DEBOUNCE_MS = 300


class AutoReloader:
    def __init__(self, host: Any, *, debounce_ms: int = DEFAULT_DEBOUNCE_MS) -> None:
        self.host = host
        self.debounce_ms = debounce_ms
        self.reloads = 0  # how many reloads it ran (for tests and /extensions)
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        # Set once the watcher is armed: saves from then on are seen.
        self.ready = asyncio.Event()

    def watched(self) -> list[Path]:
        """Existing folders to watch (a file path is watched through its folder)."""
        runtime = self.host.extensions
        candidates = [self.host.home / name for name in ("extensions", "hooks", "tools")]
        for raw in [*runtime.settings_paths, *runtime.cli_paths, *runtime.tool_settings_paths, *runtime.tool_cli_paths]:
            path = Path(raw).expanduser()
            path = path if path.is_absolute() else Path(self.host.cwd) / path
            candidates.append(path if path.is_dir() else path.parent)
        out: list[Path] = []
        for folder in candidates:
            if folder.is_dir() and not any(folder == o or o in folder.parents for o in out):
                out = [o for o in out if folder not in o.parents] + [folder]
        return out

    def start(self) -> None:
        if self._task is None:
            self._stop = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is None:
            return
        assert self._stop is not None
        self._stop.set()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def _run(self) -> None:
        import watchfiles

        folders = self.watched()
        if not folders:
            self.ready.set()
            return
        # watchfiles yields a batch once no change has come for ``step`` ms (``debounce`` only
        # caps its length): with a short step, a burst whose saves are more than that apart (a
        # busy machine) came as two batches and reloaded twice. Gathered for the whole window.
        watcher = watchfiles.awatch(
            *folders, watch_filter=_python_source, debounce=self.debounce_ms, step=self.debounce_ms,
            stop_event=self._stop, yield_on_timeout=True, rust_timeout=100,
        )
        async for changes in watcher:
            self.ready.set()
            if changes:
                await self._reload_when_idle()

    async def _reload_when_idle(self) -> None:
        while True:
            for session in list(self.host.resident.values()):
                await session.wait_for_idle()
            try:
                await self.host.reload()
            except RuntimeError:  # a run began between the wait and the reload: wait again
                await asyncio.sleep(0.05)
                continue
            self.reloads += 1
            self._tell(list(self.host.extensions.errors))
            return

    def _tell(self, problems: list[str]) -> None:
        """Say what the reload did in the active session (a notice in the TUI and the line
        mode, an event in RPC): each problem with its file and line, else that it worked."""
        session = self.host.active
        if session is None:
            return
        for problem in problems:
            session.notice("error", f"auto-reload: {problem}")
        if not problems:
            loaded = sum(1 for record in self.host.extensions.registry.records if record.status == "loaded")
            session.notice("info", f"auto-reload: extensions reloaded ({loaded} loaded)")


def _python_source(change: object, path: str) -> bool:
    name = Path(path).name
    return name.endswith(".py") and "__pycache__" not in path and not name.startswith(".")
