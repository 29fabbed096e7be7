"""The event grammar every provider stream must follow, checked the same way for all of them."""

from __future__ import annotations

import json
from typing import Any

from wolli.ai.types import AssistantMessage, TextContent, ThinkingContent, ToolCall


def check_event_grammar(
    events: list[Any], message: AssistantMessage | None = None, *, deltas_add_up: bool = True
) -> AssistantMessage:
    """``start`` first, exactly one terminal event last, every block opened and closed once in
    index order, and the deltas of each block adding up to its final content. Returns the
    final message (``message`` too, if given, must be it). ``deltas_add_up=False`` is for
    damaged streams: a delta lost in transit is made good by the provider's closing event,
    which carries the whole block."""
    assert events, "no events"
    assert events[0].type == "start"
    terminals = [e for e in events if e.type in ("done", "error")]
    assert len(terminals) == 1 and events[-1] is terminals[0], "exactly one terminal event, last"
    final = terminals[0].message if terminals[0].type == "done" else terminals[0].error
    if message is not None:
        assert message.model_dump() == final.model_dump()
    open_blocks: dict[int, str] = {}
    streamed: dict[int, str] = {}
    ended: set[int] = set()
    for event in events[1:-1]:
        kind, _, phase = event.type.rpartition("_")
        assert kind in ("text", "thinking", "toolcall"), event.type
        index = event.content_index
        if phase == "start":
            assert index not in open_blocks and index not in ended, "a content index started twice"
            open_blocks[index] = kind
            streamed[index] = ""
        elif phase == "delta":
            assert open_blocks.get(index) == kind, f"{event.type} outside its block"
            streamed[index] += event.delta
        else:
            assert open_blocks.pop(index, None) == kind, f"{event.type} without its start"
            ended.add(index)
            block = final.content[index]
            if kind == "toolcall":
                assert event.tool_call.arguments == block.arguments
            else:
                assert event.content == (block.text if kind == "text" else block.thinking)
    assert not open_blocks, f"blocks never closed: {open_blocks}"
    assert ended == set(range(len(final.content)))
    for index, text in streamed.items() if deltas_add_up else ():
        block = final.content[index]
        if isinstance(block, TextContent):
            assert text == block.text
        elif isinstance(block, ThinkingContent):
            assert text == block.thinking
        else:
            assert isinstance(block, ToolCall)
            try:  # a stream cut by the output limit leaves JSON that only parses partially
                parsed = json.loads(text) if text.strip() else {}
            except ValueError:
                continue
            assert parsed == block.arguments
    return final
