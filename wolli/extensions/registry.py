"""What the loaded extensions registered, by whom: the data behind ``/extensions``.

One :class:`ExtensionRecord` per extension (loaded or failed) keeps its tools, commands,
shortcuts, flags, renderers, providers, handler events and errors. The registry publishes
the live views the host reads (``tools``, ``commands``) and forgets everything on reload.

Command names: one extension's ``review`` is ``/review``; when several extensions register
the same name, every one of them is reachable as ``/review:1``, ``/review:2``... in load
order (the bare name is then ambiguous and not bound).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any

from ..agent.tool import ToolDefinition
from ..base.records import record

if TYPE_CHECKING:
    from ..config.subagent_files import SubagentDefinition
    from .api_services import EventBus
    from .host import ContextView
    from .loader import ExtensionSource

FLAG_TYPES = ("boolean", "string")


@record
class Flag:
    name: str
    description: str
    type: str
    default: bool | str | None
    owner: str


@record
class Shortcut:
    key: str  # canonical (wolli.config.keys): "alt+ctrl+p", whatever the author wrote
    handler: Callable[..., Any]
    description: str
    owner: str
    spec: str = ""  # as the author wrote it

    async def run(self, ctx: ContextView) -> None:
        result = self.handler(ctx)
        if inspect.isawaitable(result):
            await result


@record
class ExtensionPromptSection:
    title: str
    content: str | Callable[[], str]  # a function is read at each prompt build
    order: int
    owner: str
    rank: int

    def text(self) -> str:
        try:
            value = self.content() if callable(self.content) else self.content
        except Exception:  # a broken section must not break every prompt; it is left out
            return ""
        return "" if value is None else str(value)


@record
class RegisteredCommand:
    name: str
    handler: Callable[..., Any]
    description: str
    owner: str
    get_argument_completions: Callable[[str], Any] | None = None
    title: str | None = None
    category: str | None = None
    availability: str = "enabled"
    rank: int = 0
    invocation: str = ""  # the name it is typed as: "review" or "review:2"
    disabled_reason: str | None = None  # shown beside a disabled command in the palette

    async def run(self, args: str, ctx: ContextView) -> None:
        if self.availability == "disabled":
            from .errors import CommandUnavailable

            why = f": {self.disabled_reason}" if self.disabled_reason else " right now"
            raise CommandUnavailable(f"/{self.invocation or self.name} is not available{why}")
        result = self.handler(args, ctx)
        if inspect.isawaitable(result):
            await result


def parse_availability(availability: object, reason: str | None = None) -> tuple[str, str | None]:
    kind: object = availability
    why: object = reason
    if isinstance(availability, dict):
        kind, why = availability.get("type"), availability.get("reason", reason)
    if kind not in ("enabled", "disabled", "hidden"):
        raise ValueError("availability is one of enabled, disabled (with a reason), hidden")
    return str(kind), (str(why) if why and kind == "disabled" else None)


class CommandHandle:
    """What ``register_command`` returns: change availability, or take the command back."""

    def __init__(self, registry: ExtensionRegistry, command: RegisteredCommand) -> None:
        self._registry = registry
        self._command = command

    def set_availability(self, availability: object, reason: str | None = None) -> None:
        """``"enabled"``, ``"hidden"``, ``"disabled"`` with a ``reason``; Amp's
        ``{"type": "disabled", "reason": ...}`` is taken too."""
        self._command.availability, self._command.disabled_reason = parse_availability(availability, reason)

    def unregister(self) -> None:
        self._registry.remove_command(self._command)


@record
class ExtensionRecord:
    name: str
    source: ExtensionSource
    rank: int
    kind: str = "extension"  # extension | hook | tool | claude-hooks
    status: str = "loading"  # loading | loaded | failed | disabled
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    shortcuts: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    renderers: list[str] = field(default_factory=list)
    providers: list[str] = field(default_factory=list)
    mcp_servers: list[str] = field(default_factory=list)
    subagents: list[str] = field(default_factory=list)
    handlers: list[str] = field(default_factory=list)
    module_name: str | None = None

    @property
    def owner(self) -> str:
        """What handler errors name: the extension's file (or its package entry point)."""
        return str(getattr(self.source, "label", self.name))

    def info(self) -> dict[str, Any]:
        """The ``/extensions`` row of this extension."""
        return {
            "name": self.name, "kind": self.kind, "path": getattr(self.source, "label", str(self.source)), "status": self.status,
            "tools": list(self.tools), "commands": list(self.commands), "shortcuts": list(self.shortcuts),
            "flags": list(self.flags), "renderers": list(self.renderers), "providers": list(self.providers),
            "mcp_servers": list(self.mcp_servers), "subagents": list(self.subagents),
            "handlers": sorted(set(self.handlers)), "errors": list(self.errors), "warnings": list(self.warnings),
            "package": getattr(self.source, "package", None),
        }


