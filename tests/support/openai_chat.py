"""Scripted OpenAI Chat Completions answers in the real wire format, for CLI end-to-end tests.

The loopback server replays these as ``text/event-stream`` bodies exactly as an
OpenAI-compatible server (llama.cpp, vLLM, Ollama) frames them.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.loopback import Reply, sse_reply


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> str:
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "local-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if delta is not None else [],
    }
    if usage is not None:
        body["usage"] = usage
    return f"data: {json.dumps(body)}\n\n"


def text_answer(text: str, *, prompt_tokens: int = 50, completion_tokens: int = 10) -> Reply:
    pieces = [_chunk({"role": "assistant", "content": ""})]
    for start in range(0, len(text), 7):
        pieces.append(_chunk({"content": text[start : start + 7]}))
    pieces.append(_chunk({}, "stop"))
    pieces.append(
        _chunk(None, usage={"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                            "total_tokens": prompt_tokens + completion_tokens})  # type: ignore[arg-type]
    )
    pieces.append("data: [DONE]\n\n")
    return sse_reply("".join(pieces))


def tool_call_answer(name: str, arguments: dict[str, Any], call_id: str = "call_1", text: str = "") -> Reply:
    args = json.dumps(arguments)
    pieces = [_chunk({"role": "assistant", "content": text or None})]
    pieces.append(
        _chunk({"tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                "function": {"name": name, "arguments": ""}}]})
    )
    for start in range(0, len(args), 9):
        pieces.append(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[start : start + 9]}}]}))
    pieces.append(_chunk({}, "tool_calls"))
    pieces.append(
        _chunk(None, usage={"prompt_tokens": 60, "completion_tokens": 20, "total_tokens": 80})  # type: ignore[arg-type]
    )
    pieces.append("data: [DONE]\n\n")
    return sse_reply("".join(pieces))


def write_models_json(home: Any, base_url: str, model_id: str = "local-model", **model: Any) -> None:
    """Point a temporary WOLLI_HOME at the loopback server as a local provider."""
    (home / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    "local": {
                        "baseUrl": base_url,
                        "api": "openai-completions",
                        "models": [{"id": model_id, "contextWindow": 32000, "maxTokens": 4096, **model}],
                    }
                }
            }
        )
    )


def tool_calls_answer(calls: list[tuple[str, dict[str, Any], str]], text: str = "") -> Reply:
    """One answer calling several tools at once: ``(name, arguments, call_id)`` each."""
    pieces = [_chunk({"role": "assistant", "content": text or None})]
    for index, (name, arguments, call_id) in enumerate(calls):
        pieces.append(_chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                              "function": {"name": name, "arguments": ""}}]}))
        args = json.dumps(arguments)
        for start in range(0, len(args), 9):
            pieces.append(_chunk({"tool_calls": [{"index": index, "function": {"arguments": args[start : start + 9]}}]}))
    pieces.append(_chunk({}, "tool_calls"))
    pieces.append(
        _chunk(None, usage={"prompt_tokens": 60, "completion_tokens": 20, "total_tokens": 80})  # type: ignore[arg-type]
    )
    pieces.append("data: [DONE]\n\n")
    return sse_reply("".join(pieces))


def sent_texts(request: Any, role: str) -> list[str]:
    """The text of each message of ``role`` in a recorded chat-completions request (the wire
    role: ``user``, ``assistant``, ``tool``)."""
    out = []
    for message in request.json["messages"]:
        if message["role"] == role:
            content = message["content"]
            out.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return out
