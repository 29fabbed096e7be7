"""RPC command ``packages``: ``/packages`` run in the server's process, for a client that has
no host of its own (an app attached to ``wolli serve``). Installing belongs to the machine
whose extensions load the package, so the server runs the same flow as the standalone
command (``interactive/commands/packages.py``) with an :class:`RpcFront`: its report and
results come to the asking client as notices, its confirmation as a dialog (docs/rpc.md)."""

from __future__ import annotations

from typing import Any

from .commands import CommandError, Later, Reply, RpcServer, _text, command


@command("packages")
async def packages(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    """``args`` as after ``/packages`` (empty: the list). Answered once the flow is over."""
    from ..interactive.commands.definition import CommandContext
    from ..interactive.commands.packages import packages as run
    from .front import RpcFront

    args = _text(cmd, "args", required=False) or ""
    session = server.session
    if not session.is_idle():
        raise CommandError("packages: the session is running; abort it (or wait for it) first")

    async def work() -> dict[str, Any]:
        await run(CommandContext(RpcFront(server), server.host, session), args)
        return {}

    return Later(server.background(work()))
