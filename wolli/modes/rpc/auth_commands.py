"""RPC commands for the API keys ``/login`` and ``/logout`` store: ``get_login_providers``,
``set_api_key`` and ``remove_api_key`` (the agent's ``auth.json``, 0600; docs/rpc.md).
A key is never answered, logged or put in an event."""

from __future__ import annotations

from typing import Any

from ..interactive.commands.model import login_providers
from .commands import CommandError, Reply, RpcServer, _text, command


@command("get_login_providers", "query")
def get_login_providers(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    auth = server.host.model_registry.auth
    return {"providers": login_providers(server.host), "stored": auth.list_providers(), "path": str(auth.path)}


@command("set_api_key")
async def set_api_key(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    """Store ``key`` for ``provider``; its models work at once."""
    provider = _text(cmd, "provider")
    key = _text(cmd, "key").strip()
    if provider not in login_providers(server.host):
        raise CommandError(f"set_api_key: unknown provider {provider!r} (see get_login_providers)")
    if not key:
        raise CommandError("set_api_key: 'key' is empty")
    registry = server.host.model_registry
    registry.auth.set_api_key(provider, key)
    registry.refresh()
    return {"path": str(registry.auth.path)}


@command("remove_api_key")
async def remove_api_key(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    provider = _text(cmd, "provider")
    auth = server.host.model_registry.auth
    if not auth.remove(provider):
        raise CommandError(f"remove_api_key: no key stored for {provider!r}; stored: {', '.join(auth.list_providers())}")
    server.host.model_registry.refresh()
    return {"path": str(auth.path)}
