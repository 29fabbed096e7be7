"""Tool search: when server tools would fill too much of the context, load them on demand.

If the schemas of the MCP tools would take more than a share of the model's context window
(settings ``mcp.toolSearch``: ``"auto"`` (default), ``"on"``, ``"off"``;
``mcp.toolSearchThreshold``: the share, default 0.10), they leave the request. The model
gets one ``tool_search`` tool whose description lists every deferred tool by name with a
one-line description; calling it returns the full definitions of the tools it asks for (by
name or by keywords), and from then on those tools are offered as ordinary tools.

Prompt caches hold a request's prefix. Everything already sent stays byte for byte the
same: the full definitions arrive *appended* to the conversation (the tool result), and a
loaded tool is added *after* every tool already offered, never before, and never removed
again, so each request extends the previous one.

What a session has loaded is that session's own (:class:`SearchState`): two sessions of one
Wolli never share it, and a resumed session gets back what it had loaded from its own
history (each ``tool_search`` result records the names it loaded), so its requests start
with the same tools, in the same order, as before and the provider's cache still holds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..agent.tool import OnUpdate, ToolDefinition, ToolResult
from ..ai.abort import AbortSignal
from ..ai.types import TextContent, ToolResultMessage

NAME = "tool_search"
DEFAULT_THRESHOLD = 0.10
MAX_RESULTS = 8


@dataclass
class SearchState:
    """One session's tool search: the deferred tools it loaded, in load order, and whether
    search applied to its last tool set."""

    loaded: list[str] = field(default_factory=list)
    active: bool = False

    def load(self, names: Iterable[str]) -> bool:
        """Add ``names`` after those loaded before; returns whether anything was new."""
        added = [n for n in names if n not in self.loaded]
        self.loaded.extend(added)
        return bool(added)

    @classmethod
    def from_history(cls, messages: Iterable[object]) -> SearchState:
        """What a session had loaded, read back from its ``tool_search`` results in order."""
        state = cls()
        for message in messages:
            if isinstance(message, ToolResultMessage) and message.tool_name == NAME and not message.is_error \
                    and isinstance(message.details, dict):
                names = message.details.get("loaded")
                if isinstance(names, list):
                    state.load(n for n in names if isinstance(n, str))
        return state


def estimate_tokens(tools: list[ToolDefinition]) -> int:
    """About four characters a token, over the JSON a provider receives for these tools."""
    return sum(len(json.dumps({"name": t.name, "description": t.description, "input_schema": t.json_schema()},
                              ensure_ascii=False)) for t in tools) // 4


def should_defer(tools: list[ToolDefinition], mode: object, threshold: object, context_window: int | None) -> bool:
    if not tools or mode == "off" or mode is False:
        return False
    if mode == "on" or mode is True:
        return True
    share = threshold if isinstance(threshold, int | float) and 0 < threshold <= 1 else DEFAULT_THRESHOLD
    window = context_window or 128_000
    return estimate_tokens(tools) > share * window


def search(tools: list[ToolDefinition], query: str, names: list[str] | None = None) -> list[ToolDefinition]:
    """Exact names first (``select:a,b`` or ``names``), else the best keyword matches."""
    by_name = {t.name: t for t in tools}
    wanted = list(names or [])
    if query.startswith("select:"):
        wanted += [n.strip() for n in query[7:].split(",") if n.strip()]
    if wanted:
        return [by_name[n] for n in dict.fromkeys(wanted) if n in by_name]
    words = [w for w in re.split(r"[^a-z0-9]+", query.lower()) if w]
    if not words:
        return []
    scored = []
    for tool in tools:
        name = tool.name.lower()
        text = tool.description.lower()
        score = sum(3 * (w in name) + (w in text) for w in words)
        if score:
            scored.append((score, tool.name, tool))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [tool for _, _, tool in scored[:MAX_RESULTS]]


def make_search_tool(candidates: Callable[[], list[ToolDefinition]], listing: str,
                     load: Callable[[list[str]], None]) -> ToolDefinition:
    description = (
        "Load the full definitions of tools from MCP servers, then call them by name. Ask with keywords "
        "(e.g. 'git log') or exactly with 'select:<name>,<name>'. Tools you can load:\n"
        + listing
    )

    async def execute(tool_call_id: str, params: dict[str, Any], signal: AbortSignal | None,
                      on_update: OnUpdate | None, ctx: object) -> ToolResult:
        query = str(params.get("query") or "")
        found = search(candidates(), query, params.get("names"))
        if not found:
            return ToolResult(content=[TextContent(text=f"No tool matches {query!r}. The tools you can load "
                                                        "are listed in this tool's description.")])
        load([t.name for t in found])
        definitions = [{"name": t.name, "description": t.description, "input_schema": t.json_schema()}
                       for t in found]
        text = ("Loaded; call them by name from now on:\n"
                + json.dumps(definitions, ensure_ascii=False, indent=1))
        return ToolResult(content=[TextContent(text=text)], details={"loaded": [t.name for t in found]})

    return ToolDefinition(
        name=NAME, description=description, execute=execute, label="tool search", source="mcp",
        parameters={"type": "object", "properties": {
            "query": {"type": "string", "description": "keywords, or select:<name>,<name> for exact names"},
            "names": {"type": "array", "items": {"type": "string"}, "description": "exact tool names to load"},
        }, "required": ["query"]},
    )
