"""Server resources (``@server:uri`` in a message) and prompts (``/mcp__server__prompt``).

A resource reference in the user's text is replaced by the resource's text (binary
contents are named, not inlined); a prompt command fetches the server's prompt with its
arguments (``key=value`` pairs, or the values in the order the prompt declares them) and
sends its messages as the user's message.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..tools.truncate import DEFAULT_MAX_BYTES, format_size
from .tools import prompt_command
from .types import McpError, PromptInfo

if TYPE_CHECKING:
    from .manager import McpManager

_REF = re.compile(r"(?<![\w@])@([A-Za-z0-9_.-]+):(\S+)")


def resource_refs(manager: McpManager) -> list[dict[str, str]]:
    """Completion items: ``@server:uri`` for every resource a server offers (or, while it
    connects, offered last time)."""
    items = []
    for server in manager.servers.values():
        offer = server.offered()
        for res in offer.resources if offer is not None else []:
            items.append({"value": f"@{server.name}:{res.uri}", "label": f"{server.name}:{res.uri}",
                          "description": res.description or res.name})
    return items


async def expand_references(manager: McpManager, text: str) -> str:
    """``@server:uri`` replaced by the resource, for servers that are connected."""
    matches = [m for m in _REF.finditer(text) if m.group(1) in manager.servers]
    if not matches:
        return text
    out, last = [], 0
    for match in matches:
        server = manager.servers[match.group(1)]
        uri = match.group(2).rstrip(".,;:)")
        try:
            contents = await server.read_resource(uri)
            body = _contents_text(contents)
            replacement = f'<resource server="{server.name}" uri="{uri}">\n{body}\n</resource>'
        except McpError as exc:
            replacement = f"@{server.name}:{uri} (could not be read: {exc})"
        out.append(text[last:match.start()])
        out.append(replacement)
        last = match.start() + len("@" + match.group(1) + ":" + uri)
    out.append(text[last:])
    return "".join(out)


def _contents_text(contents: list[dict[str, Any]]) -> str:
    parts = []
    for item in contents:
        if isinstance(item.get("text"), str):
            text = item["text"]
            if len(text.encode("utf-8")) > DEFAULT_MAX_BYTES:
                text = text.encode("utf-8")[:DEFAULT_MAX_BYTES].decode("utf-8", "ignore") + \
                    f"\n[cut at {format_size(DEFAULT_MAX_BYTES)}]"
            parts.append(text)
        else:
            size = len(item.get("blob") or "") * 3 // 4
            parts.append(f"[binary {item.get('mimeType', 'data')}, {format_size(size)}]")
    return "\n".join(parts)


class MessageSender(Protocol):
    def send_user_message(self, content: str) -> Awaitable[object]: ...


class CommandCaller(Protocol):
    """The ``ctx`` a command runs with (an extension command's context): its session."""

    @property
    def session(self) -> MessageSender: ...


@dataclass
class PromptCommand:
    """``/mcp__server__prompt args``: what the runtime runs and lists as a slash command."""

    manager: McpManager
    server: str
    prompt: PromptInfo

    @property
    def name(self) -> str:
        return prompt_command(self.server, self.prompt.name)

    @property
    def description(self) -> str:
        args = " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in self.prompt.arguments)
        text = self.prompt.description or f"prompt {self.prompt.name} of {self.server}"
        return f"{text} {args}".strip()

    def arguments(self, text: str) -> dict[str, str]:
        try:
            words = shlex.split(text)
        except ValueError:
            words = text.split()
        named = dict(w.split("=", 1) for w in words if "=" in w and w.split("=", 1)[0] in
                     {a.name for a in self.prompt.arguments})
        positional = [w for w in words if not ("=" in w and w.split("=", 1)[0] in named)]
        for arg in self.prompt.arguments:
            if arg.name not in named and positional:
                named[arg.name] = positional.pop(0)
        if positional and self.prompt.arguments:
            last = self.prompt.arguments[-1].name
            named[last] = " ".join([named[last], *positional])
        missing = [a.name for a in self.prompt.arguments if a.required and a.name not in named]
        if missing:
            raise ValueError(f"/{self.name} needs {', '.join(missing)} (usage: /{self.name} {self.description})")
        return named

    async def render(self, text: str) -> str:
        server = self.manager.servers.get(self.server)
        if server is None:
            raise ValueError(f"the MCP server {self.server} is gone")
        messages = await server.get_prompt(self.prompt.name, self.arguments(text))
        parts = []
        for message in messages:
            content = message.content
            if content.get("type") == "text":
                parts.append(str(content.get("text", "")))
            elif content.get("type") == "resource":
                parts.append(_contents_text([content.get("resource") or {}]))
        return "\n\n".join(p for p in parts if p)

    async def run(self, args: str, ctx: CommandCaller) -> None:
        await ctx.session.send_user_message(await self.render(args))


def prompt_commands(manager: McpManager) -> dict[str, PromptCommand]:
    out: dict[str, PromptCommand] = {}
    for server in manager.servers.values():
        offer = server.offered()  # a server still connecting has its cached prompts; running one waits
        for prompt in offer.prompts if offer is not None else []:
            command = PromptCommand(manager, server.name, prompt)
            out[command.name] = command
    return out
