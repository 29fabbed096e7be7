"""Slash commands in the line mode: the shared built-ins (:mod:`wolli.modes.interactive`)
through :class:`~.front.LineFront`, plus ``/help`` (and ``/hotkeys``) listing this mode's
own keys. Anything else goes to ``session.prompt``, which runs extension commands and
expands prompt templates and skills."""

from __future__ import annotations

from typing import Any

from ..interactive.commands.definition import CommandContext
from ..interactive.commands.registry import argument_completions, command_entries, run_builtin, split
from ..interactive.completion import command_items
from .front import LineClient, LineFront

KEYS = [
    ("Enter", "send (takes the highlighted completion when the menu is open)"),
    ("Ctrl+J, Alt+Enter", "new line"),
    ("Tab", "complete / commands, @ files and paths"),
    ("Up, Down", "earlier prompts (shared with the full-screen app)"),
    ("Shift+Tab, Ctrl+P", "next thinking level, next model of enabledModels"),
    ("Esc, Ctrl+C", "stop the agent while it works; Ctrl+C clears the prompt"),
    ("Ctrl+D", "quit (on an empty prompt)"),
    ("!cmd, !!cmd", "run a shell command (!! keeps its output out of the context)"),
]
OWN = {"help": "the commands and keys of the line mode"}


class LineCommands:
    def __init__(self, repl: LineClient) -> None:
        self.repl = repl
        self.front = LineFront(repl)

    def context(self) -> CommandContext:
        return CommandContext(self.front, self.repl.host, self.repl.session)

    def items(self) -> list[dict[str, Any]]:
        """Every command for completion: built-ins, extension commands, templates, skills."""
        own = [{"value": f"/{name}", "label": f"/{name}", "description": text} for name, text in OWN.items()]
        return own + command_items(command_entries(self.repl.host, self.repl.session))

    async def argument_items(self, name: str, prefix: str) -> object:
        return await argument_completions(self.context(), name, prefix)

    async def run(self, text: str) -> bool:
        """Run ``text`` when it is a built-in command; False when it is not one."""
        parsed = split(text)
        if parsed is None:
            return False
        if parsed[0] in ("help", "hotkeys"):
            self.help()
            return True
        ran: bool = await self.repl.while_working(run_builtin(self.context(), text))
        return ran

    def help(self) -> None:
        width = max(len(keys) for keys, _ in KEYS)
        lines = [f"{keys:<{width}}  {what}" for keys, what in KEYS]
        lines.append("")
        for item in self.items():
            lines.append(f"{item['label']:<{width}}  {item['description'] or ''}")
        self.front.show_text("Line mode", "\n".join(lines))
