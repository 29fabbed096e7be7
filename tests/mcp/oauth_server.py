"""A loopback OAuth authorization server in front of a streamable-HTTP MCP server, built from
the SDK's own server-side auth pieces: authorization server metadata and protected resource
metadata (discovery), dynamic client registration, the authorize and token endpoints (PKCE,
refresh), and the bearer middleware guarding ``/mcp``.

The provider keeps everything in memory and approves every authorization request at once
(the person clicking "Allow"), redirecting to the client's loopback ``redirect_uri`` with the
code. ``events`` records what happened (registrations, authorizations, code and refresh
exchanges, tool calls), ``secrets`` every code and token it issued (so a test can check none
of them leaks), and :meth:`revoke` forgets tokens as a server-side revocation would.
"""

from __future__ import annotations

import secrets
import socket
import threading
import time
from typing import Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from tests.support.waiting import wait_until_sync

SCOPE = "tools"


class MemoryProvider:
    """``OAuthAuthorizationServerProvider`` in memory."""

    def __init__(self, owner: OAuthServer) -> None:
        self.owner = owner
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    def _secret(self, kind: str) -> str:
        value = f"{kind}-{secrets.token_urlsafe(24)}"
        self.owner.secrets.append(value)
        return value

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info
        self.owner.events.append("register")

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = self._secret("code")
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or [SCOPE], expires_at=time.time() + 300, client_id=client.client_id or "",
            code_challenge=params.code_challenge, redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly, resource=params.resource)
        self.owner.events.append("authorize")
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = self._secret("access"), self._secret("refresh")
        ttl = self.owner.access_ttl
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes,
                                          expires_at=int(time.time()) + ttl, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(access_token=access, expires_in=ttl, scope=" ".join(scopes), refresh_token=refresh)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, code: AuthorizationCode) -> OAuthToken:
        self.codes.pop(code.code, None)
        self.owner.events.append("code exchanged")
        return self._issue(code.client_id, code.scopes, code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client: OAuthClientInformationFull, refresh_token: RefreshToken,
                                     scopes: list[str]) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)  # rotated
        self.owner.events.append("refreshed")
        return self._issue(refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        self.owner.events.append("bearer accepted" if found else "bearer refused")
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


class OAuthServer:
    def __init__(self, *, access_ttl: int = 3600) -> None:
        import uvicorn
        from mcp.server.mcpserver import MCPServer

        self.access_ttl = access_ttl
        self.events: list[str] = []
        self.secrets: list[str] = []
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        base = f"http://127.0.0.1:{self.port}"
        self.url = f"{base}/mcp"
        self.provider = MemoryProvider(self)
        settings = AuthSettings(
            issuer_url=base,  # type: ignore[arg-type]
            resource_server_url=self.url,  # type: ignore[arg-type]
            client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=[SCOPE],
                                                                  default_scopes=[SCOPE]),
            revocation_options=RevocationOptions(enabled=True),
            required_scopes=[SCOPE],
            validate_token_resource=False,
        )
        server = MCPServer("oauth-test", auth=settings, auth_server_provider=self.provider)
        events = self.events

        @server.tool(description="Add two integers.")
        def add(a: int, b: int) -> int:
            events.append("add called")
            return a + b

        self._server = uvicorn.Server(uvicorn.Config(server.streamable_http_app(), log_level="error", lifespan="on"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)
        self._thread.start()
        wait_until_sync(lambda: self._server.started, 15, "the test OAuth server to start")

    def revoke(self, *, refresh_too: bool) -> None:
        """Forget every access token (and refresh token): the server refuses them from now on."""
        self.provider.access.clear()
        if refresh_too:
            self.provider.refresh.clear()

    def count(self, event: str) -> int:
        return self.events.count(event)

    def close(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()

    def __enter__(self) -> OAuthServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
