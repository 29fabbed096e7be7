"""Scripted answers in the real wire format of every provider API, for CLI end-to-end tests.

One answer (optional thinking, optional text, zero or more tool calls) is framed the way
the live API frames it, as shown by the recordings in ``fixtures/wire``:

- ``anthropic-messages``: ``event:`` + ``data:`` pairs, ``message_start`` ... ``message_stop``,
  pings between blocks, tool input as ``input_json_delta`` pieces (first one ``""``),
  thinking closed by one ``signature_delta``; JSON padded with trailing spaces (a05).
- ``openai-responses``: ``response.created`` / ``in_progress``, one output item per block
  (reasoning with ``encrypted_content`` and a summary, message, function_call with both
  ``call_id`` and ``fc_`` item id), ``sequence_number`` on every event, ``response.completed``
  carrying the usage (r02, r04).
- ``google-generative-ai``: ``data:`` lines separated by ``\\r\\n\\r\\n``, Python-style JSON
  spacing, whole ``functionCall`` parts (no server ids) with ``thoughtSignature``, cumulative
  ``usageMetadata``, ``finishReason`` on the last chunk (g03, g06).
- ``openai-completions``: Chat Completions chunks, ``reasoning_content`` deltas for
  thinking, tool calls keyed by index, a usage chunk, ``data: [DONE]`` (c01, c05, c07).

Errors: :func:`overflow_error` serves each provider's recorded context-overflow body, and
``cut(reply, n)`` drops the connection mid-body.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from tests.support.loopback import Reply, json_reply, sse_reply
from tests.support.wire import load_error

ANTHROPIC = "anthropic-messages"
RESPONSES = "openai-responses"
GOOGLE = "google-generative-ai"
CHAT = "openai-completions"
APIS = (ANTHROPIC, RESPONSES, GOOGLE, CHAT)


@dataclass
class Call:
    """A scripted tool call. ``id`` None: the API's own style (Gemini sends none)."""

    name: str
    arguments: dict[str, Any]
    id: str | None = None


@dataclass
class Answer:
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    thinking: str | None = None
    # Output limit reached this many characters into the last call's arguments JSON: the
    # call is never closed and the answer stops with the API's max-tokens reason.
    cut_arguments: int | None = None
    input_tokens: int = 120
    output_tokens: int = 30


def signature_for(text: str) -> str:
    """A deterministic opaque signature (base64 with ``+/=``, like the real ones)."""
    return base64.b64encode(hashlib.sha256(text.encode()).digest() * 3 + b"\xfb\xff").decode()


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _stop_reason(answer: Answer) -> str:
    return "tool_use" if answer.calls else "end_turn"


def _is_cut(answer: Answer, n: int) -> bool:
    return answer.cut_arguments is not None and n == len(answer.calls) - 1


# ============================================================================ Anthropic


def _anthropic_event(payload: dict[str, Any], pad: int = 0) -> str:
    return f"event: {payload['type']}\ndata: {json.dumps(payload, separators=(',', ':'))}{' ' * pad}\n\n"


