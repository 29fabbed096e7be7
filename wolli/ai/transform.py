"""Preparing a conversation for the model about to receive it (cross-provider hand-off).

Every provider calls :func:`transform_messages` before serialising. It makes a history
produced by any provider acceptable to the target:

- thinking from another model becomes plain text (signatures only mean something to the
  model that made them); redacted thinking from another model is dropped;
- Gemini thought signatures on tool calls are dropped for other models;
- tool-call ids are rewritten by the target's ``normalize_id`` and the matching tool results
  follow, so ``call_abc|fc_123`` from OpenAI Responses becomes a valid Anthropic id;
- an assistant tool call without a result gets an error result, so the target does not
  reject the history;
- assistant messages that ended in ``error``/``aborted`` are skipped: they may hold
  half-streamed tool calls that no provider accepts;
- a tool result that answers no tool call of the assistant message before it (its call was
  skipped, or it repeats an answer) is dropped, since every provider rejects it.
"""

from __future__ import annotations

from collections.abc import Callable

from .types import (
    AssistantMessage,
    Message,
    Model,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

IdNormalizer = Callable[[str, Model, AssistantMessage], str]


def is_same_model(message: AssistantMessage, model: Model) -> bool:
    return message.provider == model.provider and message.api == model.api and message.model == model.id


def transform_messages(
    messages: list[Message], model: Model, normalize_id: IdNormalizer | None = None
) -> list[Message]:
    id_map: dict[str, str] = {}
    result: list[Message] = []
    pending: list[ToolCall] = []  # tool calls of the last assistant message still without result
    answered: set[str] = set()

    def flush_missing() -> None:
        for call in pending:
            if call.id not in answered:
                result.append(
                    ToolResultMessage(
                        tool_call_id=call.id,
                        tool_name=call.name,
                        content=[TextContent(text="No result provided")],
                        is_error=True,
                    )
                )
        pending.clear()
        answered.clear()

    for message in messages:
        if isinstance(message, AssistantMessage):
            flush_missing()
            if message.stop_reason in ("error", "aborted"):
                continue
            same = is_same_model(message, model)
            blocks: list[TextContent | ThinkingContent | ToolCall] = []
            for block in message.content:
                if isinstance(block, ThinkingContent):
                    if same:
                        blocks.append(block)
                    elif not block.redacted and block.thinking.strip():
                        blocks.append(TextContent(text=block.thinking))
                elif isinstance(block, ToolCall):
                    new_id = normalize_id(block.id, model, message) if normalize_id and not same else block.id
                    if new_id != block.id:
                        id_map[block.id] = new_id
                    if new_id != block.id or (not same and block.thought_signature):
                        block = block.model_copy(
                            update={"id": new_id, "thought_signature": block.thought_signature if same else None}
                        )
                    blocks.append(block)
                    pending.append(block)
                elif isinstance(block, TextContent):
                    if same or block.text_signature is None:
                        blocks.append(block)
                    else:
                        blocks.append(TextContent(text=block.text))
            if blocks != message.content:
                message = message.model_copy(update={"content": blocks})
            result.append(message)
        elif isinstance(message, ToolResultMessage):
            new_id = id_map.get(message.tool_call_id, message.tool_call_id)
            if new_id in answered or all(call.id != new_id for call in pending):
                continue  # orphaned or duplicate result
            if new_id != message.tool_call_id:
                message = message.model_copy(update={"tool_call_id": new_id})
            answered.add(new_id)
            result.append(message)
        else:
            assert isinstance(message, UserMessage)
            flush_missing()
            result.append(message)
    flush_missing()
    return result
