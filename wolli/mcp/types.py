"""The MCP layer's own small typed interface: what a server is, what it offers, what a call
returns, and the one protocol (:class:`McpClient`) the SDK adapter implements.

Nothing here imports the SDK: the rest of ``wolli.mcp`` (and every front end) works with
these plain types, so a change of the SDK's major version touches :mod:`.sdk` alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Transport = Literal["stdio", "http", "sse"]
State = Literal["disabled", "connecting", "ready", "failed", "needs-login", "stopped"]
# Where a server's definition came from: the agent home, the project's .mcp.json, a
# --mcp-config file, an installed package or plugin, or an extension (``wolli.register_mcp_server``).
Scope = Literal["agent", "project", "cli", "extension", "package"]
# The adapter calls this when the server says its tool/prompt/resource list changed.
OnListChanged = Callable[[], Awaitable[None] | None]
# A call's ``notifications/progress``: (progress, total or None, message or None).
OnProgress = Callable[[float, float | None, str | None], None]


@dataclass(frozen=True)
class ServerConfig:
    """One server as configured (``.mcp.json`` shape, variables already expanded)."""

    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    scope: Scope = "agent"
    source: str = ""  # the file (or extension) that defined it
    # OAuth client id/scopes when the server needs a pre-registered client (optional).
    oauth_client_id: str | None = None
    oauth_scopes: str | None = None
    # A fixed port for the login redirect (http://127.0.0.1:PORT/callback), for a client
    # registered with the server ahead of time; 0: any free port.
    oauth_callback_port: int = 0

    @property
    def own_authorization(self) -> bool:
        """Whether the configuration sends its own ``Authorization`` header (then it is not an
        OAuth login: a refusal is that header's fault)."""
        return any(key.lower() == "authorization" for key, _ in self.headers)

    @property
    def target(self) -> str:
        """What to show for it: the command line or the URL."""
        if self.transport == "stdio":
            return " ".join([self.command, *self.args])
        return self.url


@dataclass(frozen=True)
class ToolInfo:
    """A tool a server lists (``tools/list``)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None


@dataclass(frozen=True)
class PromptArgumentInfo:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class PromptInfo:
    name: str
    description: str = ""
    arguments: tuple[PromptArgumentInfo, ...] = ()


@dataclass(frozen=True)
class ResourceInfo:
    uri: str
    name: str
    description: str = ""
    mime_type: str | None = None


@dataclass
class CallOutcome:
    """A tool call's result as plain data: ``content`` holds MCP content blocks as dicts
    (``{"type": "text", "text": ...}``, ``image``, ``audio``, ``resource``, ``resource_link``)."""

    content: list[dict[str, Any]] = field(default_factory=list)
    structured: object = None
    is_error: bool = False


@dataclass
class PromptMessageInfo:
    role: str
    content: dict[str, Any]


@dataclass
class ServerOffer:
    """What a connected server offers, read once after connecting (and on list changes)."""

    tools: list[ToolInfo] = field(default_factory=list)
    prompts: list[PromptInfo] = field(default_factory=list)
    resources: list[ResourceInfo] = field(default_factory=list)
    server_name: str = ""
    server_version: str = ""
    instructions: str | None = None
    # The input schemas were made safe already (a list read back from the cache), so the
    # start-up path need not load a JSON-schema validator to check them again.
    schemas_checked: bool = False


class McpError(Exception):
    """A server answered with a protocol error, or the connection failed; the text is for people."""


class NeedsLogin(McpError):
    """The server wants OAuth and there is no usable token: ``/mcp login NAME``."""


class McpClient(Protocol):
    """One live connection, as the adapter gives it to the rest of the layer."""

    async def offer(self) -> ServerOffer: ...

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        on_progress: OnProgress | None = None) -> CallOutcome: ...

    async def read_resource(self, uri: str) -> list[dict[str, Any]]: ...

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> list[PromptMessageInfo]: ...