def anthropic(answer: Answer, *, model: str = "claude-test", message_id: str = "msg_01TestAnswer") -> bytes:
    out = [
        _anthropic_event(
            {
                "type": "message_start",
                "message": {
                    "model": model, "id": message_id, "type": "message", "role": "assistant", "content": [],
                    "stop_reason": None, "stop_sequence": None,
                    "usage": {"input_tokens": answer.input_tokens, "cache_creation_input_tokens": 0,
                              "cache_read_input_tokens": 0, "output_tokens": 1},
                },
            },
            pad=13,
        )
    ]
    index = 0
    if answer.thinking is not None:
        out.append(_anthropic_event({"type": "content_block_start", "index": index,
                                     "content_block": {"type": "thinking", "thinking": "", "signature": ""}}, 2))
        out.append('event: ping\ndata: {"type": "ping"}\n\n')
        for piece in _pieces(answer.thinking, 11):
            out.append(_anthropic_event({"type": "content_block_delta", "index": index,
                                         "delta": {"type": "thinking_delta", "thinking": piece}}, 9))
        out.append(_anthropic_event({"type": "content_block_delta", "index": index,
                                     "delta": {"type": "signature_delta",
                                               "signature": signature_for(answer.thinking)}}, 15))
        out.append(_anthropic_event({"type": "content_block_stop", "index": index}, 11))
        index += 1
    if answer.text:
        out.append(_anthropic_event({"type": "content_block_start", "index": index,
                                     "content_block": {"type": "text", "text": ""}}))
        for piece in _pieces(answer.text, 7):
            out.append(_anthropic_event({"type": "content_block_delta", "index": index,
                                         "delta": {"type": "text_delta", "text": piece}}))
        out.append(_anthropic_event({"type": "content_block_stop", "index": index}))
        index += 1
    for n, call in enumerate(answer.calls):
        call_id = call.id or f"toolu_01Test{n}{hashlib.sha1(call.name.encode()).hexdigest()[:14]}"
        out.append(_anthropic_event({"type": "content_block_start", "index": index,
                                     "content_block": {"type": "tool_use", "id": call_id, "name": call.name,
                                                       "input": {}, "caller": {"type": "direct"}}}, 13))
        arguments = json.dumps(call.arguments)
        cut = _is_cut(answer, n)
        if cut:
            arguments = arguments[: answer.cut_arguments]
        for piece in ["", *_pieces(arguments, 9)]:
            out.append(_anthropic_event({"type": "content_block_delta", "index": index,
                                         "delta": {"type": "input_json_delta", "partial_json": piece}}, 13))
        if not cut:  # a03: the block cut by max_tokens is never stopped
            out.append(_anthropic_event({"type": "content_block_stop", "index": index}, 7))
        index += 1
    stop = "max_tokens" if answer.cut_arguments is not None else _stop_reason(answer)
    out.append(_anthropic_event({"type": "message_delta",
                                 "delta": {"stop_reason": stop, "stop_sequence": None},
                                 "usage": {"input_tokens": answer.input_tokens, "cache_creation_input_tokens": 0,
                                           "cache_read_input_tokens": 0, "output_tokens": answer.output_tokens}}))
    out.append(_anthropic_event({"type": "message_stop"}, 4))
    return "".join(out).encode()


# ============================================================================ OpenAI Responses


class _Sequenced:
    def __init__(self) -> None:
        self.n = 0
        self.out: list[str] = []

    def add(self, payload: dict[str, Any]) -> None:
        payload = {**payload, "sequence_number": self.n}
        self.n += 1
        self.out.append(f"event: {payload['type']}\ndata: {json.dumps(payload, separators=(',', ':'))}\n\n")


def _item_id(prefix: str, response_id: str, index: int) -> str:
    """Real item ids are ~50 characters (r02: ``fc_00d64fa806f3...``), so ``call|item`` > 64."""
    return prefix + hashlib.sha1(f"{response_id}/{index}".encode()).hexdigest() + f"{index:010d}"


