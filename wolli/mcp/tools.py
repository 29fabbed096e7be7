"""Server tools as ordinary Wolli tools: ``mcp__<server>__<tool>``.

Each MCP tool becomes a :class:`~wolli.agent.tool.ToolDefinition` of the session, so every
``tool_call``/``tool_result`` hook, extension event and permission rule applies to it as to
any built-in tool. The name is Claude Code's spelling, so prompts and hooks written for it
carry over; characters a provider refuses become ``_`` and a name past 64 characters is cut
with a short hash so two tools never share one.

Results: text, image and embedded resources map to Wolli's content blocks; audio, binary
resources and resource links become a line saying what they are; structured content is kept
in ``details`` (and shown as JSON when the server sent nothing else). Long text is cut with
the same limits and notes as the built-in tools, the whole of it saved to a file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import tempfile
from typing import TYPE_CHECKING, Any

from ..agent.tool import OnUpdate, ToolDefinition, ToolResult
from ..ai.abort import AbortSignal
from ..ai.types import ImageContent, TextContent
from ..tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head
from .types import CallOutcome, ServerOffer, ToolInfo

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

    from .server import McpServer

PREFIX = "mcp__"
MAX_NAME = 64
MAX_DESCRIPTION = 2048
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def tool_name(server: str, tool: str) -> str:
    name = f"{PREFIX}{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def prompt_command(server: str, prompt: str) -> str:
    return tool_name(server, prompt)


_OPEN_OBJECT: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": True}
_meta_validator: Draft202012Validator | None = None


def safe_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The server's input schema when it is a valid JSON schema of an object; otherwise an
    open object (the server still validates), so one odd tool cannot break the request."""
    global _meta_validator
    candidate = dict(schema) if isinstance(schema, dict) else {}
    candidate.setdefault("type", "object")
    if candidate.get("type") != "object":
        return {"type": "object", "properties": {}}
    candidate.setdefault("properties", {})
    if _meta_validator is None:  # one validator of the meta-schema, made on first need
        import jsonschema

        _meta_validator = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)
    return candidate if _meta_validator.is_valid(candidate) else dict(_OPEN_OBJECT)


def checked_offer(offer: ServerOffer) -> ServerOffer:
    """``offer`` with every input schema made safe, as the cache keeps it."""
    tools = [dataclasses.replace(info, input_schema=safe_schema(info.input_schema)) for info in offer.tools]
    return dataclasses.replace(offer, tools=tools, schemas_checked=True)


def describe(info: ToolInfo) -> str:
    text = (info.description or info.title or info.name).strip()
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"


def one_line(info: ToolInfo, limit: int = 120) -> str:
    """The first sentence of the description, for tool search's listing."""
    text = " ".join(describe(info).split())
    end = text.find(". ")
    if 0 < end < limit:
        text = text[: end + 1]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def make_tool(server: McpServer, info: ToolInfo, *, checked: bool = False) -> ToolDefinition:
    """The Wolli tool for ``info``; ``checked``: its schema was made safe already (cache)."""
    name = tool_name(server.name, info.name)

    async def execute(tool_call_id: str, params: dict[str, Any] | None, signal: AbortSignal | None,
                      on_update: OnUpdate | None, ctx: object) -> ToolResult:
        def progress(value: float, total: float | None, message: str | None) -> None:
            if on_update is not None:
                on_update(ToolResult(content=[TextContent(text=progress_line(value, total, message))],
                                     details={"progress": value, "total": total}))

        outcome = await server.call_tool(info.name, dict(params or {}), signal, progress)
        result = to_result(outcome, server.name, info)
        if outcome.is_error:
            raise McpToolError(result.text() or "the tool reported an error", result)
        return result

    label = f"{server.name} · {info.title or info.name}"
    parameters = info.input_schema if checked else safe_schema(info.input_schema)
    return ToolDefinition(name=name, description=describe(info), parameters=parameters,
                          execute=execute, label=label, source=f"mcp:{server.name}",
                          execution="parallel" if info.read_only else "sequential",
                          read_only=bool(info.read_only) and not info.destructive)


