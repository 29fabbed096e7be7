"""The slash-command table: built-in commands, and everything a client lists or runs.

Built-ins are defined in the ``*_commands`` modules (one concern each) and collected here;
extension commands, prompt templates and skills come from the runtime. A built-in name
always wins over an extension command of the same name (the extension's stays reachable in
the palette and from code), so ``/model`` and ``/quit`` cannot be taken over by accident.

``run_builtin`` runs a built-in and reports its failure to the user instead of raising:
a slash command never takes the client down. Anything that is not a built-in goes to
``session.prompt``, which runs extension commands and expands templates and skills.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from .definition import BuiltinCommand, CommandContext, CommandEntry

if TYPE_CHECKING:
    from ....runtime.host.agent_host import AgentHost
    from ....runtime.live.live_session import LiveSession


@cache
def builtin_commands() -> dict[str, BuiltinCommand]:
    """Every built-in command by name and alias."""
    from . import agents, app, mcp, model, packages, permissions, rewind, session

    table: dict[str, BuiltinCommand] = {}
    for module in (session, model, permissions, rewind, app, mcp, agents, packages):
        for command in module.COMMANDS:
            table[command.name] = command
            for alias in command.aliases:
                table[alias] = command
    return table


def split(text: str) -> tuple[str, str] | None:
    """``"/model gpt"`` -> ``("model", "gpt")``; None when the text is not a command line."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    name, _, args = stripped[1:].partition(" ")
    if not name or "\n" in name:
        return None
    return name, args.strip()


def find_builtin(text: str) -> tuple[BuiltinCommand, str] | None:
    parsed = split(text)
    if parsed is None:
        return None
    command = builtin_commands().get(parsed[0])
    return (command, parsed[1]) if command is not None else None


async def run_builtin(ctx: CommandContext, text: str) -> bool:
    """Run ``text`` if it is a built-in command; False when it is not one (send it on)."""
    found = find_builtin(text)
    if found is None:
        return False
    command, args = found
    if command.needs_idle and ctx.session_or_none is not None and not ctx.session_or_none.is_idle():
        ctx.front.notify(f"/{command.name} waits until the agent is idle: let it finish or press Esc.", "warning")
        return True
    try:
        await command.run(ctx, args)
    except Exception as exc:  # a command's failure is news for the user, not a crash
        ctx.front.notify(f"/{command.name}: {exc or type(exc).__name__}", "error")
    return True


def command_entries(host: AgentHost | None, session: LiveSession | None, *, include_hidden: bool = False) -> list[CommandEntry]:
    """Built-ins, then extension commands, prompt templates and skills."""
    seen: set[str] = set()
    out: list[CommandEntry] = []
    for name, command in builtin_commands().items():
        if name == command.name:
            out.append(CommandEntry(name, command.description, command.category, "builtin", command.usage))
            seen.add(name)
        else:
            seen.add(name)
    if host is None or session is None:
        return out
    for info in host.slash_commands(session):
        if info.name in seen:
            continue
        if info.source == "extension":
            registered = host.find_command(info.name)
            availability = getattr(registered, "availability", "enabled")
            if availability == "hidden" and not include_hidden:
                continue
            category = getattr(registered, "category", None) or getattr(registered, "owner", None) or "Extension"
            out.append(CommandEntry(info.name, info.description or getattr(registered, "title", None) or "",
                                    str(category), "extension", availability=availability,
                                    reason=getattr(registered, "disabled_reason", None)))
        else:
            category = "Skill" if info.source == "skill" else "Prompt"
            out.append(CommandEntry(info.name, info.description or "", category, info.source))
    return out


async def argument_completions(ctx: CommandContext, name: str, prefix: str) -> list[dict[str, Any]] | None:
    """The completions of a command's argument: a built-in's own, or an extension's
    ``get_argument_completions`` (which may be async)."""
    import inspect

    command = builtin_commands().get(name)
    if command is not None:
        return command.complete(ctx, prefix) if command.complete is not None else None
    registered = ctx.host_or_none.find_command(name) if ctx.host_or_none is not None else None
    fn = getattr(registered, "get_argument_completions", None)
    if fn is None:
        return None
    items = fn(prefix)
    if inspect.isawaitable(items):
        items = await items
    return list(items) if items else None