def responses(answer: Answer, *, model: str = "gpt-test",
              response_id: str = "resp_00d64fa806f333310169fab1be69d081a08f8285661855594c") -> bytes:
    seq = _Sequenced()
    base = {"id": response_id, "object": "response", "created_at": 1778037182, "model": model,
            "status": "in_progress", "output": [], "usage": None, "store": False, "error": None,
            "incomplete_details": None}
    seq.add({"type": "response.created", "response": base})
    seq.add({"type": "response.in_progress", "response": base})
    output: list[dict[str, Any]] = []
    index = 0
    if answer.thinking is not None:
        item_id = _item_id("rs_", response_id, index)
        item = {"id": item_id, "type": "reasoning", "encrypted_content": "gAAAA" + signature_for(answer.thinking),
                "summary": []}
        seq.add({"type": "response.output_item.added", "output_index": index, "item": item})
        seq.add({"type": "response.reasoning_summary_part.added", "item_id": item_id, "output_index": index,
                 "summary_index": 0, "part": {"type": "summary_text", "text": ""}})
        for piece in _pieces(answer.thinking, 10):
            seq.add({"type": "response.reasoning_summary_text.delta", "item_id": item_id, "output_index": index,
                     "summary_index": 0, "delta": piece, "obfuscation": "xYz"})
        seq.add({"type": "response.reasoning_summary_text.done", "item_id": item_id, "output_index": index,
                 "summary_index": 0, "text": answer.thinking})
        seq.add({"type": "response.reasoning_summary_part.done", "item_id": item_id, "output_index": index,
                 "summary_index": 0, "part": {"type": "summary_text", "text": answer.thinking}})
        done = {**item, "summary": [{"type": "summary_text", "text": answer.thinking}]}
        seq.add({"type": "response.output_item.done", "output_index": index, "item": done})
        output.append(done)
        index += 1
    if answer.text:
        item_id = _item_id("msg_", response_id, index)
        item = {"id": item_id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}
        seq.add({"type": "response.output_item.added", "output_index": index, "item": item})
        part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
        seq.add({"type": "response.content_part.added", "item_id": item_id, "output_index": index,
                 "content_index": 0, "part": part})
        for piece in _pieces(answer.text, 6):
            seq.add({"type": "response.output_text.delta", "item_id": item_id, "output_index": index,
                     "content_index": 0, "delta": piece, "logprobs": [], "obfuscation": "aB"})
        seq.add({"type": "response.output_text.done", "item_id": item_id, "output_index": index,
                 "content_index": 0, "text": answer.text, "logprobs": []})
        final_part = {**part, "text": answer.text}
        seq.add({"type": "response.content_part.done", "item_id": item_id, "output_index": index,
                 "content_index": 0, "part": final_part})
        done = {**item, "status": "completed", "content": [final_part], "phase": "final_answer"}
        seq.add({"type": "response.output_item.done", "output_index": index, "item": done})
        output.append(done)
        index += 1
    for n, call in enumerate(answer.calls):
        call_id = call.id or f"call_Test{n}{hashlib.sha1(call.name.encode()).hexdigest()[:16]}"
        item_id = _item_id("fc_", response_id, index)
        item = {"id": item_id, "type": "function_call", "status": "in_progress", "arguments": "",
                "call_id": call_id, "name": call.name}
        seq.add({"type": "response.output_item.added", "output_index": index, "item": item})
        arguments = json.dumps(call.arguments, separators=(",", ":"))
        cut = _is_cut(answer, n)
        if cut:
            arguments = arguments[: answer.cut_arguments]
        for piece in _pieces(arguments, 5):
            seq.add({"type": "response.function_call_arguments.delta", "delta": piece, "item_id": item_id,
                     "obfuscation": "Qq", "output_index": index})
        if cut:  # the item stays in progress; the response ends incomplete
            output.append({**item, "arguments": arguments})
            break
        seq.add({"type": "response.function_call_arguments.done", "arguments": arguments, "item_id": item_id,
                 "output_index": index})
        done = {**item, "status": "completed", "arguments": arguments}
        seq.add({"type": "response.output_item.done", "output_index": index, "item": done})
        output.append(done)
        index += 1
    usage = {"input_tokens": answer.input_tokens, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": answer.output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": answer.input_tokens + answer.output_tokens}
    if answer.cut_arguments is not None:
        seq.add({"type": "response.incomplete", "response": {
            **base, "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
            "output": output, "usage": usage}})
    else:
        seq.add({"type": "response.completed",
                 "response": {**base, "status": "completed", "output": output, "usage": usage}})
    return "".join(seq.out).encode()


# ============================================================================ Gemini


def _gemini_chunk(parts: list[dict[str, Any]], answer: Answer, output: int, finish: str | None = None) -> str:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if finish:
        candidate["finishReason"] = finish
    candidate["index"] = 0
    prompt = answer.input_tokens
    body = {
        "candidates": [candidate],
        "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": output,
                          "totalTokenCount": prompt + output,
                          "promptTokensDetails": [{"modality": "TEXT", "tokenCount": prompt}]},
        "modelVersion": "gemini-test",
        "responseId": "QUVVadTSNJ6_qtsPvN7J8Q0",
    }
    # Gemini's own spacing: ", " never, ": " always (g01: `"parts": [{"text": "..."}],"role": "model"`).
    return "data: " + json.dumps(body, separators=(",", ": ")) + "\r\n\r\n"


