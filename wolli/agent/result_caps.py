"""Caps on what one tool result may carry into the session, the events and the next request.

The built-in tools cut their own output (2,000 lines / 50 KB, see ``tools/truncate.py``);
a tool from an extension (or an MCP server behind one) may return anything. Every result
and every partial update passes through :func:`cap_tool_result` before it is emitted,
stored or sent, so one tool returning 50 MB cannot fill the session file, the json/RPC
stream and the model's context. Each cut is said in the result itself, where the model
and the person both read it. The limits are documented in docs/tools.md.
"""

from __future__ import annotations

import dataclasses
import json

from ..ai.types import ImageContent, TextContent
from .tool import ToolResult

# Characters of text in one result (about 32k tokens: under three built-in tool pages).
TEXT_LIMIT = 128 * 1024
# Base64 characters of images in one result (the read tool's images stay far below).
IMAGE_LIMIT = 16 * 1024 * 1024
# Characters of ``details`` as JSON (what renderers and extensions read; not sent to the model).
DETAILS_LIMIT = 1024 * 1024


def _size(count: int) -> str:
    return f"{count / 1024 / 1024:.1f} MB" if count >= 1024 * 1024 else f"{count // 1024} KB"


def _details_size(details: object) -> int:
    try:
        return len(json.dumps(details, ensure_ascii=False, default=str))
    except (TypeError, ValueError, RecursionError):
        return DETAILS_LIMIT + 1  # cannot be stored as JSON anyway


def cap_tool_result(result: ToolResult) -> ToolResult:
    """``result`` itself when it is within the limits, else a copy cut to them."""
    texts = [block for block in result.content if isinstance(block, TextContent)]
    images = [block for block in result.content if isinstance(block, ImageContent)]
    text_size = sum(len(block.text) for block in texts)
    image_size = sum(len(block.data) for block in images)
    details_size = _details_size(result.details) if result.details is not None else 0
    if text_size <= TEXT_LIMIT and image_size <= IMAGE_LIMIT and details_size <= DETAILS_LIMIT:
        return result
    content: list[TextContent | ImageContent] = []
    notes: list[str] = []
    room, image_room, dropped = TEXT_LIMIT, IMAGE_LIMIT, 0
    for block in result.content:
        if isinstance(block, TextContent):
            if room <= 0:
                continue
            kept = block.text[:room]
            room -= len(kept)
            content.append(block if len(kept) == len(block.text) else TextContent(text=kept))
        elif len(block.data) <= image_room:
            image_room -= len(block.data)
            content.append(block)
        else:
            dropped += 1
    if text_size > TEXT_LIMIT:
        notes.append(f"[tool output cut at {_size(TEXT_LIMIT)} of {_size(text_size)}: the tool returned more "
                     "than a result may hold; ask for less, or a part at a time]")
    if dropped:
        notes.append(f"[{dropped} image(s) left out: over {_size(IMAGE_LIMIT)} of images in one result]")
    details = result.details
    if details_size > DETAILS_LIMIT:
        details = {"truncated": f"details of {_size(details_size)} were not kept (limit {_size(DETAILS_LIMIT)})"}
    if notes:
        content.append(TextContent(text="\n".join(notes)))
    return dataclasses.replace(result, content=content, details=details)
