"""The TUI's link to the runtime: start the session, send what the user typed, abort, quit.

The app owns the widgets; this owns the session. Startup runs after the first frame (the
editor is usable at once; a message typed before the session is ready waits for it).
Sending while the agent works steers it (Enter) or queues a follow-up (Alt+Enter); ``!cmd``
runs a shell command and adds its output to the context, ``!!cmd`` runs it without. Built-in
slash commands (:mod:`..interactive`) run here with the app's :class:`~.front.TuiFront`;
every other ``/name`` goes to the session (extension commands, templates, skills).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from typing import TYPE_CHECKING, Protocol

from ...runtime.startup.request import StartupError, StartupRequest
from ..interactive.client_runtime import SessionFigures
from ..interactive.commands.definition import CommandContext, CommandEntry
from ..interactive.commands.registry import run_builtin
from .adapter import EventAdapter
from .frame_batcher import FRAME_INTERVAL
from .front import TuiFront
from .timers import after
from .ui_bridge import AppWithUI

if TYPE_CHECKING:  # the runtime itself is imported once the first frame is on screen
    from ...ai.types import ImageContent
    from ...extensions.registry import Shortcut
    from ...runtime.handlers.hook_events import StreamingBehavior
    from ...runtime.host.agent_host import AgentHost
    from ...runtime.live.live_session import LiveSession
    from ...runtime.startup.start import Startup


class ControlledApp(AppWithUI, Protocol):
    """The app as the controller sees it: the helpers it hands the session's events and
    the commands' questions to."""

    @property
    def adapter(self) -> EventAdapter: ...
    @property
    def front(self) -> TuiFront: ...
    def fill_in_history(self, first: object) -> None: ...


# How long quitting waits for a stopped run to save its partial answer (the signal route
# kills the process 5 s after a signal, whatever is running).
EXIT_GRACE_S = 3.0


