"""The TUI's link to the runtime: start the session, send what the user typed, abort, quit.

The app owns the widgets; this owns the session. Startup runs after the first frame (the
editor is usable at once; a message typed before the session is ready waits for it).
Sending while the agent works steers it (Enter) or queues a follow-up (Alt+Enter); ``!cmd``
runs a shell command and adds its output to the context, ``!!cmd`` runs it without.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...runtime.request import StartupError, StartupRequest


class TuiController:
    # ``app`` is the WolliApp; not imported here, since the app imports this module.
    def __init__(self, app: Any, request: StartupRequest) -> None:
        self.app = app
        self.request = request
        self.startup: Any = None  # runtime.startup.Startup once started
        self.ready = asyncio.Event()
        self.error: StartupError | None = None
        self._observed: Any = None  # the remover of the observer on the active session

    @property
    def session(self) -> Any:
        host = self.startup.host if self.startup else None
        return host.active if host is not None and host.active is not None else (
            self.startup.session if self.startup else None)

    @property
    def host(self) -> Any:
        return self.startup.host if self.startup else None

    async def start(self) -> None:
        # Imported here, after the first frame: the runtime is the heaviest import of all.
        from ...runtime.startup import start

        def before_start(session: Any) -> None:
            session.services.on_active_session(self._on_active)

        try:
            self.startup = await start(self.request, ui=self.app.ui, observers=[self._observe_first],
                                       before_start=before_start)
        except StartupError as exc:
            self.error = exc
            self.app.exit(return_code=exc.exit_code, message=_startup_message(exc))
            return
        self.startup.host.start_auto_reload()  # settings autoReload: watch extension files
        self.app.reload_transcript()  # a resumed session's history, then what to know
        for warning in self.startup.warnings:
            self.app.add_notice(warning, "warning")
        self.app.check_shortcut_clashes()
        if self.startup.session.model is None:  # first run: say how to get going
            self.app.add_notice(self.startup.host.no_model_help(), "warning")
        self.ready.set()
        # Let the frame settle, then load what the first request needs (the provider's module,
        # the pooled HTTP client) so the first answer does not wait for imports.
        self.app.set_timer(0.05, self._warm_up)
        for prompt in self.startup.prompts:  # `wolli "fix the test"` starts with that message
            await self.send(prompt.text, images=prompt.images)

    def _warm_up(self) -> None:
        session = self.session
        if session is None or session.model is None:
            return
        try:
            from ...ai.http import get_client
            from ...ai.stream import get_api

            get_api(session.model.api)
            get_client()
        except Exception:  # only a head start: the real request reports any problem
            pass

    def _observe_first(self, event: Any) -> None:
        self.app.adapter(event)

    def _on_active(self, new: Any, old: Any) -> None:
        """Another session became active (new, resume, fork): follow it."""
        if self._observed is not None:
            self._observed()
            self._observed = None
        if new is not None and old is not None:  # the first session is shown by start()
            self._observed = new.observe(self.app.adapter)
            self.app.call_later(self.app.reload_transcript)

    # ------------------------------------------------------------------ input

    async def send(self, text: str, *, follow_up: bool = False, images: list[Any] | None = None) -> None:
        await self.ready.wait()
        session = self.session
        if session is None:
            return
        stripped = text.strip()
        if stripped.startswith("!"):
            exclude = stripped.startswith("!!")
            command = (stripped[2:] if exclude else stripped[1:]).strip()
            if command:
                await session.run_bash(command, exclude_from_context=exclude)  # shown by its events
                return
        if session.is_streaming or not session.is_idle():
            behavior = "followUp" if follow_up else "steer"
            await session.prompt(text, images, streaming_behavior=behavior)
            return
        try:
            await session.prompt(text, images)
        except Exception as exc:  # a failing run is shown, the app stays up, the text is kept
            self.app.add_notice(str(exc) or type(exc).__name__, "error")
            if not self.app.editor.text:
                self.app.surface.set_editor_text(text)
        self.app.refresh_footer()
        if self.host is not None and self.host.shutdown_requested:
            self.app.exit()

    def abort(self) -> list[str]:
        """Stop the run; returns the queued messages (they go back into the editor)."""
        session = self.session
        if session is None:
            return []
        steering, follow_up = session.clear_queue()
        session.abort()
        session.abort_bash()
        return [*steering, *follow_up]

    async def cycle_thinking_level(self) -> str | None:
        session = self.session
        if session is None or session.model is None or not getattr(session.model, "reasoning", False):
            return None
        levels = ["off", "minimal", "low", "medium", "high"]
        if "xhigh" in (getattr(session.model, "thinking_levels", None) or []):
            levels.append("xhigh")
        current = session.thinking_level
        following = levels[(levels.index(current) + 1) % len(levels)] if current in levels else "off"
        return await session.set_thinking_level(following)

    async def shutdown(self) -> None:
        if self.startup is not None:
            await self.startup.host.shutdown("quit")


def _startup_message(exc: StartupError) -> str:
    lines = [f"wolli: {w}" for w in exc.warnings]
    lines.append(f"wolli: {exc}")
    return "\n".join(lines)
