"""RPC commands for what extensions add: ``reload`` (``/reload``), ``get_extensions`` and
``set_extension_enabled`` (``/extensions``), ``get_shortcuts`` and ``run_shortcut`` (the keys
they register), so a client in another process, such as an app attached to ``wolli serve``,
offers them as the standalone app does (docs/rpc.md)."""

from __future__ import annotations

from typing import Any

from .commands import CommandError, Later, Reply, RpcServer, _flag, _text, command


@command("reload")
async def reload(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    """Settings, models, skills, templates and extensions again from disk (every session of
    the process hears session_start with reason reload)."""
    try:
        await server.host.reload(server.session)
    except RuntimeError as exc:
        raise CommandError(f"reload: {exc}") from None
    return {"extensions": [{"name": str(info.get("name")), "status": str(info.get("status")),
                            "errors": [str(e) for e in info.get("errors", [])],
                            "warnings": [str(w) for w in info.get("warnings", [])]}
                           for info in server.host.extensions.infos()]}


def _infos(server: RpcServer) -> list[dict[str, Any]]:
    """``/extensions``' rows: names, kinds, paths, status, what each registered, problems."""
    return [{key: value if isinstance(value, str | bool) or value is None else [str(v) for v in value]
             for key, value in info.items()} for info in server.host.extensions.infos()]


@command("get_extensions", "query")
def get_extensions(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return {"extensions": _infos(server)}


@command("set_extension_enabled")
async def set_extension_enabled(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    """``/extensions enable|disable NAME``: settings ``disabledExtensions``, then a reload."""
    from ..interactive.commands.packages import extension_switch

    name = _text(cmd, "name")
    enabled = _flag(cmd, "enabled")
    if name not in {info["name"] for info in server.host.extensions.infos()}:
        raise CommandError(f"set_extension_enabled: no extension named {name!r} (see get_extensions)")
    server.host.settings.modify(extension_switch(name, enabled))
    return await reload(server, cmd)


@command("get_shortcuts", "query")
def get_shortcuts(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return {"shortcuts": [{"key": key, "description": shortcut.description, "extension": shortcut.owner}
                          for key, shortcut in sorted(server.host.extensions.registry.shortcuts.items())]}


@command("run_shortcut")
async def run_shortcut(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    """Run the extension shortcut bound to ``key`` (as ``get_shortcuts`` names it) on the
    session. Answered when its handler returns (its dialogs come meanwhile): ``{error}``,
    the one line a failure shows (the traceback goes to the extension log), or null."""
    from ..interactive.hotkeys import run_shortcut as run

    key = _text(cmd, "key")
    shortcut = server.host.extensions.registry.shortcuts.get(key)
    if shortcut is None:
        raise CommandError(f"run_shortcut: no extension shortcut {key!r} (see get_shortcuts)")
    session = server.session

    async def work() -> dict[str, Any]:
        return {"error": await run(shortcut, session.handler_context(), server.host.home)}

    return Later(server.background(work()))
