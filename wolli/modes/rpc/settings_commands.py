"""RPC commands for the settings ``/settings`` edits: ``get_settings`` and ``set_settings``
(the agent's ``settings.json``; docs/rpc.md, docs/settings.md)."""

from __future__ import annotations

from typing import Any

from ..interactive.commands.app import host_setting_fields
from ..interactive.settings_form import SettingField, as_update, parse_value
from .commands import CommandError, Reply, RpcServer, command


def _fields(server: RpcServer) -> dict[str, SettingField]:
    return {f.key: f for f in host_setting_fields(server.host)}


@command("get_settings", "query")
def get_settings(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    """The values of the settings ``/settings`` edits, by their dotted keys."""
    settings = server.host.settings
    return {"values": {key: settings.get(key) for key in _fields(server)}, "path": str(settings.agent_path)}


@command("set_settings")
async def set_settings(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    """``{"values": {"retry.enabled": false, ...}}``: checked as ``/settings`` checks them, then
    saved in the agent's settings.json."""
    values = cmd.get("values")
    if not isinstance(values, dict) or not values:
        raise CommandError("set_settings needs 'values': {dotted key: value}")
    fields = _fields(server)
    parsed: dict[str, Any] = {}
    for key, raw in values.items():
        field = fields.get(key)
        if field is None:
            raise CommandError(f"set_settings: {key!r} is not one of {', '.join(fields)}")
        try:
            parsed[key] = parse_value(field, raw)
        except ValueError as exc:
            raise CommandError(f"set_settings: {exc}") from None
    server.host.settings.update(as_update(parsed))
    return {"values": parsed, "path": str(server.host.settings.agent_path)}