def gemini(answer: Answer) -> bytes:
    out: list[str] = []
    produced = 0
    if answer.thinking is not None:
        for piece in _pieces(answer.thinking, 12):
            produced += 1
            out.append(_gemini_chunk([{"text": piece, "thought": True}], answer, produced))
    for piece in _pieces(answer.text, 8) if answer.text else []:
        produced += 1
        out.append(_gemini_chunk([{"text": piece}], answer, produced))
    calls = []
    for n, call in enumerate(answer.calls):
        function: dict[str, Any] = {"name": call.name, "args": call.arguments}
        if call.id:
            function["id"] = call.id
        part: dict[str, Any] = {"functionCall": function}
        if n == 0:  # Gemini 3 signs the first call of a step
            part["thoughtSignature"] = signature_for(f"{answer.thinking}{call.name}")
        calls.append(part)
    if calls:
        produced += 1
        out.append(_gemini_chunk(calls, answer, produced))
    # The last chunk: an empty text part (with a signature after thinking, as Gemini 3 does).
    last: dict[str, Any] = {"text": ""}
    if answer.thinking is not None and not calls:
        last["thoughtSignature"] = signature_for(answer.thinking)
    finish = "MAX_TOKENS" if answer.cut_arguments is not None else "STOP"  # calls arrive whole
    out.append(_gemini_chunk([last], answer, answer.output_tokens, finish=finish))
    return "".join(out).encode()


# ============================================================================ Chat Completions


def _chat_chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: dict[str, int] | None = None) -> str:
    body: dict[str, Any] = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1,
                            "model": "chat-test", "choices": []}
    if delta is not None:
        body["choices"] = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
    if usage is not None:
        body["usage"] = usage
    return f"data: {json.dumps(body, separators=(',', ':'))}\n\n"


def chat(answer: Answer) -> bytes:
    out = [_chat_chunk({"role": "assistant", "content": "", "refusal": None})]
    if answer.thinking is not None:
        for piece in _pieces(answer.thinking, 9):
            out.append(_chat_chunk({"content": None, "reasoning_content": piece}))
    for piece in _pieces(answer.text, 7) if answer.text else []:
        out.append(_chat_chunk({"content": piece}))
    for n, call in enumerate(answer.calls):
        call_id = call.id or f"call_{n}{hashlib.sha1(call.name.encode()).hexdigest()[:20]}"
        out.append(_chat_chunk({"tool_calls": [{"index": n, "id": call_id, "type": "function",
                                                "function": {"name": call.name, "arguments": ""}}]}))
        arguments = json.dumps(call.arguments)
        if _is_cut(answer, n):
            arguments = arguments[: answer.cut_arguments]
        for piece in _pieces(arguments, 9):
            out.append(_chat_chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]}))
    finish = "length" if answer.cut_arguments is not None else "tool_calls" if answer.calls else "stop"
    out.append(_chat_chunk({}, finish))
    out.append(_chat_chunk(None, usage={"prompt_tokens": answer.input_tokens, "completion_tokens": answer.output_tokens,
                                        "total_tokens": answer.input_tokens + answer.output_tokens}))
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


# ============================================================================ entry points

_FRAMERS = {ANTHROPIC: anthropic, RESPONSES: responses, GOOGLE: gemini, CHAT: chat}
_CONTENT_TYPES = {GOOGLE: "text/event-stream"}


def answer_body(api: str, answer: Answer) -> bytes:
    return _FRAMERS[api](answer)


def answer(api: str, text: str = "", calls: list[Call] | None = None, thinking: str | None = None,
           cut_arguments: int | None = None, **reply: Any) -> Reply:
    """The loopback reply for one scripted answer of ``api``."""
    body = answer_body(api, Answer(text=text, calls=list(calls or []), thinking=thinking,
                                   cut_arguments=cut_arguments))
    headers = {"content-disposition": "attachment"} if api == GOOGLE else {}
    reply.setdefault("content_type", _CONTENT_TYPES.get(api, "text/event-stream; charset=utf-8"))
    return sse_reply(body, headers=headers, **reply)


def text_answer(api: str, text: str, **kw: Any) -> Reply:
    return answer(api, text, **kw)


def tool_call_answer(api: str, name: str, arguments: dict[str, Any], call_id: str | None = None,
                     **kw: Any) -> Reply:
    return answer(api, calls=[Call(name, arguments, call_id)], **kw)


