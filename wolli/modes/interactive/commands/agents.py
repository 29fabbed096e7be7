"""``/agents``: the subagents the ``task`` tool offers, and the project's definitions.

``/agents`` lists every subagent (name, where it was defined, its description) with the
files that could not be used; ``/agents approve`` and ``/agents deny`` answer for the
project's ``.claude/agents/`` files as they are now (docs/subagents.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .definition import BuiltinCommand, CommandContext

if TYPE_CHECKING:
    from ....runtime.host.agent_host import AgentHost

ACTIONS = ("list", "approve", "deny")


async def agents(ctx: CommandContext, args: str) -> None:
    host = ctx.host
    if host is None:
        return
    action = args.strip() or "list"
    if action not in ACTIONS:
        ctx.front.notify(f"/agents {action}: unknown; use one of {', '.join(ACTIONS)}", "warning")
        return
    cwd = ctx.session.cwd
    if action == "list":
        ctx.front.show_text("Subagents", report(subagents_record(host, cwd)))
        return
    ctx.front.notify(approval_said(approve_project(host, cwd, action == "approve"), action == "approve"))


def approve_project(host: AgentHost, cwd: str, approve: bool) -> list[str]:
    """``/agents approve|deny``: the project's definitions as they are now; the names."""
    names = host.subagents.approve_project(cwd, approve)
    for session in list(host.resident.values()):
        session.refresh_tools()  # the task tool lists what there is now
    return names


def approval_said(names: list[str], approve: bool) -> str:
    if not names:
        return "This project has no subagent definitions in .claude/agents/."
    verb = "now offered" if approve else "not used (asked again if the files change)"
    return f"Project subagents {verb}: {', '.join(names)}"


def subagents_record(host: AgentHost, cwd: str) -> dict[str, Any]:
    """The subagents of ``cwd`` as data (``/agents``, RPC ``get_subagents``)."""
    loaded = host.subagents.load(cwd)
    pending = loaded.project_dir is not None and loaded.project_verdict != "approved"
    return {"subagents": [{"name": name, "source": str(d.source), "description": d.description}
                          for name, d in sorted(loaded.definitions.items())],
            "project": {"dir": str(loaded.project_dir), "names": list(loaded.project_names),
                        "verdict": loaded.project_verdict} if pending else None,
            "errors": [str(e) for e in loaded.errors]}


def report(record: dict[str, Any]) -> str:
    lines = []
    for agent in record["subagents"]:
        lines.append(f"{agent['name']}  ({agent['source']})")
        lines.append(f"    {agent['description']}")
    project = record.get("project")
    if project:
        lines.append("")
        lines.append(f"{project['dir']}: {', '.join(project['names']) or 'no usable files'} "
                     f"({'denied' if project['verdict'] == 'denied' else 'waiting for approval'}; "
                     "/agents approve uses them)")
    if record["errors"]:
        lines.append("")
        lines.append("Not usable:")
        lines += [f"    {error}" for error in record["errors"]]
    return "\n".join(lines)


def _complete(ctx: CommandContext, prefix: str) -> list[dict[str, Any]]:
    return [{"value": a, "label": a} for a in ACTIONS if a.startswith(prefix.strip())]


COMMANDS = [
    BuiltinCommand("agents", "Subagents the task tool offers; approve the project's .claude/agents", agents,
                   category="Wolli", usage="[list|approve|deny]", complete=_complete),
]
