"""OAuth for remote MCP servers: where tokens live and how a login reaches the browser.

The protocol work (discovery, dynamic client registration, PKCE, refresh) is the SDK's
OAuth client provider, wired in :mod:`.sdk`. This module holds what is Wolli's:

- :class:`TokenStore`: tokens and registered clients in ``mcp-auth.json`` beside
  ``auth.json``, with the same discipline: mode 0600 from the first byte (a temporary file
  renamed into place), a folder of 0700, and the inter-process file lock around every
  read-modify-write. Entries are keyed by server name *and* URL, so a server whose URL
  changed never receives another server's token.
- :class:`LoginHandler`: a one-shot HTTP listener on 127.0.0.1 that receives the
  authorization redirect, and the hook that shows the authorization URL (the browser, or a
  printed line where there is none).
"""

from __future__ import annotations

import asyncio
import threading
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base.json_input import parse_json
from ..base.safe_files import read_capped
from ..config import paths
from ..config.file_lock import locked
from ..config.settings import write_json_atomic
from .types import NeedsLogin, ServerConfig

FILE = "mcp-auth.json"
_MAX_BYTES = 4 * 1024 * 1024
_MAX_REQUEST = 16 * 1024
LOGIN_TIMEOUT = 300.0  # seconds the user has to finish in the browser


def token_path() -> Path:
    return paths.wolli_home() / FILE


class TokenStore:
    """``{"<name> <url>": {"tokens": {...}, "expiresAt": ..., "client": {...}}}`` in
    ``mcp-auth.json`` (0600). ``expiresAt`` (seconds since the epoch) is when the access token
    runs out, so a later start refreshes it before using it instead of being refused."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or token_path()
        self._lock = threading.Lock()
        self._urls: dict[str, str] = {}

    def bind(self, server: str, url: str) -> None:
        """The URL entries of ``server`` belong to (set before any get/set)."""
        self._urls[server] = url

    def _key(self, server: str) -> str:
        return f"{server} {self._urls.get(server, '')}"

    def _read(self) -> dict[str, Any]:
        try:
            data = parse_json(read_capped(self.path, _MAX_BYTES).decode("utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, server: str, part: str) -> object:
        entry = self._read().get(self._key(server))
        return entry.get(part) if isinstance(entry, dict) else None

    def set(self, server: str, part: str, value: object) -> None:
        """Store ``value`` as ``part`` of the server's entry (None removes the part)."""
        self.update(server, {part: value})

    def update(self, server: str, parts: dict[str, object]) -> None:
        with self._lock, locked(self.path):
            data = self._read()
            entry = data.get(self._key(server))
            entry = dict(entry) if isinstance(entry, dict) else {}
            for part, value in parts.items():
                if value is None:
                    entry.pop(part, None)
                else:
                    entry[part] = value
            data[self._key(server)] = entry
            write_json_atomic(self.path, data, mode=0o600)

    def has_tokens(self, server: str) -> bool:
        tokens = self.get(server, "tokens")
        return isinstance(tokens, dict) and bool(tokens.get("access_token"))

    def set_tokens(self, server: str, tokens: dict[str, Any]) -> None:
        """New tokens, with the moment the access token expires (when the server said)."""
        expires_in = tokens.get("expires_in")
        expires_at = time.time() + expires_in if isinstance(expires_in, int | float) else None
        self.update(server, {"tokens": tokens, "expiresAt": expires_at})

    def expires_at(self, server: str) -> float | None:
        value = self.get(server, "expiresAt")
        return float(value) if isinstance(value, int | float) else None

    def can_refresh(self, server: str) -> bool:
        tokens = self.get(server, "tokens")
        return isinstance(tokens, dict) and bool(tokens.get("refresh_token")) and self.get(server, "client") is not None

    def expire(self, server: str) -> None:
        """Treat the access token as run out (the server refused it): the next connection
        refreshes it first."""
        self.set(server, "expiresAt", 1)  # long past (0 would read as "no expiry known")

    def callback_port(self, server: str, config: ServerConfig) -> int:
        """The port to listen on for the login redirect: the configured one, else the one the
        stored client was registered with (so it can be used again), else any."""
        if config.oauth_callback_port:
            return config.oauth_callback_port
        client = self.get(server, "client")
        uris = client.get("redirect_uris") if isinstance(client, dict) else None
        if isinstance(uris, list) and uris and isinstance(uris[0], str):
            port = urllib.parse.urlsplit(uris[0]).port
            return port if port and port >= 1024 else 0
        return 0

    def prepare_login(self, server: str, config: ServerConfig, redirect_uri: str) -> None:
        """Before an interactive login: a pre-registered client (``oauth.clientId``) is
        stored with this redirect URI; a dynamically registered one that does not list it is
        dropped, so the SDK registers again (a redirect URI it never registered is refused)."""
        if config.oauth_client_id:
            self.set(server, "client", {"client_id": config.oauth_client_id, "redirect_uris": [redirect_uri],
                                        "token_endpoint_auth_method": "none"})
            return
        client = self.get(server, "client")
        uris = client.get("redirect_uris") if isinstance(client, dict) else None
        if client is not None and (not isinstance(uris, list) or redirect_uri not in uris):
            self.set(server, "client", None)

    def forget(self, server: str) -> bool:
        with self._lock, locked(self.path):
            data = self._read()
            if data.pop(self._key(server), None) is None:
                return False
            write_json_atomic(self.path, data, mode=0o600)
            return True


ShowUrl = Callable[[str], Awaitable[None] | None]


@dataclass(frozen=True)
class Redirect:
    """What the browser brought back: the code, and the ``state`` and ``iss`` to check."""

    code: str
    state: str | None
    iss: str | None


def _first(query: dict[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    return values[0] if values else None


class LoginHandler:
    """One interactive login: a loopback listener for the redirect, and ``show`` for the URL."""

    def __init__(self, show: ShowUrl, *, port: int = 0, timeout: float = LOGIN_TIMEOUT) -> None:
        self.show = show
        self.timeout = timeout
        self.port = port
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[Redirect] | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    async def __aenter__(self) -> LoginHandler:
        self._result = asyncio.get_running_loop().create_future()
        try:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        except OSError:  # the wanted port is taken: any free one (the client registers again)
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def open(self, url: str) -> None:
        result = self.show(url)
        if asyncio.iscoroutine(result) or isinstance(result, asyncio.Future):
            await result

    async def wait_for_code(self) -> Redirect:
        assert self._result is not None, "use LoginHandler as an async context manager"
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), self.timeout)
        except TimeoutError:
            raise NeedsLogin(f"no answer from the browser within {int(self.timeout)} s") from None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, OSError):
            writer.close()
            return
        line = head[:_MAX_REQUEST].split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        target = urllib.parse.urlsplit(parts[1] if len(parts) > 1 else "/")
        query = urllib.parse.parse_qs(target.query)
        code, error = _first(query, "code"), _first(query, "error")
        if target.path != "/callback" or (code is None and error is None):
            body, status = "Not the login callback.", "404 Not Found"
        elif error is not None:
            body, status = f"Login failed: {error}. You can close this tab.", "400 Bad Request"
            if self._result is not None and not self._result.done():
                self._result.set_exception(NeedsLogin(f"the login was refused: {error[:100]}"))
        else:
            body, status = "Logged in. You can close this tab and go back to Wolli.", "200 OK"
            if self._result is not None and not self._result.done():
                self._result.set_result(Redirect(code or "", _first(query, "state"), _first(query, "iss")))
        data = body.encode()
        writer.write(f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                     f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)
        try:
            await writer.drain()
        except OSError:
            pass
        writer.close()
