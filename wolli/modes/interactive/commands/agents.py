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
        ctx.front.show_text("Subagents", report(host, cwd))
        return
    names = host.subagents.approve_project(cwd, action == "approve")
    if not names:
        ctx.front.notify("This project has no subagent definitions in .claude/agents/.")
        return
    for session in list(host.resident.values()):
        session.refresh_tools()  # the task tool lists what there is now
    verb = "now offered" if action == "approve" else "not used (asked again if the files change)"
    ctx.front.notify(f"Project subagents {verb}: {', '.join(names)}")


def report(host: AgentHost, cwd: str) -> str:
    loaded = host.subagents.load(cwd)
    lines = []
    for name, definition in sorted(loaded.definitions.items()):
        lines.append(f"{name}  ({definition.source})")
        lines.append(f"    {definition.description}")
    if loaded.project_dir is not None and loaded.project_verdict != "approved":
        lines.append("")
        lines.append(f"{loaded.project_dir}: {', '.join(loaded.project_names) or 'no usable files'} "
                     f"({'denied' if loaded.project_verdict == 'denied' else 'waiting for approval'}; "
                     "/agents approve uses them)")
    if loaded.errors:
        lines.append("")
        lines.append("Not usable:")
        lines += [f"    {error}" for error in loaded.errors]
    return "\n".join(lines)


def _complete(ctx: CommandContext, prefix: str) -> list[dict[str, Any]]:
    return [{"value": a, "label": a} for a in ACTIONS if a.startswith(prefix.strip())]


COMMANDS = [
    BuiltinCommand("agents", "Subagents the task tool offers; approve the project's .claude/agents", agents,
                   category="Wolli", usage="[list|approve|deny]", complete=_complete),
]