def cut(reply: Reply, fraction: float = 0.5) -> Reply:
    """The same reply with the connection dropped part-way through the body."""
    return dataclasses.replace(reply, cut_after=max(1, int(len(reply.body) * fraction)))


def overflow_error(api: str) -> Reply:
    """Each provider's recorded context-overflow answer (HTTP 400, or in-stream for Responses)."""
    if api == ANTHROPIC:
        return json_reply(400, load_error("anthropic_400_prompt_too_long.json"))
    if api == GOOGLE:
        return json_reply(400, load_error("gemini_400_input_token_count.json"))
    if api == CHAT:
        return json_reply(400, load_error("openai_400_context_length_exceeded.json"))
    # Responses reports overflow inside a 200 stream: an error event, then response.failed.
    error = json.loads(load_error("openai_responses_stream_error_context_length_exceeded.json"))
    seq = _Sequenced()
    base = {"id": "resp_overflow", "object": "response", "status": "in_progress", "output": [], "usage": None}
    seq.add({"type": "response.created", "response": base})
    seq.add({"type": "response.in_progress", "response": base})
    seq.out.append(f"event: error\ndata: {json.dumps(error, separators=(',', ':'))}\n\n")
    seq.n += 1
    seq.add({"type": "response.failed", "response": {**base, "status": "failed", "error": {
        "code": error["error"]["code"], "message": error["error"]["message"]}}})
    return sse_reply("".join(seq.out))


# ============================================================================ models.json

# Provider names used by the CLI tests, one per API, all served by the same loopback server.
PROVIDERS = {ANTHROPIC: "anth", RESPONSES: "resp", GOOGLE: "gem", CHAT: "chat"}
MODEL_IDS = {ANTHROPIC: "claude-sonnet-4-5", RESPONSES: "gpt-5-test", GOOGLE: "gemini-2.5-pro", CHAT: "chat-test"}


def model_ref(api: str) -> str:
    return f"{PROVIDERS[api]}/{MODEL_IDS[api]}"


def provider_entries(url: str, **model: Any) -> dict[str, Any]:
    """One models.json provider per API pointing at ``url`` (the loopback server)."""
    base_urls = {ANTHROPIC: url, RESPONSES: url + "/v1", GOOGLE: url + "/v1beta", CHAT: url + "/v1"}
    entries: dict[str, Any] = {}
    for api, name in PROVIDERS.items():
        entries[name] = {
            "baseUrl": base_urls[api],
            "api": api,
            "apiKey": f"sk-test-{name}",
            "models": [{"id": MODEL_IDS[api], "reasoning": True, "input": ["text", "image"],
                        "contextWindow": 200000, "maxTokens": 32000, **model}],
        }
    return entries


def write_models_json(home: Any, url: str, **model: Any) -> None:
    (home / "models.json").write_text(json.dumps({"providers": provider_entries(url, **model)}, indent=2))


def api_of_path(path: str) -> str:
    """Which API a recorded request path belongs to."""
    if path.endswith("/v1/messages"):
        return ANTHROPIC
    if path.endswith("/v1/responses"):
        return RESPONSES
    if ":streamGenerateContent" in path:
        return GOOGLE
    if path.endswith("/chat/completions"):
        return CHAT
    raise ValueError(f"unknown API path {path}")


# ============================================================================ reading requests


@dataclass
class Turn:
    """One item of a request's conversation, in API-neutral terms (for assertions)."""

    kind: str  # user | text | thinking | call | result
    text: str = ""
    id: str | None = None
    name: str | None = None
    arguments: Any = None
    signature: str | None = None
    images: int = 0


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text_of(v) for v in value)
    if isinstance(value, dict):
        for key in ("text", "output", "content", "error"):
            if key in value:
                return _text_of(value[key])
    return ""


