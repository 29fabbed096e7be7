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
import json
import threading
import urllib.parse
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..config import paths
from ..config.file_lock import locked
from ..config.settings import write_json_atomic

FILE = "mcp-auth.json"
_MAX_BYTES = 4 * 1024 * 1024
_MAX_REQUEST = 16 * 1024
LOGIN_TIMEOUT = 300.0  # seconds the user has to finish in the browser


def token_path() -> Path:
    return paths.wolli_home() / FILE


class TokenStore:
    """``{"<name> <url>": {"tokens": {...}, "client": {...}}}`` in ``mcp-auth.json`` (0600)."""

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
            with open(self.path, "rb") as fh:
                data = json.loads(fh.read(_MAX_BYTES).decode("utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def get(self, server: str, part: str) -> Any:
        entry = self._read().get(self._key(server))
        return entry.get(part) if isinstance(entry, dict) else None

    def set(self, server: str, part: str, value: Any) -> None:
        with self._lock, locked(self.path, dir_mode=0o700):
            data = self._read()
            entry = data.get(self._key(server))
            entry = dict(entry) if isinstance(entry, dict) else {}
            entry[part] = value
            data[self._key(server)] = entry
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_json_atomic(self.path, data, mode=0o600)

    def has_tokens(self, server: str) -> bool:
        tokens = self.get(server, "tokens")
        return isinstance(tokens, dict) and bool(tokens.get("access_token"))

    def forget(self, server: str) -> bool:
        with self._lock, locked(self.path, dir_mode=0o700):
            data = self._read()
            if data.pop(self._key(server), None) is None:
                return False
            write_json_atomic(self.path, data, mode=0o600)
            return True


ShowUrl = Callable[[str], Awaitable[None] | None]


class LoginHandler:
    """One interactive login: a loopback listener for the redirect, and ``show`` for the URL."""

    def __init__(self, show: ShowUrl, *, timeout: float = LOGIN_TIMEOUT) -> None:
        self.show = show
        self.timeout = timeout
        self.port = 0
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[tuple[str, str | None]] | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    async def __aenter__(self) -> LoginHandler:
        self._result = asyncio.get_running_loop().create_future()
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

    async def wait_for_code(self) -> tuple[str, str | None]:
        assert self._result is not None, "use LoginHandler as an async context manager"
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), self.timeout)
        except TimeoutError:
            raise TimeoutError(f"no answer from the browser within {int(self.timeout)} s") from None

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
        code: str | None = (query.get("code") or [None])[0]  # type: ignore[list-item]
        error: str | None = (query.get("error") or [None])[0]  # type: ignore[list-item]
        if target.path != "/callback" or (code is None and error is None):
            body, status = "Not the login callback.", "404 Not Found"
        elif error is not None:
            body, status = f"Login failed: {error}. You can close this tab.", "400 Bad Request"
            if self._result is not None and not self._result.done():
                self._result.set_exception(PermissionError(f"the server refused the login: {error}"))
        else:
            body, status = "Logged in. You can close this tab and go back to Wolli.", "200 OK"
            if self._result is not None and not self._result.done():
                self._result.set_result((code or "", (query.get("state") or [""])[0] or None))
        data = body.encode()
        writer.write(f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                     f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)
        try:
            await writer.drain()
        except OSError:
            pass
        writer.close()
