"""Token counts of agent messages, for the footer's context % and the compaction trigger.

Exact counts need each provider's tokenizer, which Wolli does not ship. The best number we
have is the provider's own ``usage`` on the latest assistant message (it counted the whole
prompt it was sent plus its answer); only the messages appended after it are estimated with
the chars/4 heuristic (images ~1200 tokens). The heuristic errs on the large side for code,
which is the safe direction for a "compact before it overflows" decision.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..base.records import record

if TYPE_CHECKING:
    from ..agent.messages import AgentMessage

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1200


@record(frozen=True)
class ContextTokens:
    """How full the context is: ``tokens`` = ``usage_tokens`` + ``trailing_tokens``.

    ``last_usage_index`` is the index of the assistant message whose reported usage was
    used, or ``None`` when every message was estimated.
    """

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None


def _text_tokens(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _content_chars(content: Any) -> tuple[int, int]:
    """(characters, images) of a string or a list of content blocks."""
    if isinstance(content, str):
        return len(content), 0
    chars = images = 0
    for block in content or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            chars += len(block.text)
        elif kind == "thinking":
            chars += len(block.thinking)
        elif kind == "toolCall":
            chars += len(block.name) + len(json.dumps(block.arguments, ensure_ascii=False))
        elif kind == "image":
            images += 1
    return chars, images


def estimate_message_tokens(message: Any) -> int:
    """Heuristic token count of one agent message (what it costs in a prompt)."""
    role = getattr(message, "role", None)
    if role in ("user", "assistant", "toolResult", "custom"):
        chars, images = _content_chars(message.content)
        if role == "toolResult":
            chars += len(message.tool_name)
        return _text_tokens(chars) + images * IMAGE_TOKENS
    if role == "bashExecution":
        if message.exclude_from_context:
            return 0
        return _text_tokens(len(message.command) + len(message.output))
    if role in ("branchSummary", "compactionSummary"):
        return _text_tokens(len(message.summary))
    return 0


def usage_tokens(message: AgentMessage) -> int:
    """Prompt + answer tokens an assistant message's provider reported (0 when unknown)."""
    usage = getattr(message, "usage", None)
    if usage is None:
        return 0
    counted = usage.input + usage.output + usage.cache_read + usage.cache_write
    return max(counted, usage.total_tokens)


def _last_usage_index(messages: list[Any]) -> int | None:
    """The latest assistant message whose usage describes the current context.

    Failed and aborted answers carry partial or no usage. Answers older than a compaction
    summary in the list counted the history before it was compacted, so they would report a
    context far larger than the one we now send.
    """
    summary_time: int | None = None
    for message in messages:
        if getattr(message, "role", None) == "compactionSummary":
            summary_time = message.timestamp if summary_time is None else max(summary_time, message.timestamp)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if getattr(message, "role", None) != "assistant":
            continue
        if message.stop_reason in ("error", "aborted") or usage_tokens(message) <= 0:
            continue
        if summary_time is not None and message.timestamp <= summary_time:
            return None
        return index
    return None


def estimate_context_tokens(messages: list[Any]) -> ContextTokens:
    """Tokens the next request would carry: last real usage plus estimates after it."""
    index = _last_usage_index(messages)
    if index is None:
        trailing = sum(estimate_message_tokens(m) for m in messages)
        return ContextTokens(tokens=trailing, usage_tokens=0, trailing_tokens=trailing, last_usage_index=None)
    used = usage_tokens(messages[index])
    trailing = sum(estimate_message_tokens(m) for m in messages[index + 1 :])
    return ContextTokens(tokens=used + trailing, usage_tokens=used, trailing_tokens=trailing, last_usage_index=index)


def context_tokens(messages: list[Any]) -> int:
    """Shorthand for ``estimate_context_tokens(messages).tokens``."""
    return estimate_context_tokens(messages).tokens


__all__ = [
    "IMAGE_TOKENS",
    "ContextTokens",
    "context_tokens",
    "estimate_context_tokens",
    "estimate_message_tokens",
    "usage_tokens",
]
