"""AgentHost: everything one agent name owns, and the lifecycle of its live sessions.

One host per process (one agent name): settings, auth, models, resources, the handler
registry extensions fill (loaded once per host, not per session), extension commands, and
the *resident* sessions, one of which is *active* (the one the front end shows).

Lifecycle, all async:

- :meth:`start` opens the first session (new, ``--continue`` or ``--session``) and emits
  ``session_start {reason: "startup"}`` before anything else runs in it;
- :meth:`open_session` returns the resident session for a file when there is one (never two
  live sessions on one file), else loads it; :meth:`create_session` makes a new one. Both are
  additive: other resident sessions stay live;
- :meth:`new_session`, :meth:`resume_session`, :meth:`fork_session` *replace* the active
  session: ``session_shutdown`` to the old one (its handles go stale), active-session
  listeners told, then ``session_start`` on the new one;
- :meth:`close_session` and :meth:`shutdown` abort, wait until idle, emit
  ``session_shutdown`` and drop the session's observers.

Front ends follow replacements through :meth:`on_active_session`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ...agent.tool import ToolDefinition
from ...config import paths
from ...config.settings import Settings
from ...extensions.context import ExtensionMode, ExtensionUI
from ...extensions.manager import ExtensionManager
from ...tools.environment import Environment, create_host_environment
from ..events import SessionShutdownEvent, ShutdownReason, StartReason
from ..handlers.channel import HandlerRegistry
from ..live.handle import NewSessionResult, SessionHandle
from ..live.live_session import LiveSession
from ..live.options import SessionOptions
from ..live.services import ToolOwner
from ..resources.loading import ResourceSet, load_resources
from .default_model import choose_default_model, no_model_help
from .handler_context import HandlerContext

if TYPE_CHECKING:
    from ...ai.models import ModelRegistry
    from ...ai.types import Model
    from ...extensions.registry import RegisteredCommand
    from ...mcp.offers import PromptCommand
    from ...session.manager import SessionManager
    from .auto_reload import AutoReloader
    from .mcp_link import McpLink

ActiveListener = Callable[["LiveSession | None", "LiveSession | None"], Any]


class AgentHost:
    def __init__(
        self,
        agent: str | None = None,
        *,
        settings: Settings | None = None,
        model_registry: ModelRegistry | None = None,
        mode: ExtensionMode = "print",
        ui: ExtensionUI | None = None,
    ) -> None:
        from ...extensions.ui import NullUI

        self.name = paths.agent_name(agent)
        # The working directory sessions start in (start-up sets the requested one);
        # ``wolli.cwd`` before any session exists.
        self.cwd = os.getcwd()
        self.home: Path = paths.agent_home(self.name)
        self.settings = settings or Settings(self.name)
        self.mode: ExtensionMode = mode
        self.ui: ExtensionUI = ui if ui is not None else NullUI()
        # A front end serving several sessions to their own clients (``wolli serve``) gives
        # each session its own ``ctx.ui``; otherwise every session shares ``ui``.
        self.session_ui: Callable[[LiveSession], ExtensionUI] | None = None
        # A front end drawing streamed text at most N times a second sets 1/N: the model's
        # answers are then read a frame's worth at a time (``StreamOptions.read_interval``).
        self.stream_read_interval = 0.0
        self.handlers = HandlerRegistry()
        from ..safety.permissions import HostPermissions

        self.permissions = HostPermissions(self)
        from ..safety.sandbox import SandboxService

        self.sandbox = SandboxService(self)
        # Extensions are loaded once per host (start-up) and re-imported only on reload.
        self.extensions = ExtensionManager(self)
        # Live views of what extensions registered (the registry updates them in place):
        # commands by invocation name (``review``, ``review:2``), each with ``async
        # run(args, ctx)`` and ``description``; tools added to every session's built-ins;
        # system prompt sections.
        self.commands: dict[str, Any] = self.extensions.commands
        self.extra_tools: list[ToolDefinition] = self.extensions.tools
        self.prompt_sections: list[Any] = self.extensions.registry.prompt_sections
        # Set by ``wolli.shutdown()``: the TUI quits once idle; print/json end anyway.
        self.shutdown_requested = False
        self.auto_reloader: AutoReloader | None = None
        self._follow_auto_reload = False  # a front end asked for the watcher: follow the setting
        self.resident: dict[str, LiveSession] = {}
        self.active: LiveSession | None = None
        self._active_listeners: list[ActiveListener] = []
        self._handles: dict[int, SessionHandle] = {}
        self._model_registry = model_registry
        self._environments: dict[str, Environment] = {}
        self._resources: dict[str, ResourceSet] = {}
        # Keys given for this process only (``--api-key``), by provider.
        self.api_key_overrides: dict[str, str] = {}
        # MCP servers (wolli.mcp): created only when one is configured or registered.
        self.mcp: McpLink | None = None
        # A front end that serves files or runs commands itself (ACP: the editor's buffers
        # and terminals) gives each session's tools its own environments: (files, shell).
        self.session_environments: Callable[[Environment, ToolOwner], tuple[Environment, Environment]] | None = None
        from ..subagents.catalog import SubagentCatalog

        # Subagent definitions (docs/subagents.md) and the children running now, by id.
        self.subagents = SubagentCatalog(self.home, self.settings, self.extensions.registry.subagents,
                                         lambda: self.extensions.installed.subagent_sources())
        self.subagent_runs: dict[str, Any] = {}

    # ------------------------------------------------------------------ services

    @property
    def model_registry(self) -> ModelRegistry:
        if self._model_registry is None:
            from ...ai.auth import AuthStorage
            from ...ai.models import ModelRegistry

            self._model_registry = ModelRegistry(auth=AuthStorage())
        return self._model_registry

    def get_api_key(self, target: Model | str) -> str | None:
        """The key for a model or provider name: ``--api-key`` first, then auth/env/models.json."""
        provider = target if isinstance(target, str) else getattr(target, "provider", None)
        if provider in self.api_key_overrides:
            return self.api_key_overrides[provider]
        return self.model_registry.get_api_key(target)

    @property
    def sessions_dir(self) -> Path:
        return self.home / "sessions"

    def environment(self, cwd: str) -> Environment:
        key = os.path.abspath(cwd)
        env = self._environments.get(key)
        if env is None:
            env = self.sandbox.wrap(create_host_environment(key, shell_path=self.settings.get("shellPath")), key)
            self._environments[key] = env
        return env

    def create_tools(self, cwd: str, session: ToolOwner | None = None) -> list[ToolDefinition]:
        """Built-in, extension and MCP tools; the MCP ones as ``session`` offers them (its own
        tool search state)."""
        from .builtin_tools import create_builtin_tools

        mcp_tools = self.mcp.tools(session) if self.mcp is not None else []
        env = shell_env = self.environment(cwd)
        if self.session_environments is not None and session is not None:
            env, shell_env = self.session_environments(env, session)
        builtins = create_builtin_tools(env, shell_env)
        if session is not None and self._delegates(session):
            from ..subagents.task_tool import create_task_tool

            # Only a LiveSession asks for its own tools; the task tool runs children beside it.
            builtins.append(create_task_tool(self, cast(LiveSession, session)))
        return [*builtins, *self.extra_tools, *mcp_tools]

    def _delegates(self, session: ToolOwner) -> bool:
        """Whether ``session`` gets the ``task`` tool: top-level sessions, unless settings
        ``subagents.enabled`` is false (a child never delegates further)."""
        if (self.settings.get("subagents") or {}).get("enabled") is False:
            return False
        return session.session_manager.get_header().subagent is None

    def resources(self, cwd: str) -> ResourceSet:
        key = os.path.abspath(cwd)
        found = self._resources.get(key)
        if found is None:
            installed = self.extensions.installed
            found = load_resources(
                self.home,
                key,
                extra_skill_dirs=[*(Path(p).expanduser() for p in self.settings.get("skills") or []),
                                  *installed.skill_dirs()],
                extra_prompt_dirs=[*(Path(p).expanduser() for p in self.settings.get("prompts") or []),
                                   *installed.prompt_dirs()],
            )
            if installed.plugins:
                from ..resources.plugin_commands import add_plugin_commands

                add_plugin_commands(found, installed.plugins)
            self._resources[key] = found
        return found

    def handler_context(self, session: LiveSession) -> HandlerContext:
        from ..safety.handle import PermissionsHandle

        ui = self.session_ui(session) if self.session_ui is not None else self.ui
        return HandlerContext(session=self.handle(session), ui=ui, mode=self.mode,
                              permissions=PermissionsHandle(self.permissions, session))

    def handle(self, session: LiveSession) -> SessionHandle:
        """The one handle extension code gets for ``session``."""
        found = self._handles.get(id(session))
        if found is None or found._session is not session:
            found = self._handles[id(session)] = SessionHandle(session, self)
        return found

    def release_handle(self, session: LiveSession) -> None:
        """Forget the handle of a session that is not resident (a subagent's, once it ended)."""
        self._handles.pop(id(session), None)

    def find_command(self, name: str) -> RegisteredCommand | PromptCommand | None:
        found = self.commands.get(name)
        if found is None and self.mcp is not None and name.startswith("mcp__"):
            found = self.mcp.prompt_commands().get(name)
        return found

    def slash_commands(self, session: LiveSession) -> list[Any]:
        """Extension commands, then prompt templates, then skills (``ctx.session.get_commands()``)."""
        from ..live.prompting import SlashCommandInfo, resource_commands

        out = [
            SlashCommandInfo(name, getattr(c, "description", None), "extension",
                             {"path": getattr(c, "owner", ""), "source": "extension", "scope": "user"})
            for name, c in self.commands.items()
        ]
        if self.mcp is not None:
            out += [SlashCommandInfo(name, c.description, "mcp", {"path": c.server, "source": "mcp", "scope": "user"})
                    for name, c in self.mcp.prompt_commands().items()]
        return out + resource_commands(self.resources(session.cwd))

    # ------------------------------------------------------------------ MCP servers

    def mcp_link(self) -> McpLink:
        """The MCP side of this host, made on first need (a Wolli without servers has none)."""
        if self.mcp is None:
            from .mcp_link import McpLink

            self.mcp = McpLink(self)
        return self.mcp

    def start_mcp(self, *, interactive: bool, wait: bool = False) -> Coroutine[Any, Any, None]:
        """Start the configured MCP servers (front ends call this after their first frame).

        Not a coroutine function on purpose: the call itself tells the link a start is on its
        way, so a prompt sent before the returned coroutine first runs waits for it."""
        if self.mcp is not None:
            self.mcp.start_requested = True
        return self._start_mcp(interactive, wait)

    async def _start_mcp(self, interactive: bool, wait: bool) -> None:
        if self.mcp is not None:
            await self.mcp.start(interactive=interactive, wait=wait)

    def register_mcp_server(self, name: str, config: object, owner: str) -> None:
        link = self.mcp_link()
        link.register(name, config, owner)

    def unregister_mcp_server(self, name: str) -> bool:
        return self.mcp.unregister(name) if self.mcp is not None else False

    async def expand_mcp_references(self, text: str) -> str:
        """``@server:uri`` in a message replaced by the resource, once servers seen for the
        first time are up (no-op without MCP)."""
        return await self.mcp.before_prompt(text) if self.mcp is not None else text

    # ------------------------------------------------------------------ models

    def default_model(self) -> Model | None:
        """The model settings name, else the first available of the preferred ones."""
        return choose_default_model(self.model_registry, self.settings)

    def no_model_help(self) -> str:
        return no_model_help()

    # ------------------------------------------------------------------ building sessions

    def _manager_for(self, options: SessionOptions) -> SessionManager:
        from ...session.manager import SessionManager

        cwd = os.path.abspath(options.cwd)
        ref = options.session
        defer = options.context_tail > 0
        if ref:
            if os.path.exists(ref) or ref.endswith(".jsonl"):
                return SessionManager.open(ref, cwd=cwd, defer_context=defer)  # a new file there starts in cwd
            return SessionManager.open_by_id(ref, cwd=cwd, session_dir=self.sessions_dir, defer_context=defer)
        if not options.persist:
            return SessionManager.in_memory(cwd)
        if options.continue_recent:
            return SessionManager.continue_recent(cwd, session_dir=self.sessions_dir, defer_context=defer)
        return SessionManager.create(cwd, session_dir=self.sessions_dir, parent_session=options.parent_session)

    def _resident_for(self, manager: SessionManager) -> LiveSession | None:
        path = manager.get_session_file()
        for live in self.resident.values():
            if live.session_id == manager.get_session_id() or (path and live.session_file == path):
                return live
        return None

    def _build(self, manager: SessionManager, options: SessionOptions) -> LiveSession:
        manager, notice = self._claim(manager)
        manager.repair_interrupted_tool_calls()  # before the agent reads the messages
        live = LiveSession(self, manager, options)
        if notice:
            live.start_notices.append(notice)
        self.resident[live.session_id] = live
        return live

    def _claim(self, manager: SessionManager) -> tuple[SessionManager, str | None]:
        """Make this process the session's one writer; when another live process already
        is, continue in a fork of it instead, and say so (docs/sessions.md, "One writer
        per session"): two writers would silently fork the file and lose an exchange."""
        from ...session.manager import SessionManager
        from ...session.writer_lock import SessionBusyError

        try:
            manager.claim_writer()
            return manager, None
        except SessionBusyError as busy:
            point = _last_complete_exchange(manager)
            if point is None:  # nothing complete yet: an empty session that names its origin
                root = Path(busy.path).parent.parent
                fork = SessionManager.create(manager.get_cwd(), root, parent_session=busy.path)
            else:
                fork = SessionManager.fork(manager, point)
            fork.claim_writer()
            return fork, (
                f"{busy}, so this one continues in a new session forked from its last complete "
                f"exchange, nothing lost: {fork.get_session_id()} "
                f"({fork.get_session_file() or 'written at the first message'})"
            )

    def session_from_options(self, options: SessionOptions) -> tuple[LiveSession, bool]:
        """The session ``options`` describe, and whether it was already resident."""
        return self._session_for(self._manager_for(options), options)

    async def load_session(self, options: SessionOptions) -> tuple[LiveSession, bool]:
        """``session_from_options`` with the file read, indexed and its context built in a
        worker thread, so a long session being resumed does not hold up the event loop (the
        TUI keeps drawing and taking keys meanwhile). A new session has no file to read:
        made here, it costs no thread and no turn of the loop."""
        if options.session or (options.continue_recent and options.persist):
            manager = await asyncio.to_thread(self._manager_for, options)
        else:
            manager = self._manager_for(options)
        return self._session_for(manager, options)

    def _session_for(self, manager: SessionManager, options: SessionOptions) -> tuple[LiveSession, bool]:
        found = self._resident_for(manager)
        if found is not None:
            return found, True
        return self._build(manager, options), False

    # ------------------------------------------------------------------ lifecycle

    async def start(self, options: SessionOptions, observers: list[Callable[[Any], Any]] | None = None) -> LiveSession:
        """The process's first session, made active; ``session_start {reason: startup}``
        reaches ``observers`` too."""
        session, _ = self.session_from_options(options)
        for observer in observers or []:
            session.observe(observer)
        self.set_active(session)
        await session.start("startup")
        self._mention_project_subagents(session)
        return session

    def _mention_project_subagents(self, session: LiveSession) -> None:
        """The project has subagent files the user has not answered for: say how to use them."""
        if not self._delegates(session):
            return
        loaded = self.subagents.load(session.cwd)
        if loaded.project_verdict == "unknown" and loaded.project_names:
            session.notice("info", f"{loaded.project_dir} defines subagents ({', '.join(loaded.project_names)}); "
                                   "they are used once you approve them: /agents approve")

    async def create_session(
        self, options: SessionOptions | None = None, *, setup: Callable[[Any], Any] | None = None
    ) -> LiveSession:
        """A new stored session, resident beside the others (``wolli.create_session``)."""
        options = options or SessionOptions(cwd=self.active.cwd if self.active else os.getcwd())
        options.session, options.continue_recent = None, False
        session, _ = self.session_from_options(options)
        if setup is not None:
            await _maybe_await(setup(session.session_manager))
            session.agent.replace_messages(session.session_manager.build_session_context().messages)
        await session.start("new")
        return session

    async def open_session(self, ref: str, *, cwd: str | None = None, context_tail: int = 0) -> LiveSession:
        """The session with this id (prefix) or path: the resident one when it is open.
        ``context_tail``: build only that many of its last messages now (``SessionOptions``)."""
        options = SessionOptions(cwd=cwd or (self.active.cwd if self.active else os.getcwd()), session=ref,
                                 context_tail=context_tail)
        session, was_resident = await self.load_session(options)
        if not was_resident:
            await session.start("resume")
        return session

    def get_session(self, session_id: str) -> LiveSession | None:
        return self.resident.get(session_id)

    async def replace_active(self, new: LiveSession, reason: StartReason) -> None:
        """Make ``new`` the active session: shutdown of the old one, listeners, then start."""
        old = self.active
        previous_file = old.session_file if old is not None else None
        if old is not None and old is not new:
            await self.close_session(
                old, reason, target_session_file=new.session_file, keep_active=True  # type: ignore[arg-type]
            )
        self.set_active(new)
        await new.start(reason, previous_file)

    async def new_session(self, options: SessionOptions | None = None) -> LiveSession:
        cwd = self.active.cwd if self.active else os.getcwd()
        options = options or SessionOptions(cwd=cwd)
        options.session, options.continue_recent = None, False
        session, _ = self.session_from_options(options)
        await self.replace_active(session, "new")
        return session

    async def resume_session(self, ref: str) -> LiveSession:
        if not ref.strip():  # an empty reference would silently open a new session instead
            raise LookupError("no session file or id was given")
        cwd = self.active.cwd if self.active else os.getcwd()
        session, _ = await self.load_session(SessionOptions(cwd=cwd, session=ref))
        if session is not self.active:
            await self.replace_active(session, "resume")
        return session

    async def fork_session(
        self, entry_id: str | None, *, source: LiveSession | None = None, replace: bool = True
    ) -> LiveSession:
        """A new session holding the branch up to ``entry_id``, replacing the active one
        (``replace=False``: resident beside it, for a server whose clients each have theirs)."""
        from ...session.manager import SessionManager

        origin = source or self.active
        if origin is None:
            raise RuntimeError("there is no session to fork")
        await origin.wait_for_idle()
        manager = SessionManager.fork(
            origin.session_manager, entry_id, session_dir=self.sessions_dir if origin.session_file else None
        )
        session = self._build(manager, SessionOptions(cwd=origin.cwd, model=origin.model,
                                                      thinking_level=origin.thinking_level,
                                                      active_tools=list(origin.active_tool_names),
                                                      permission_mode=origin.permissions.mode))
        from ..safety.checkpointing import share_blobs

        share_blobs(origin, session)
        if replace:
            await self.replace_active(session, "fork")
        else:
            await session.start("fork", origin.session_file)
        return session

    async def replace_with_new(
        self, old: LiveSession, *, setup: Callable[[Any], Any] | None = None,
        with_session: Callable[[SessionHandle], Any] | None = None,
    ) -> NewSessionResult:
        """``ctx.session.new_session``: a fresh session takes ``old``'s place."""
        options = SessionOptions(cwd=old.cwd, parent_session=old.session_file)
        manager = self._manager_for(options)
        session = self._build(manager, options)
        if setup is not None:
            await _maybe_await(setup(session.session_manager))
            session.agent.replace_messages(session.session_manager.build_session_context().messages)
        if old is self.active:
            await self.replace_active(session, "new")
        else:
            await self.close_session(old, "new", target_session_file=session.session_file)
            await session.start("new", old.session_file)
        handle = self.handle(session)
        if with_session is not None:
            await _maybe_await(with_session(handle))
        return NewSessionResult(cancelled=False, session=handle)

    async def close_session(
        self,
        session: LiveSession,
        reason: ShutdownReason = "quit",
        *,
        target_session_file: str | None = None,
        keep_active: bool = False,
    ) -> None:
        """Shut ``session`` down and forget it. ``keep_active``: a replacement follows at once,
        so listeners see one switch (old → new) rather than old → None → new."""
        await session.close(reason, target_session_file)
        self.resident.pop(session.session_id, None)
        self._handles.pop(id(session), None)
        if session is self.active and not keep_active:
            self.set_active(None)

    async def shutdown(self, reason: ShutdownReason = "quit") -> None:
        """Close every resident session (the active one last)."""
        if self.auto_reloader is not None:
            await self.auto_reloader.stop()
            self.auto_reloader = None
        for session in [s for s in self.resident.values() if s is not self.active]:
            await self.close_session(session, reason)
        if self.active is not None:
            await self.close_session(self.active, reason)
        await self.sandbox.close()
        if self.mcp is not None:
            await self.mcp.shutdown()

    async def reload(self, session: LiveSession | None = None) -> None:
        """``/reload``: re-read settings, models and resources; every resident session gets
        ``session_shutdown``/``session_start`` with reason ``reload`` (same sessions)."""
        for live in self.resident.values():
            if not live.is_idle():
                raise RuntimeError("cannot reload while the agent is working; wait for it or press Esc first")
        for live in list(self.resident.values()):
            await live.emit(SessionShutdownEvent("reload"))
        reset = getattr(self.ui, "reset", None)  # what the old versions put on screen goes with them
        if reset is not None:
            reset()
        self.settings.reload()
        self.apply_handler_timeout()
        self._resources.clear()
        self._environments.clear()
        self.subagents.clear()
        if self._model_registry is not None:
            self._model_registry.refresh()
        self.extensions.settings_paths = [str(p) for p in self.settings.get("extensions") or []]
        self.extensions.tool_settings_paths = [str(p) for p in self.settings.get("customTools") or []]
        await self.extensions.reload(self.active.cwd if self.active else os.getcwd())
        for live in list(self.resident.values()):
            live.refresh_tools()
            await live.start("reload")

    def apply_handler_timeout(self) -> None:
        """settings ``extensionTimeoutMs`` (0 or less: no limit) -> the handlers' time budget."""
        value = self.settings.get("extensionTimeoutMs")
        self.handlers.timeout_s = value / 1000 if isinstance(value, int) and value > 0 else None

    def start_auto_reload(self) -> object:
        """Watch extension, hook and tool files when settings ``autoReload`` is on (long-lived
        front ends call this), and follow the setting from then on: switching it in /settings
        starts or stops the watcher at once. Returns the running :class:`AutoReloader` or None."""
        if not self._follow_auto_reload:
            self._follow_auto_reload = True

            def follow(merged: dict[str, Any]) -> None:
                self._apply_auto_reload()

            self.settings.subscribe(follow)
        return self._apply_auto_reload()

    def _apply_auto_reload(self) -> AutoReloader | None:
        wanted = self.settings.get("autoReload") is True
        if wanted and self.auto_reloader is None:
            from .auto_reload import AutoReloader

            reloader = AutoReloader(self)
            try:
                reloader.start()
            except RuntimeError:  # no running loop here (a settings change from another thread)
                return None
            self.auto_reloader = reloader
        elif not wanted and self.auto_reloader is not None:
            reloader, self.auto_reloader = self.auto_reloader, None
            try:
                asyncio.get_running_loop().create_task(reloader.stop())
            except RuntimeError:
                pass
        return self.auto_reloader

    def request_shutdown(self) -> None:
        """``wolli.shutdown()``: quit once idle (front ends that stay open watch the flag)."""
        self.shutdown_requested = True

    # ------------------------------------------------------------------ the active session

    def on_active_session(self, listener: ActiveListener) -> Callable[[], None]:
        """Call ``listener(new, old)`` whenever the active session changes."""
        self._active_listeners.append(listener)
        return lambda: self._active_listeners.remove(listener) if listener in self._active_listeners else None

    def set_active(self, session: LiveSession | None) -> None:
        old, self.active = self.active, session
        if old is session:
            return
        for listener in list(self._active_listeners):
            listener(session, old)

    # ------------------------------------------------------------------ listing

    def list_sessions(self, cwd: str | None = None) -> list[Any]:
        from ...session.listing import list_all_sessions, list_sessions

        if cwd is None:
            return list_all_sessions(self.sessions_dir)
        return list_sessions(cwd, self.sessions_dir)

    def _resident_at(self, path: str) -> LiveSession | None:
        """The open session whose file is ``path`` (one not written yet has no file to be)."""
        for live in self.resident.values():
            file = live.session_file
            if file and os.path.exists(file) and os.path.exists(path) and os.path.samefile(file, path):
                return live
        return None

    def rename_session(self, path: str, name: str | None) -> None:
        """Name a saved session (an open one through its live manager, so it stays in step)."""
        live = self._resident_at(path)
        if live is not None:
            live.session_manager.append_session_info(name)
            return
        from ...session.manager import SessionManager

        SessionManager.open(path).append_session_info(name)

    def delete_session(self, path: str) -> None:
        """Delete a saved session file; an open session is refused (leave it first)."""
        from ...session.listing import clear_cache

        if self._resident_at(path) is not None:
            raise RuntimeError("this session is open; switch to another one before deleting it")
        os.remove(path)
        clear_cache()
        from ...session.checkpoints.sweep import sweep_in_background

        sweep_in_background(Path(path).parent, only_if_due=False)  # blobs only it needed

    def find_sessions(self, filter: dict[str, str]) -> list[Any]:
        from ...session.listing import find_sessions

        return find_sessions(filter, self.sessions_dir)


def _last_complete_exchange(manager: SessionManager) -> str | None:
    """Where a fork of a session another process is writing starts: its leaf, unless that
    process is in the middle of a turn (a prompt after the last finished answer), which
    stays its own; then the last finished answer (None: there is none yet)."""
    from ...session.entries import MessageEntry

    branch = manager.get_branch()
    last = -1
    for index, entry in enumerate(branch):
        message = entry.message if isinstance(entry, MessageEntry) else None
        if getattr(message, "role", None) == "assistant" and message.stop_reason != "toolUse":  # type: ignore[union-attr]
            last = index
    in_flight = any(isinstance(entry, MessageEntry) and entry.message.role == "user" for entry in branch[last + 1:])
    if not in_flight:
        return manager.get_leaf_id()
    return branch[last].id if last >= 0 else None


async def _maybe_await(value: object) -> object:
    import inspect

    return await value if inspect.isawaitable(value) else value