class ExtensionRegistry:
    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self.records: list[ExtensionRecord] = []
        self.tools: list[ToolDefinition] = []
        self.commands: dict[str, RegisteredCommand] = {}  # invocation name -> command
        self.shortcuts: dict[str, Shortcut] = {}
        self.flags: dict[str, Flag] = {}
        self.flag_values: dict[str, Any] = {}  # from the command line
        self.renderers: dict[str, Callable[..., Any]] = {}
        self.renderer_owners: dict[str, str] = {}  # custom type -> the extension's name
        self.prompt_sections: list[ExtensionPromptSection] = []
        self.integrations: dict[str, Callable[..., Any]] = {}
        # Subagent definitions by name (``register_subagent``; docs/subagents.md).
        self.subagents: dict[str, SubagentDefinition] = {}
        self._commands: list[RegisteredCommand] = []
        # Called with (record, text) for each warning (the runtime reports them).
        self.on_warning: Callable[[ExtensionRecord, str], None] | None = None

    def clear(self) -> None:
        """Forget every registration (reload); the published containers are emptied in place."""
        self.records.clear()
        self.tools.clear()
        self._commands.clear()
        self.commands.clear()
        self.shortcuts.clear()
        self.flags.clear()
        self.renderers.clear()
        self.renderer_owners.clear()
        self.prompt_sections.clear()
        self.integrations.clear()
        self.subagents.clear()

    def warn(self, record: ExtensionRecord, text: str) -> None:
        record.warnings.append(text)
        if self.on_warning is not None:
            self.on_warning(record, text)

    # ------------------------------------------------------------------ tools

    def add_tool(self, record: ExtensionRecord, tool: ToolDefinition) -> None:
        earlier = next((r.name for r in self.records if r is not record and tool.name in r.tools
                        and any(t.name == tool.name for t in self.tools)), None)
        if earlier is not None:  # said, as for flags and shortcuts: one extension's tool silently gone is a puzzle
            self.warn(record, f"tool {tool.name} was already registered by {earlier}; the later one wins")
        self.tools[:] = [t for t in self.tools if t.name != tool.name]
        self.tools.append(tool)
        if tool.name not in record.tools:
            record.tools.append(tool.name)

    # ------------------------------------------------------------------ commands

    def add_command(self, record: ExtensionRecord, command: RegisteredCommand) -> CommandHandle:
        self._commands.append(command)
        self._bind_commands()
        record.commands.append(command.name)
        return CommandHandle(self, command)

    def remove_command(self, command: RegisteredCommand) -> None:
        if command in self._commands:
            self._commands.remove(command)
            self._bind_commands()

    def _bind_commands(self) -> None:
        by_name: dict[str, list[RegisteredCommand]] = {}
        for command in sorted(self._commands, key=lambda c: c.rank):  # stable: registration order
            by_name.setdefault(command.name, []).append(command)
        self.commands.clear()
        for name, same in by_name.items():
            if len(same) == 1:
                same[0].invocation = name
                self.commands[name] = same[0]
                continue
            for number, command in enumerate(same, start=1):
                command.invocation = f"{name}:{number}"
                self.commands[command.invocation] = command

    # ------------------------------------------------------------------ the rest

    def add_shortcut(self, record: ExtensionRecord, shortcut: Shortcut) -> None:
        if shortcut.key in self.shortcuts:
            self.warn(record, f"shortcut {shortcut.key} was already registered by {self.shortcuts[shortcut.key].owner}; "
                              "the later one wins")
        self.shortcuts[shortcut.key] = shortcut
        record.shortcuts.append(shortcut.key)

    def add_flag(self, record: ExtensionRecord, flag: Flag) -> None:
        if flag.name in self.flags and self.flags[flag.name].owner != record.name:
            self.warn(record, f"flag --{flag.name} was already registered by {self.flags[flag.name].owner}; the later one wins")
        self.flags[flag.name] = flag
        record.flags.append(flag.name)

    def flag_value(self, name: str) -> object:
        flag = self.flags.get(name)
        if name in self.flag_values:
            value = self.flag_values[name]
            if flag is not None and flag.type == "boolean" and isinstance(value, str):
                return value.strip().lower() not in ("", "0", "false", "no", "off")
            return value
        return flag.default if flag is not None else None

    def add_renderer(self, record: ExtensionRecord, custom_type: str, renderer: Callable[..., Any]) -> None:
        self.renderers[custom_type] = renderer
        self.renderer_owners[custom_type] = record.name
        record.renderers.append(custom_type)

    def add_prompt_section(self, record: ExtensionRecord, title: str, content: str | Callable[[], str], order: int) -> None:
        self.prompt_sections[:] = [s for s in self.prompt_sections if not (s.title == title and s.owner == record.name)]
        self.prompt_sections.append(ExtensionPromptSection(title, content, order, record.name, record.rank))
        self.prompt_sections.sort(key=lambda s: (s.order, s.rank))

    def add_integration(self, record: ExtensionRecord, name: str, factory: Callable[..., Any]) -> None:
        self.integrations[name] = factory

    def integration(self, name: str, account: str | None) -> object:
        factory = self.integrations.get(name)
        if factory is None:
            known = ", ".join(sorted(self.integrations)) or "none"
            raise LookupError(f"no integration named {name!r} (registered: {known})")
        return factory(account) if account is not None else factory(None)
