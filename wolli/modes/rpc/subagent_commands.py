"""RPC commands about subagents, what ``/agents`` shows and answers: ``get_subagents`` and
``approve_subagents`` (the project's ``.claude/agents/`` files; docs/subagents.md)."""

from __future__ import annotations

from typing import Any

from ..interactive.commands.agents import approve_project, subagents_record
from .commands import Reply, RpcServer, _flag, command


@command("get_subagents", "query")
def get_subagents(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return subagents_record(server.host, server.session.cwd)


@command("approve_subagents")
async def approve_subagents(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return {"names": approve_project(server.host, server.session.cwd, _flag(cmd, "approve"))}
