"""The ACP agent: ``initialize``, sessions, prompts, modes; the process's life cycle.

Methods arrive through the SDK's router (a bad ``params`` is its ``-32602``, an unknown
method its ``-32601``; lines that are no message at all are answered by the transport).
Every session is a live session of one :class:`AgentHost`, started without a session of
its own (:func:`start_host`); the editor names the sessions. stdin closing, the client no
longer reading stdout, or SIGINT/SIGTERM/SIGHUP end the process cleanly: runs are aborted,
sessions closed with everything written, exit code 0.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote, urlparse

from ...__about__ import __version__
from ...runtime.live.options import SessionOptions
from ...runtime.startup.request import StartupRequest
from ...runtime.startup.start import HostStartup, start_host
from .environment import ClientOffers, FileLog, file_environment, shell_environment
from .sdk import PROTOCOL_VERSION, AgentSideConnection, Client, RequestError, schema
from .session import AcpSession, first_line
from .transport import StdioTransport
from .ui import AcpUI

if TYPE_CHECKING:
    from ...runtime.live.live_session import LiveSession
    from ...runtime.live.services import ToolOwner
    from ...tools.environment import Environment

log = logging.getLogger("wolli.acp")
# The MCP servers a client may pass to session/new and session/load.
McpServer = schema.HttpMcpServer | schema.SseMcpServer | schema.AcpMcpServer | schema.McpServerStdio


class WolliAgent:
    def __init__(self, startup: HostStartup, ui: AcpUI, *, persist: bool = True) -> None:
        self.startup = startup
        self.persist = persist  # --no-session: new sessions are not saved
        self.host = startup.host
        self.ui = ui
        self.client: Client | None = None  # the editor's side, once connected
        self.offers = ClientOffers()
        self.sessions: dict[str, AcpSession] = {}
        self._files: dict[str, FileLog] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self.host.session_environments = self._environments

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    @property
    def connection(self) -> Client:
        if self.client is None:  # sessions are made by the client's requests, so never
            raise RuntimeError("no ACP client is connected")
        return self.client

    # ------------------------------------------------------------------ setup

    async def initialize(self, protocol_version: int, client_capabilities: schema.ClientCapabilities | None = None,
                         client_info: schema.Implementation | None = None,
                         **kwargs: object) -> schema.InitializeResponse:
        caps = client_capabilities
        fs = getattr(caps, "fs", None)
        self.offers = ClientOffers(read=bool(getattr(fs, "read_text_file", False)),
                                   write=bool(getattr(fs, "write_text_file", False)),
                                   terminal=bool(getattr(caps, "terminal", False)))
        return schema.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,  # the one version there is (the client's, or it disconnects)
            agent_capabilities=schema.AgentCapabilities(
                load_session=True,
                prompt_capabilities=schema.PromptCapabilities(image=True, embedded_context=True, audio=False),
                mcp_capabilities=schema.McpCapabilities(http=True, sse=True),
                session_capabilities=schema.SessionCapabilities(
                    list=schema.SessionListCapabilities(), resume=schema.SessionResumeCapabilities(),
                    close=schema.SessionCloseCapabilities(), fork=schema.SessionForkCapabilities()),
            ),
            agent_info=schema.Implementation(name="wolli", title="Wolli", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: object) -> schema.AuthenticateResponse | None:
        raise RequestError.invalid_params({"message": "Wolli takes its API keys from its own configuration "
                                                      "(docs/providers.md); there is nothing to authenticate here"})

    def _environments(self, env: Environment, owner: ToolOwner) -> tuple[Environment, Environment]:
        session_id = owner.session_manager.get_session_id()
        files = self._files.setdefault(session_id, FileLog())
        file_env = file_environment(env, self.connection, session_id, self.offers, files)
        if self.host.sandbox.active():  # commands stay confined here rather than in the editor
            return file_env, env

        def on_terminal(command: str, terminal_id: str) -> None:
            session = self.sessions.get(session_id)
            if session is not None:
                session.on_terminal(command, terminal_id)

        return file_env, shell_environment(env, self.connection, session_id, self.offers, on_terminal)

    # ------------------------------------------------------------------ sessions

    def _cwd(self, cwd: str) -> str:
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            raise RequestError.invalid_params({"message": f"cwd must be an absolute path, not {cwd!r}"})
        if not os.path.isdir(cwd):
            raise RequestError.invalid_params({"message": f"cwd {cwd} is not a folder"})
        return os.path.normpath(cwd)

    async def new_session(self, cwd: str, mcp_servers: list[McpServer] | None = None,
                          **kwargs: object) -> schema.NewSessionResponse:
        cwd = self._cwd(cwd)
        await self._connect_mcp(mcp_servers or [])
        options = SessionOptions(cwd=cwd, model=self.startup.model, thinking_level=self.startup.thinking_level,
                                 persist=self.persist)
        live = await self.host.create_session(options)
        session = self._adopt(live)
        self._later(self._announce(session))
        return schema.NewSessionResponse(session_id=session.id, modes=session.modes(),
                                         config_options=session.config_options())

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[McpServer] | None = None,
                           **kwargs: object) -> schema.LoadSessionResponse:
        session = await self._open(cwd, session_id, mcp_servers)
        await session.replay()
        self._later(self._announce(session))
        return schema.LoadSessionResponse(modes=session.modes(), config_options=session.config_options())

    async def resume_session(self, session_id: str, cwd: str, additional_directories: list[str] | None = None,
                             mcp_servers: list[McpServer] | None = None,
                             **kwargs: object) -> schema.ResumeSessionResponse:
        """``session/load`` without the history: the client still shows it."""
        session = await self._open(cwd, session_id, mcp_servers)
        self._later(self._announce(session))
        return schema.ResumeSessionResponse(modes=session.modes(), config_options=session.config_options())

    async def fork_session(self, session_id: str, cwd: str, additional_directories: list[str] | None = None,
                           mcp_servers: list[McpServer] | None = None,
                           **kwargs: object) -> schema.ForkSessionResponse:
        """A new session holding a copy of this one's conversation (its current branch); the
        original stays as it is. A run in progress finishes first."""
        source = await self._open(cwd, session_id, mcp_servers)
        live = await self.host.fork_session(source.live.session_manager.get_leaf_id(), source=source.live,
                                            replace=False)
        session = self._adopt(live)
        self._later(self._announce(session))
        return schema.ForkSessionResponse(session_id=session.id, modes=session.modes(),
                                          config_options=session.config_options())

    async def close_session(self, session_id: str, **kwargs: object) -> schema.CloseSessionResponse:
        """Stop the session's run and free it (its file stays; ``session/load`` opens it again)."""
        session = self._session(session_id)
        session.cancel()
        del self.sessions[session_id]
        await session.live.wait_for_idle()
        await self.host.close_session(session.live)
        await session.close()
        return schema.CloseSessionResponse()

    async def _open(self, cwd: str, session_id: str, mcp_servers: list[McpServer] | None) -> AcpSession:
        """The open session ``session_id``, or the saved one opened (load, resume, fork)."""
        from ...session.manager import SessionLookupError
        from ...session.store import SessionFileError

        cwd = self._cwd(cwd)
        session = self.sessions.get(session_id)
        if session is not None:
            return session
        if not session_id or os.sep in session_id:
            raise RequestError.invalid_params({"message": f"no session {session_id!r}"})
        await self._connect_mcp(mcp_servers or [])
        try:
            live = await self.host.open_session(session_id, cwd=cwd)
        except (SessionLookupError, SessionFileError, OSError, ValueError) as exc:
            raise RequestError.resource_not_found(session_id) if isinstance(exc, SessionLookupError) else \
                RequestError.internal_error({"message": str(exc)}) from None
        return self._adopt(live)

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: object) -> schema.ListSessionsResponse:
        infos = self.host.list_sessions(cwd)
        return schema.ListSessionsResponse(sessions=[
            schema.SessionInfo(session_id=i.id, cwd=i.cwd, title=i.name or first_line(i.first_message),
                               updated_at=i.modified.isoformat().replace("+00:00", "Z"))
            for i in infos[:500]])

    def _adopt(self, live: LiveSession) -> AcpSession:
        session = AcpSession(self.host, live, self.connection, self.ui, self._files.setdefault(live.session_id, FileLog()))
        self.sessions[session.id] = session
        self.host.set_active(live)
        return session

    async def _announce(self, session: AcpSession) -> None:
        """After the answer to new/load: the commands (the client knows the session by then)."""
        session.stream.update(session.commands_update())

    def _later(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` once the current request has been answered (the answer is written
        in the same step as the handler returns, before any other task runs)."""
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"no open session {session_id!r} (session/new or session/load first)"})
        return session

    async def _connect_mcp(self, servers: list[McpServer]) -> None:
        """MCP servers the client passes are started for this process's sessions."""
        if not servers:
            return
        from ...mcp.config import parse_server

        link = self.host.mcp_link()
        for server in servers:
            raw: dict[str, Any]
            if getattr(server, "command", None) is not None:
                raw = {"command": server.command, "args": list(server.args or []),
                       "env": {e.name: e.value for e in server.env or []}}
            elif getattr(server, "url", None) is not None:
                raw = {"type": getattr(server, "type", "http"), "url": server.url,
                       "headers": {h.name: h.value for h in server.headers or []}}
            else:
                raise RequestError.invalid_params(
                    {"message": f"MCP server {server.name!r}: only stdio, http and sse servers are supported"})
            try:
                link.manager.add(parse_server(server.name, raw, "cli", "ACP client (session/new)", os.environ))
            except ValueError as exc:
                raise RequestError.invalid_params({"message": f"MCP server {server.name!r}: {exc}"}) from None
        if not link.started:
            await link.start(interactive=False)

    # ------------------------------------------------------------------ turns and modes

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: object) -> schema.PromptResponse:
        session = self._session(session_id)
        text, images = prompt_content(prompt)
        if not text.strip() and not images:  # nothing for the model; a provider would refuse it
            raise RequestError.invalid_params({"message": "the prompt is empty: send text, an image or a resource"})
        stop = await session.prompt(text, images)
        return schema.PromptResponse(stop_reason=stop)

    async def cancel(self, session_id: str, **kwargs: object) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: object) -> schema.SetSessionModeResponse:
        await self._session(session_id).set_mode(mode_id)
        return schema.SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: object) -> schema.SetSessionConfigOptionResponse:
        session = self._session(session_id)
        await session.set_option(config_id, value)
        return schema.SetSessionConfigOptionResponse(config_options=session.config_options())

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    # ------------------------------------------------------------------ end

    async def shutdown(self) -> None:
        for session in list(self.sessions.values()):
            session.cancel()
        await self.host.shutdown("quit")
        for session in list(self.sessions.values()):
            await session.close()
        for task in list(self._tasks):
            task.cancel()


def prompt_content(blocks: list[Any]) -> tuple[str, list[Any]]:
    """ACP content blocks as Wolli's message text and images. Embedded resources join the
    text as quoted context, links as the path or URI they name."""
    from ...ai.types import ImageContent

    texts: list[str] = []
    images: list[Any] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind == "image":
            images.append(ImageContent(data=block.data, mime_type=block.mime_type))
        elif kind == "resource":
            resource = block.resource
            uri = _shown_uri(resource.uri)
            if getattr(resource, "text", None) is not None:
                texts.append(f'<context ref="{uri}">\n{resource.text}\n</context>')
            elif str(getattr(resource, "mime_type", "") or "").startswith("image/"):
                images.append(ImageContent(data=resource.blob, mime_type=resource.mime_type))
            else:
                size = len(base64.b64decode(resource.blob, validate=False)) if resource.blob else 0
                texts.append(f"(attached: {uri}, {size} bytes of binary data, not shown)")
        elif kind == "resource_link":
            texts.append(_shown_uri(block.uri))
        elif kind == "audio":
            texts.append("(an audio clip was attached; Wolli does not take audio)")
    return "\n".join(texts), images


def _shown_uri(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


async def serve(request: StartupRequest) -> int:
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()
    transport = await StdioTransport.open(stopped.set)
    ui = AcpUI()
    ui.loop = loop
    startup = await start_host(request, ui=ui)
    for warning in startup.warnings:
        print(f"wolli: {warning}", file=sys.stderr, flush=True)
    agent = WolliAgent(startup, ui, persist=not request.no_session)
    startup.host.start_auto_reload()  # settings autoReload: watch extension files, like the TUI
    if startup.host.mcp is not None:  # configured servers start in the background
        agent._later(startup.host.start_mcp(interactive=False))
    # session/close and session/resume are stable in the protocol since April 2026; SDK 0.12
    # still routes them (and session/fork) only with its "unstable" switch on.
    conn = AgentSideConnection(cast(Any, agent), transport, listening=False, use_unstable_protocol=True)
    listening = loop.create_task(conn.listen())
    waiting = loop.create_task(stopped.wait())
    from ..common.signals import Interrupt

    with Interrupt(stopped.set):
        await asyncio.wait([listening, waiting], return_when=asyncio.FIRST_COMPLETED)
    await agent.shutdown()
    listening.cancel()
    waiting.cancel()
    try:
        await asyncio.wait_for(conn.close(), 2)
    except (TimeoutError, OSError, ConnectionError) as exc:  # the client is gone: nothing to flush to
        log.debug("closing the connection: %s", exc)
    return 0


def run_acp(request: StartupRequest) -> int:
    """The entry point of ``wolli --mode acp`` and ``wolli-acp``."""
    from ..common.run import run_sync

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="wolli: %(name)s: %(message)s")
    return run_sync(serve(request))