def progress_line(value: float, total: float | None, message: str | None) -> str:
    """A server's progress notification as the line shown while the call runs."""
    amount = f"{value:g}/{total:g}" if total else f"{value:g}"
    text = " ".join((message or "").split())[:200]
    return f"progress {amount}" + (f": {text}" if text else "")


class McpToolError(Exception):
    """The server answered with ``isError``: the model gets its content as an error result."""

    def __init__(self, message: str, result: ToolResult) -> None:
        super().__init__(message)
        self.result = result
        self.details = result.details  # kept on the error result the loop reports


def to_result(outcome: CallOutcome, server: str, info: ToolInfo) -> ToolResult:
    blocks: list[TextContent | ImageContent] = []
    texts: list[str] = []

    def flush() -> None:
        if texts:
            blocks.append(TextContent(text=_bounded("\n".join(texts))))
            texts.clear()

    for item in outcome.content:
        image = _image(item)
        if image is not None:
            flush()
            blocks.append(image)
        else:
            texts.append(_text_of(item))
    if not outcome.content and outcome.structured is not None:
        texts.append(json.dumps(outcome.structured, ensure_ascii=False, indent=2))
    flush()
    if not blocks:
        blocks.append(TextContent(text="(no output)"))
    details = {"server": server, "tool": info.name, "structuredContent": outcome.structured,
               "annotations": {"readOnly": info.read_only, "destructive": info.destructive}}
    return ToolResult(content=blocks, details=details, is_error=outcome.is_error)


def _image(item: dict[str, Any]) -> ImageContent | None:
    kind = item.get("type")
    if kind == "image" and isinstance(item.get("data"), str):
        return ImageContent(data=item["data"], mime_type=str(item.get("mimeType") or "image/png"))
    if kind == "resource":
        res = item.get("resource") or {}
        if isinstance(res.get("blob"), str) and res.get("mimeType") in _IMAGE_TYPES:
            return ImageContent(data=res["blob"], mime_type=res["mimeType"])
    return None


def _text_of(item: dict[str, Any]) -> str:
    kind = item.get("type")
    if kind == "text":
        return str(item.get("text", ""))
    if kind == "audio":
        return f"[audio: {item.get('mimeType', 'unknown type')}, {_b64_size(item.get('data'))}]"
    if kind == "resource":
        res = item.get("resource") or {}
        uri = res.get("uri", "")
        if isinstance(res.get("text"), str):
            return f"[resource {uri}]\n{res['text']}"
        return f"[binary resource {uri}: {res.get('mimeType', 'unknown type')}, {_b64_size(res.get('blob'))}]"
    if kind == "resource_link":
        what = item.get("name") or item.get("uri")
        extra = f" — {item['description']}" if item.get("description") else ""
        return f"[resource link: {what} <{item.get('uri', '')}>{extra}]"
    return json.dumps(item, ensure_ascii=False)


def _b64_size(data: object) -> str:
    return format_size(len(data) * 3 // 4) if isinstance(data, str) else "no data"


def _bounded(text: str) -> str:
    """The built-in tools' limits (lines or bytes, first hit), the whole text saved aside."""
    cut = truncate_head(text, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)
    if not cut.truncated:
        return text
    try:
        fd, path = tempfile.mkstemp(prefix="wolli-mcp-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        where = f"Full output: {path}"
    except OSError as exc:
        where = f"Full output could not be saved: {exc.strerror or exc}"
    if cut.first_line_exceeds_limit:
        shown = text.encode("utf-8")[:DEFAULT_MAX_BYTES].decode("utf-8", "ignore")
        return f"{shown}\n\n[Showing the first {format_size(DEFAULT_MAX_BYTES)} of line 1. {where}]"
    limit = "" if cut.truncated_by == "lines" else f" ({format_size(DEFAULT_MAX_BYTES)} limit)"
    return f"{cut.content}\n\n[Showing lines 1-{cut.output_lines} of {cut.total_lines}{limit}. {where}]"