def conversation(api: str, body: dict[str, Any]) -> list[Turn]:
    """The conversation a request sends, flattened into :class:`Turn` items."""
    turns: list[Turn] = []
    if api == ANTHROPIC:
        for message in body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else [
                    {"type": "text", "text": message["content"]}]:
                kind = block["type"]
                if kind == "text":
                    turns.append(Turn("user" if message["role"] == "user" else "text", block["text"]))
                elif kind == "image":
                    turns.append(Turn("user", images=1))
                elif kind == "thinking":
                    turns.append(Turn("thinking", block["thinking"], signature=block.get("signature")))
                elif kind == "redacted_thinking":
                    turns.append(Turn("thinking", signature=block["data"]))
                elif kind == "tool_use":
                    turns.append(Turn("call", id=block["id"], name=block["name"], arguments=block["input"]))
                elif kind == "tool_result":
                    turns.append(Turn("result", _text_of(block.get("content", "")), id=block["tool_use_id"]))
    elif api == RESPONSES:
        for item in body["input"]:
            kind = item.get("type")
            if kind == "reasoning":
                turns.append(Turn("thinking", _text_of(item.get("summary")), signature=item.get("encrypted_content")))
            elif kind == "function_call":
                turns.append(Turn("call", id=item["call_id"], name=item["name"],
                                  arguments=json.loads(item["arguments"])))
            elif kind == "function_call_output":
                turns.append(Turn("result", _text_of(item["output"]), id=item["call_id"]))
            elif item.get("role") == "assistant":
                turns.append(Turn("text", _text_of(item["content"])))
            elif item.get("role") == "user":
                content = item["content"]
                images = sum(1 for p in content if isinstance(p, dict) and p.get("type") == "input_image") \
                    if isinstance(content, list) else 0
                turns.append(Turn("user", _text_of(content), images=images))
    elif api == GOOGLE:
        for content in body["contents"]:
            for part in content["parts"]:
                if "functionCall" in part:
                    call = part["functionCall"]
                    turns.append(Turn("call", id=call.get("id"), name=call["name"], arguments=call.get("args"),
                                      signature=part.get("thoughtSignature")))
                elif "functionResponse" in part:
                    response = part["functionResponse"]
                    turns.append(Turn("result", _text_of(response["response"]), id=response.get("id"),
                                      name=response["name"]))
                elif "inlineData" in part:
                    turns.append(Turn("user", images=1))
                elif part.get("thought"):
                    turns.append(Turn("thinking", part.get("text", ""), signature=part.get("thoughtSignature")))
                elif content["role"] == "user":
                    turns.append(Turn("user", part.get("text", "")))
                else:
                    turns.append(Turn("text", part.get("text", ""), signature=part.get("thoughtSignature")))
    else:
        for message in body["messages"]:
            role = message["role"]
            if role in ("system", "developer"):
                continue
            if role == "tool":
                turns.append(Turn("result", _text_of(message["content"]), id=message["tool_call_id"]))
            elif role == "user":
                content = message["content"]
                images = sum(1 for p in content if isinstance(p, dict) and p.get("type") == "image_url") \
                    if isinstance(content, list) else 0
                turns.append(Turn("user", _text_of(content), images=images))
            else:
                for field_name in ("reasoning_content", "reasoning", "reasoning_text"):
                    if message.get(field_name):
                        turns.append(Turn("thinking", message[field_name], signature=field_name))
                if message.get("content"):
                    turns.append(Turn("text", _text_of(message["content"])))
                for call in message.get("tool_calls") or []:
                    turns.append(Turn("call", id=call["id"], name=call["function"]["name"],
                                      arguments=json.loads(call["function"]["arguments"])))
    return turns


def system_prompt(api: str, body: dict[str, Any]) -> str:
    if api == ANTHROPIC:
        system = body.get("system") or ""
        return system if isinstance(system, str) else "\n".join(b["text"] for b in system)
    if api == RESPONSES:
        return "\n".join(i["content"] for i in body["input"] if i.get("role") in ("system", "developer"))
    if api == GOOGLE:
        return "\n".join(p["text"] for p in (body.get("systemInstruction") or {}).get("parts", []))
    return "\n".join(_text_of(m["content"]) for m in body["messages"] if m["role"] in ("system", "developer"))


def tool_names(api: str, body: dict[str, Any]) -> list[str]:
    tools = body.get("tools") or []
    if api == ANTHROPIC or api == RESPONSES:
        return [t["name"] for t in tools]
    if api == GOOGLE:
        return [d["name"] for t in tools for d in t.get("functionDeclarations", [])]
    return [t["function"]["name"] for t in tools]