class TuiController:
    """The in-process :class:`~..interactive.client_runtime.ClientRuntime`: a host and its
    live sessions in this process."""

    def __init__(self, app: ControlledApp, request: StartupRequest) -> None:
        self.app = app
        self.request = request
        self.startup: Startup | None = None  # once started
        self.ready = asyncio.Event()
        self._observed: Callable[[], None] | None = None  # removes the observer on the active session

    @property
    def session(self) -> LiveSession | None:
        host = self.startup.host if self.startup else None
        return host.active if host is not None and host.active is not None else (
            self.startup.session if self.startup else None)

    @property
    def host(self) -> AgentHost | None:
        return self.startup.host if self.startup else None

    async def start(self) -> None:
        # Imported here, after the first frame: the runtime is the heaviest import of all.
        from ...runtime.startup.start import start

        def before_start(session: LiveSession) -> None:
            session.services.on_active_session(self._on_active)

        try:
            self.startup = await start(self.request, ui=self.app.ui, observers=[self.app.adapter],
                                       before_start=before_start)
        except StartupError as exc:
            self.app.exit(return_code=exc.exit_code, message=_startup_message(exc))
            return
        # The screen shows streamed text once a frame: read the answers at that pace.
        self.startup.host.stream_read_interval = FRAME_INTERVAL
        self.startup.host.start_auto_reload()  # settings autoReload: watch extension files
        self.app.reload_transcript()  # a resumed session's history, then what to know
        session = self.startup.session
        if session.context_pending:  # shown from its last messages: the rest once they are drawn
            first = session.messages[0]
            self.app.transcript.when_rows_drawn(
                lambda: self.app.run_worker(partial(self._fill_in_history, session, first), group="history"))
        if not self.startup.host.settings.get("quietStartup"):
            from ..interactive.startup_summary import startup_summary

            self.app.add_notice(startup_summary(self.startup.host, self.startup.session), "muted")
        for warning in self.startup.warnings:
            self.app.add_notice(warning, "warning")
        self.app.run_worker(self.app.check_shortcuts, group="keys")  # a callable: no coroutine left behind on quit
        if self.startup.session.model is None:  # first run: say how to get going
            self.app.add_notice(first_run_help(self.startup.host), "warning")
        self.ready.set()
        if self.startup.host.mcp is not None:  # MCP servers: in the background, after the first frame
            self.app.run_worker(self.startup.host.start_mcp(interactive=True), group="mcp")
        if self.request.pick_session:  # wolli -r
            await self.run_command("/resume")
        # Let the frame settle, then load what the first request needs (the provider's module,
        # the pooled HTTP client) so the first answer does not wait for imports.
        after(self.app, 0.05, self._warm_up)
        for prompt in self.startup.prompts:  # `wolli "fix the test"` starts with that message
            await self.send(prompt.text, images=prompt.images)

    async def _fill_in_history(self, session: LiveSession, first: object) -> None:
        """Build a resumed session's whole context (off the loop), then put its older
        messages above the rows shown; the footer's totals follow."""
        await session.context_ready()
        if self.session is session:
            self.app.fill_in_history(first)
            self.app.refresh_footer()

    def _warm_up(self) -> None:
        session = self.session
        model = session.model if session is not None else None
        # A callable, not a coroutine: if the app quits before the worker starts, no coroutine
        # was made to be left un-awaited.
        over_tls = model is None or not model.base_url.startswith("http://")
        self.app.run_worker(partial(self._load_ahead, model.api if model is not None else None, over_tls),
                            group="warm-up")

    @staticmethod
    async def _load_ahead(api: str | None, over_tls: bool = True) -> None:
        """Imports in a thread (the editor keeps taking keys), then the pooled client on the
        loop. Only a head start: the real request reports any problem."""

        def imports() -> None:
            # the rows of an answer and the answers' markdown (~50 ms), the completion menu
            from .widgets import (  # noqa: F401
                assistant_message,
                completion_menu,
                markdown_view,
                subagent_row,
                tool_row,
                user_message,
            )

            markdown_view.warm_parser()
            # what the end of the first turn and the first command load (left out of the start)
            from ...session import compaction  # noqa: F401
            from ...tools import process  # noqa: F401

            if api is not None:
                from ...ai.http import preload
                from ...ai.stream import get_api

                get_api(api)  # the provider's module
                preload(tls=over_tls)
            from ...base import code_cache, module_bundle
            from . import stylesheet_cache

            code_cache.save()  # what this start compiled, for the next one (also saved at exit)
            module_bundle.save()  # the bytecode of what it imported, likewise
            stylesheet_cache.save()  # the CSS it parsed, likewise

        try:
            await asyncio.to_thread(imports)
            if api is not None:
                from ...ai.http import warm

                warm()
        except Exception:
            pass

    def _on_active(self, new: LiveSession | None, old: LiveSession | None) -> None:
        """Another session became active (new, resume, fork): follow it."""
        if self._observed is not None:
            self._observed()
            self._observed = None
        if new is not None and old is not None:  # the first session is shown by start()
            self._observed = new.observe(self.app.adapter)
            # At once (we are on the app's loop): what the command says next comes after it.
            self.app.reload_transcript()

    # ------------------------------------------------------------------ input

    def command_context(self) -> CommandContext:
        return CommandContext(self.app.front, self.host, self.session)

    async def run_command(self, text: str) -> None:
        """A slash command from the palette or a key: a built-in runs here, anything else is
        sent like typed text."""
        await self.ready.wait()
        if self.session is not None:
            await self.session.context_ready()  # commands read the whole conversation
        if self.session is not None and not await run_builtin(self.command_context(), text):
            await self.send(text)
        self.app.refresh_footer()

    async def send(self, text: str, *, follow_up: bool = False, images: list[ImageContent] | None = None) -> None:
        """What the user typed: a built-in command, ``!cmd``, steering or a follow-up while
        the agent works, else a prompt. Whatever fails is shown and the app stays up; a
        prompt that failed before it reached the session goes back into the editor."""
        await self.ready.wait()
        session = self.session
        if session is None:
            return
        await session.context_ready()  # typed while a resumed history was built: sent whole
        if not images and await run_builtin(self.command_context(), text):
            self.app.refresh_footer()
            return
        try:
            await self._send(session, text, follow_up, images)
        except Exception as exc:
            from ...extensions.errors import CommandUnavailable, ExtensionCommandError

            self.app.add_notice(str(exc) or type(exc).__name__, "error")
            # A prompt that could not be sent comes back to be sent again; a command that
            # failed or is unavailable would only fail again, so the editor stays empty.
            if not self.app.editor.text and not isinstance(exc, ExtensionCommandError | CommandUnavailable):
                self.app.surface.set_editor_text(text)
        self.app.refresh_footer()
        if self.host is not None and self.host.shutdown_requested:
            self.app.exit()

    async def _send(self, session: LiveSession, text: str, follow_up: bool, images: list[ImageContent] | None) -> None:
        stripped = text.strip()
        command = stripped.lstrip("!").strip()
        if stripped.startswith("!") and command:
            await self._run_user_command(session, command, exclude=stripped.startswith("!!"))
        elif session.is_streaming or not session.is_idle():
            behavior: StreamingBehavior = "follow_up" if follow_up else "steer"  # the spelling of every mode
            await session.prompt(text, images, streaming_behavior=behavior)
        else:
            await session.prompt(text, images)

    async def _run_user_command(self, session: LiveSession, command: str, *, exclude: bool) -> None:
        """``!cmd``: its row comes with its events once it ends; meanwhile the working row
        says something runs (and that Esc stops it), as no run of the agent starts it, and
        shows the command's latest line of output."""
        from ..interactive.output_tail import LastLine

        working = self.app.working
        last = LastLine()

        def on_output(data: bytes) -> None:
            line = last.feed(data)
            if line is not None:
                working.detail = line  # drawn at the row's next tick

        working.start()
        try:
            await session.run_bash(command, exclude_from_context=exclude, on_output=on_output)
        finally:
            working.detail = None
            if session.is_idle():  # else a run started meanwhile owns the row
                working.stop()

    def command_entries(self) -> list[CommandEntry]:
        from ..interactive.commands.registry import command_entries

        return command_entries(self.host, self.session)  # built-ins only before the session is up

    async def argument_completions(self, name: str, prefix: str) -> object:
        from ..interactive.commands.registry import argument_completions

        if self.session is None:
            return None
        return await argument_completions(self.command_context(), name, prefix)

    def figures(self) -> SessionFigures | None:
        session = self.session
        if session is None:
            return None
        from ...runtime.live.stats import session_stats

        stats = session_stats(session)
        model = session.model
        figures = SessionFigures(
            model=f"{model.provider}/{model.id}" if model is not None else "no model (/login)", cwd=session.cwd,
            tokens_in=stats.input_tokens, tokens_out=stats.output_tokens, cache_read=stats.cache_read_tokens,
            cache_write=stats.cache_write_tokens, cost=stats.cost,
            thinking=session.thinking_level if model is not None and getattr(model, "reasoning", False) else None,
            permission_mode=session.permissions.mode, totals_pending=session.context_pending)
        try:
            figures.context_percent = session.context_usage().get("percent")
        except Exception:
            figures.context_percent = None
        try:
            figures.session_name = session.session_manager.get_session_name()
        except Exception:
            figures.session_name = None
        return figures

    def mcp_resources(self) -> list[dict[str, str]]:
        host = self.host
        return host.mcp.resource_items() if host is not None and host.mcp is not None else []

    def shortcut(self, key: str) -> Shortcut | None:
        """The extension shortcut for a key event's name, once the session is up; None when
        there is none or a built-in key has it (the built-in wins)."""
        if self.host is None or self.session is None:
            return None
        shortcuts = self.host.extensions.registry.shortcuts
        if not shortcuts:
            return None
        from ...config.keys import event_canonical
        from ..interactive.hotkeys import builtin_keys

        canonical = event_canonical(key)
        found = shortcuts.get(canonical)
        if found is None or canonical in builtin_keys():
            return None
        return found

    async def run_shortcut(self, shortcut: Shortcut) -> None:
        from ..interactive.hotkeys import run_shortcut

        session = self.session
        if session is None:
            return
        failed = await run_shortcut(shortcut, session.handler_context(), self.host.home if self.host else None)
        if failed is not None:
            self.app.add_notice(failed, "error")

    def abort(self) -> list[str]:
        """Stop the run; returns the queued messages (they go back into the editor)."""
        session = self.session
        if session is None:
            return []
        steering, follow_up = session.clear_queue()
        session.abort()
        session.abort_bash()
        return [*steering, *follow_up]

    def stop_user_command(self) -> bool:
        session = self.session
        return session is not None and session.abort_bash()

    async def cycle_thinking_level(self) -> str | None:
        """The next thinking level (the session clamps it to what the model takes)."""
        from ..interactive.commands.model import cycle_thinking

        return await cycle_thinking(self.session)

    async def cycle_permission_mode(self) -> None:
        from ..interactive.commands.permissions import cycle_mode

        await self.ready.wait()
        if self.session is not None:
            mode = await cycle_mode(self.session)
            self.app.notify(f"Permission mode: {mode}", timeout=2)
        self.app.refresh_footer()

    async def cycle_model(self, step: int) -> None:
        from ..interactive.commands.model import cycle_model, model_key

        await self.ready.wait()
        model = await cycle_model(self.command_context(), step)
        if model is not None:
            self.app.notify(f"Model: {model_key(model)}", timeout=2)
        self.app.refresh_footer()

    def settle_before_exit(self) -> Awaitable[None] | None:
        """A run still going is stopped as Esc stops it, and awaited (bounded: the signal
        route ends the process after its own grace period anyway), so the partial answer and
        finished tool results reach the session file before the app cancels the run."""
        session = self.session
        if session is None or session.is_idle():
            return None
        self.abort()
        return _bounded(session.wait_for_idle(), EXIT_GRACE_S)

    async def shutdown(self) -> None:
        if self.startup is not None:
            await self.startup.host.shutdown("quit")


