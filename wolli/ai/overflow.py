"""Recognising "the prompt did not fit" errors from every provider.

The session layer compacts and retries once when this predicate says yes. Patterns are the
messages providers actually send (see fixtures/wire/errors and wire.md §5.4).
"""

from __future__ import annotations

import re

from .types import AssistantMessage

_OVERFLOW_PATTERNS = re.compile(
    "|".join(
        [
            r"prompt is too long",  # Anthropic
            r"input length and `?max_tokens`? exceed context limit",  # Anthropic
            r"exceeds? the context window",  # OpenAI (Responses, Chat)
            r"context_length_exceeded",  # OpenAI code
            r"maximum context length is \d+",  # OpenAI / OpenRouter / vLLM
            r"input token count.*exceeds the maximum",  # Gemini
            r"maximum prompt length is \d+",  # xAI
            r"reduce the length of the messages",  # Groq
            r"exceeds the available context size",  # llama.cpp
            r"greater than the context length",  # LM Studio
            r"too large for model with \d+ maximum context length",  # Mistral
            r"context[ _]window[ _]exceeded",  # Anthropic stop reason, misc
            r"model_context_window_exceeded",
            r"request too large",  # generic 413 wording
            r"token limit reached",  # OpenRouter in-chunk error
        ]
    ),
    re.IGNORECASE | re.DOTALL,
)


def is_context_overflow_text(text: str | None) -> bool:
    return bool(text) and bool(_OVERFLOW_PATTERNS.search(text or ""))


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    """True when ``message`` failed (or silently truncated) because the context was full.

    ``context_window`` catches servers that truncate silently (Ollama): a successful
    response whose input already exceeds the window counts as overflow.
    """
    if message.stop_reason == "error" and is_context_overflow_text(message.error_message):
        return True
    if context_window and message.stop_reason != "error":
        used = message.usage.input + message.usage.cache_read + message.usage.cache_write
        if used > context_window:
            return True
    return False
