"""The one module that imports the ``mcp`` SDK (major version 2): everything else in Wolli
talks to :class:`~.types.McpClient` and the plain types of :mod:`.types`.

What the adapter does:

- connects a :class:`~.types.ServerConfig` over stdio (through :class:`~.stdio.StdioProcess`,
  so the child is supervised like every other), streamable HTTP or legacy SSE, with the
  configured headers and, for remote servers, the SDK's OAuth client provider on top of
  Wolli's token store (:mod:`.oauth`);
- turns the SDK's results into dicts and dataclasses, and its errors into
  :class:`~.types.McpError` / :class:`~.types.NeedsLogin` with a one-line reason.

Imported only when a server is about to start, off the first frame's path (the SDK takes
~0.5 s to import).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
import mcp_types
from mcp import Client
from mcp.client._transport import TransportStreams
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.auth.exceptions import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
from mcp.client.session import IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from ..__about__ import __version__
from .oauth import LoginHandler, TokenStore
from .stdio import StderrLog, StdioProcess
from .types import (
    CallOutcome,
    McpError,
    NeedsLogin,
    OnListChanged,
    OnProgress,
    PromptArgumentInfo,
    PromptInfo,
    PromptMessageInfo,
    ResourceInfo,
    ServerConfig,
    ServerOffer,
    ToolInfo,
)

if TYPE_CHECKING:
    pass

CONNECT_TIMEOUT = 30.0  # HTTP connect/write; reads may take as long as a tool runs
_PAGE_CAP = 50  # list pages followed at most (a server whose cursor never ends cannot hang us)
_LIST_CHANGED = {
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
}


# ---------------------------------------------------------------------------- stdio


@contextlib.asynccontextmanager
async def _stdio_streams(config: ServerConfig, log: StderrLog, started: Callable[[StdioProcess], None]
                         ) -> AsyncIterator[TransportStreams]:
    """The SDK's transport shape over Wolli's supervised child: (read stream, write stream)."""
    try:
        process = await StdioProcess.start(config.command, list(config.args), dict(config.env), config.cwd, log)
    except FileNotFoundError as exc:
        missing = exc.filename if exc.filename else config.command
        raise McpError(f"command not found: {missing}" if missing == config.command else str(exc)) from None
    except PermissionError:
        raise McpError(f"cannot run {config.command}: permission denied") from None
    except OSError as exc:
        raise McpError(f"cannot start {config.command}: {exc.strerror or exc}") from None
    started(process)
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](16)

    async def pump_out() -> None:
        async with read_writer:
            while True:
                try:
                    line = await process.read_line()
                except OSError as exc:
                    await read_writer.send(McpError(str(exc)))
                    return
                if line is None:
                    return
                if not line.strip():
                    continue
                try:
                    message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except ValueError:
                    # Not JSON-RPC (a server printing logs to stdout): keep it in the log, go on.
                    log.write(b"[stdout, not JSON-RPC] " + line[:2000] + b"\n")
                    continue
                await read_writer.send(SessionMessage(message))

    async def pump_in() -> None:
        async with write_reader:
            async for item in write_reader:
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                try:
                    await process.write(data.encode("utf-8"))
                except (OSError, RuntimeError):
                    await read_writer.aclose()
                    return

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(pump_out)
            tg.start_soon(pump_in)
            try:
                yield read_stream, write_stream
            finally:
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await process.stop()


# ---------------------------------------------------------------------------- OAuth


class _Storage(TokenStorage):
    """The SDK's token storage protocol over Wolli's file (plain JSON, 0600, locked)."""

    def __init__(self, store: TokenStore, server: str) -> None:
        self.store = store
        self.server = server

    async def get_tokens(self) -> OAuthToken | None:
        data = self.store.get(self.server, "tokens")
        return OAuthToken.model_validate(data) if data else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.store.set_tokens(self.server, tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        data = self.store.get(self.server, "client")
        return OAuthClientInformationFull.model_validate(data) if data else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.store.set(self.server, "client", client_info.model_dump(mode="json", exclude_none=True))


class _Provider(OAuthClientProvider):
    """The SDK's provider, told when the stored access token runs out: the SDK keeps the
    expiry only in memory, so without this a later start would send an expired token, be
    refused, and ask for a new login although the refresh token still works."""

    def __init__(self, config: ServerConfig, metadata: OAuthClientMetadata, store: TokenStore,
                 redirect_handler: Callable[[str], Awaitable[None]],
                 callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]]) -> None:
        super().__init__(config.url, metadata, _Storage(store, config.name), redirect_handler=redirect_handler,
                         callback_handler=callback_handler)
        self._store, self._server = store, config.name

    async def _initialize(self) -> None:
        await super()._initialize()
        expires_at = self._store.expires_at(self._server)
        if expires_at is not None:
            self.context.token_expiry_time = expires_at


def _oauth(config: ServerConfig, store: TokenStore, login: LoginHandler | None) -> OAuthClientProvider | None:
    """The SDK's OAuth provider, or None when the configuration sends its own
    ``Authorization`` header (then a refusal is that header's fault, not a login's). Without
    ``login`` (a background connect) a server that wants a new authorization ends the
    attempt with :class:`NeedsLogin` instead of opening a browser."""
    if config.own_authorization:
        return None

    async def redirect(url: str) -> None:
        if login is None:
            raise NeedsLogin("needs login")
        await login.open(url)

    async def callback() -> AuthorizationCodeResult:
        if login is None:
            raise NeedsLogin("needs login")
        found = await login.wait_for_code()
        return AuthorizationCodeResult(code=found.code, state=found.state, iss=found.iss)

    metadata = OAuthClientMetadata(
        client_name=f"Wolli {__version__}",
        redirect_uris=[login.redirect_uri if login else "http://127.0.0.1/callback"],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        scope=config.oauth_scopes,
    )
    return _Provider(config, metadata, store, redirect, callback)


# ---------------------------------------------------------------------------- the client


class SdkClient:
    """:class:`~.types.McpClient` over an entered SDK ``Client``."""

    def __init__(self, client: Client) -> None:
        self._client = client

    async def offer(self) -> ServerOffer:
        client = self._client
        caps = client.server_capabilities
        info = client.server_info
        offer = ServerOffer(server_name=info.name if info else "", server_version=info.version if info else "",
                            instructions=client.instructions)
        with _errors():
            if caps.tools is not None:
                offer.tools = [_tool(t) for t in await _pages(client.list_tools)]
            if caps.prompts is not None:
                offer.prompts = [_prompt(p) for p in await _pages(client.list_prompts)]
            if caps.resources is not None:
                offer.resources = [_resource(r) for r in await _pages(client.list_resources)]
        return offer

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        on_progress: OnProgress | None = None) -> CallOutcome:
        async def progress(progress: float, total: float | None, message: str | None) -> None:
            if on_progress is not None:
                on_progress(progress, total, message)

        with _errors():
            result = await self._client.call_tool(name, arguments, progress_callback=progress if on_progress else None)
        content = [_dump(block) for block in result.content]
        return CallOutcome(content=content, structured=result.structured_content, is_error=bool(result.is_error))

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        with _errors():
            result = await self._client.read_resource(uri)
        return [_dump(item) for item in result.contents]

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> list[PromptMessageInfo]:
        with _errors():
            result = await self._client.get_prompt(name, arguments)
        return [PromptMessageInfo(role=str(m.role), content=_dump(m.content)) for m in result.messages]


@contextlib.asynccontextmanager
async def connect(
    config: ServerConfig,
    *,
    log: StderrLog,
    tokens: TokenStore,
    login: LoginHandler | None = None,
    on_list_changed: OnListChanged | None = None,
    on_process: Callable[[StdioProcess], None] = lambda process: None,
) -> AsyncIterator[SdkClient]:
    """A connected client for ``config``; leaving the block closes it (and stops a child)."""

    async def on_message(message: IncomingMessage) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if on_list_changed is not None and method in _LIST_CHANGED:
            result = on_list_changed()
            if inspect.isawaitable(result):
                await result

    refused: list[int] = []

    async def note_refusal(response: httpx2.Response) -> None:
        if response.status_code in (401, 403):
            refused.append(response.status_code)

    async with contextlib.AsyncExitStack() as stack:
        transport: AbstractAsyncContextManager[TransportStreams]
        if config.transport == "stdio":
            transport = _stdio_streams(config, log, on_process)
        else:
            # OAuth only once there is something to use (stored tokens) or a login running: a
            # background connect never registers a client or starts a flow on its own.
            auth = _oauth(config, tokens, login) if login is not None or tokens.has_tokens(config.name) else None
            headers = dict(config.headers)
            timeout = httpx2.Timeout(CONNECT_TIMEOUT, read=None)
            if config.transport == "http":
                # The transport turns a refusal into a bare "error response": note the status.
                hooks = {"response": [note_refusal]} if auth is None else {}
                http = await stack.enter_async_context(httpx2.AsyncClient(
                    headers=headers, auth=auth, timeout=timeout, event_hooks=hooks))
                transport = streamable_http_client(config.url, http_client=http)
            else:
                transport = sse_client(config.url, headers=headers, auth=auth, timeout=CONNECT_TIMEOUT,
                                       sse_read_timeout=24 * 3600)
        client = Client(transport, message_handler=on_message, cache=None,
                        client_info=mcp_types.Implementation(name="wolli", version=__version__))
        try:
            with _errors():
                await stack.enter_async_context(client)
        except McpError as exc:
            refusal = refused[-1] if refused else 401 if isinstance(exc, NeedsLogin) else None
            if refusal is not None and config.own_authorization:
                raise McpError(f"the server refused the credentials (HTTP {refusal}): check the Authorization "
                               f"header in {config.source or 'its configuration'}") from None
            if refusal == 401 and config.transport != "stdio":
                raise NeedsLogin("needs login") from None
            raise
        yield SdkClient(client)


# ---------------------------------------------------------------------------- conversions


@contextlib.contextmanager
def _errors() -> Iterator[None]:
    """SDK and transport failures as :class:`McpError` with a short reason."""
    try:
        yield
    except (McpError, anyio.get_cancelled_exc_class()):
        raise
    except MCPError as exc:
        raise McpError(exc.error.message or f"error {exc.error.code}") from None
    except (OAuthFlowError, OAuthTokenError, OAuthRegistrationError) as exc:
        raise NeedsLogin(f"login failed: {exc}") from None
    except httpx2.HTTPStatusError as exc:
        code = exc.response.status_code
        if code == 401:
            raise NeedsLogin("the server refused the credentials (HTTP 401)") from None
        raise McpError(f"HTTP {code} from the server") from None
    except httpx2.HTTPError as exc:
        raise McpError(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__) from None
    except BaseExceptionGroup as group:
        inner = _first_leaf(group)
        if isinstance(inner, McpError):
            raise inner from None
        raise McpError(_describe(inner)) from None
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
        raise McpError("the server closed the connection") from None
    except Exception as exc:
        raise McpError(_describe(exc)) from None


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            return _first_leaf(exc)
        if not isinstance(exc, anyio.get_cancelled_exc_class()):
            return exc
    return group.exceptions[0]


def _describe(exc: BaseException) -> str:
    if isinstance(exc, NeedsLogin | McpError):
        return str(exc)
    if isinstance(exc, httpx2.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from the server"
    if isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError | anyio.EndOfStream):
        return "the server closed the connection"
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _pages(fetch: Callable[..., Awaitable[Any]]) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(_PAGE_CAP):
        page = await fetch(cursor=cursor) if cursor else await fetch()
        for key in ("tools", "prompts", "resources"):
            items.extend(getattr(page, key, None) or [])
        cursor = page.next_cursor
        if not cursor:
            break
    return items


def _dump(model: Any) -> dict[str, Any]:
    data = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return data if isinstance(data, dict) else {"type": "text", "text": str(data)}


def _tool(tool: mcp_types.Tool) -> ToolInfo:
    notes = tool.annotations
    return ToolInfo(
        name=tool.name, description=tool.description or "", input_schema=dict(tool.input_schema or {}),
        title=tool.title or (notes.title if notes else None), output_schema=tool.output_schema,
        read_only=notes.read_only_hint if notes else None, destructive=notes.destructive_hint if notes else None,
        idempotent=notes.idempotent_hint if notes else None, open_world=notes.open_world_hint if notes else None,
    )


def _prompt(prompt: mcp_types.Prompt) -> PromptInfo:
    return PromptInfo(name=prompt.name, description=prompt.description or "", arguments=tuple(
        PromptArgumentInfo(a.name, a.description or "", bool(a.required)) for a in prompt.arguments or []))


def _resource(resource: mcp_types.Resource) -> ResourceInfo:
    return ResourceInfo(uri=str(resource.uri), name=resource.name or str(resource.uri),
                        description=resource.description or "", mime_type=resource.mime_type)