async def _bounded(waiting: Coroutine[object, object, None], seconds: float) -> None:
    try:
        await asyncio.wait_for(waiting, seconds)
    except TimeoutError:
        pass


def first_run_help(host: AgentHost) -> str:
    """What the TUI says when no model is configured: the ways to get one, /login first."""
    from ...ai.env_keys import ENV_KEYS
    from ...config import paths

    home = paths.wolli_home()
    names = ", ".join(keys[0] for keys in list(ENV_KEYS.values())[1:7])
    return (
        "Welcome to Wolli. No model is set up yet; any one of these gets you going:\n"
        f"  /login   pick a provider and paste its API key (kept in {home / 'auth.json'}); works at once\n"
        f"  env      export ANTHROPIC_API_KEY=... (or {names}, ...), then start wolli again\n"
        f"  local    an OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM Studio) in {home / 'models.json'}:\n"
        '           {"providers": {"ollama": {"baseUrl": "http://localhost:11434/v1",\n'
        '             "api": "openai-completions", "models": [{"id": "qwen2.5-coder:7b"}]}}}\n'
        "           then /reload\n"
        "Then /model chooses among the models (docs/providers.md has more)."
    )


def _startup_message(exc: StartupError) -> str:
    lines = [f"wolli: {w}" for w in exc.warnings]
    lines.append(f"wolli: {exc}")
    return "\n".join(lines)
