"""Builds the partial assistant message and emits the matching stream events.

Every provider speaks a different wire format but produces the same event grammar; this
class owns that grammar (block open/close, partial tool-call JSON, terminal events), so a
provider module only maps its wire events onto these calls.
"""

from __future__ import annotations

from typing import Any

from .cost import calculate_cost
from .event_stream import AssistantMessageEventStream
from .failures import classify
from .redact import clean_error
from .types import (
    AssistantMessage,
    DoneEvent,
    ErrorEvent,
    Model,
    StartEvent,
    TextContent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingContent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)

# Re-parse streamed tool arguments only when they grew this much, so a 50 KB argument
# arriving in thousands of deltas is not parsed thousands of times.
_REPARSE_GROWTH = 0.1
_ALWAYS_PARSE_BELOW = 4096


def parse_partial_json(text: str) -> dict[str, Any]:
    """Best-effort parse of an incomplete JSON object; ``{}`` when nothing parses yet.

    Values appear once complete; a string still being streamed is left out until it closes.
    """
    if not text.strip():
        return {}
    from pydantic_core import from_json  # only once a tool call streams (~30 ms to import)

    try:
        value = from_json(text, allow_partial=True)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def parse_tool_arguments(text: str) -> dict[str, Any]:
    """Final parse of tool arguments: strict first, then partial (truncated output).

    Unlike streaming, a cut-off string is left out rather than kept half-written: a tool
    should see "missing argument" instead of acting on a truncated path or file body.
    """
    if not text.strip():
        return {}
    from pydantic_core import from_json

    try:
        value = from_json(text)
    except ValueError:
        try:
            value = from_json(text, allow_partial=True)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def _append(block: TextContent | ThinkingContent, field: str, delta: str) -> None:
    """``block.<field> += delta`` in amortised constant time instead of copying the text.

    ``block.text += delta`` builds a new string on every delta (quadratic: seconds of CPU
    for a 64k-token answer). Taking the string out of the block's slot first leaves it with a
    single reference, so CPython grows it in place; if anything else still holds the old text
    it is copied as before, so a reader never sees a string change.
    """
    text = getattr(block, field)
    delattr(block, field)
    try:
        text += delta
    finally:
        setattr(block, field, text)


class MessageBuilder:
    def __init__(self, model: Model, out: AssistantMessageEventStream) -> None:
        self.model = model
        self.out = out
        self.message = AssistantMessage(api=model.api, provider=model.provider, model=model.id)
        # Streamed tool arguments as pieces plus their length: appending to one growing
        # string copies it on every delta (quadratic: seconds for a 2 MB file write).
        self._tool_json: dict[int, list[str]] = {}
        self._tool_len: dict[int, int] = {}
        self._parsed_len: dict[int, int] = {}
        # Blocks started and not yet ended. Deltas for any other index are dropped: a
        # repeated or late event must not change a block its end event already reported.
        self._open: set[int] = set()
        self.started = False
        # What this request carries that is secret (its key, headers, URL credentials): with
        # every other known secret, redacted from the error message (see .redact).
        self.secrets: list[str] = []

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        if not self.started:
            self.started = True
            self.out.push(StartEvent(partial=self.message))

    @property
    def finished(self) -> bool:
        return self.out.finished

    def _index_ok(self, index: int) -> bool:
        return 0 <= index < len(self.message.content)

    # ------------------------------------------------------------------ text

    def text_start(self, text: str = "", signature: str | None = None) -> int:
        self.start()
        self.message.content.append(TextContent(text="", text_signature=signature))
        index = len(self.message.content) - 1
        self._open.add(index)
        self.out.push(TextStartEvent(content_index=index, partial=self.message))
        if text:
            self.text_delta(index, text)
        return index

    def text_delta(self, index: int, delta: str) -> None:
        if not delta or index not in self._open:
            return
        block = self.message.content[index]
        assert isinstance(block, TextContent)
        _append(block, "text", delta)
        self.out.push(TextDeltaEvent(content_index=index, delta=delta, partial=self.message))

    def text_end(self, index: int, signature: str | None = None) -> None:
        if index not in self._open:
            return
        self._open.discard(index)
        block = self.message.content[index]
        assert isinstance(block, TextContent)
        if signature is not None:
            block.text_signature = signature
        self.out.push(TextEndEvent(content_index=index, content=block.text, partial=self.message))

    # ------------------------------------------------------------------ thinking

    def thinking_start(self, text: str = "", signature: str | None = None, redacted: bool = False) -> int:
        self.start()
        self.message.content.append(
            ThinkingContent(thinking="", thinking_signature=signature, redacted=True if redacted else None)
        )
        index = len(self.message.content) - 1
        self._open.add(index)
        self.out.push(ThinkingStartEvent(content_index=index, partial=self.message))
        if text:
            self.thinking_delta(index, text)
        return index

    def thinking_delta(self, index: int, delta: str) -> None:
        if not delta or index not in self._open:
            return
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        _append(block, "thinking", delta)
        self.out.push(ThinkingDeltaEvent(content_index=index, delta=delta, partial=self.message))

    def thinking_signature(self, index: int, signature: str, append: bool = True) -> None:
        if not self._index_ok(index):
            return
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        block.thinking_signature = (block.thinking_signature or "") + signature if append else signature

    def thinking_end(self, index: int, signature: str | None = None) -> None:
        if index not in self._open:
            return
        self._open.discard(index)
        block = self.message.content[index]
        assert isinstance(block, ThinkingContent)
        if signature is not None:
            block.thinking_signature = signature
        self.out.push(ThinkingEndEvent(content_index=index, content=block.thinking, partial=self.message))

    # ------------------------------------------------------------------ tool calls

    def toolcall_start(
        self, id: str, name: str, arguments_json: str = "", thought_signature: str | None = None
    ) -> int:
        self.start()
        self.message.content.append(ToolCall(id=id, name=name, arguments={}, thought_signature=thought_signature))
        index = len(self.message.content) - 1
        self._open.add(index)
        self._tool_json[index] = []
        self._tool_len[index] = 0
        self._parsed_len[index] = 0
        self.out.push(ToolCallStartEvent(content_index=index, partial=self.message))
        if arguments_json:
            self.toolcall_delta(index, arguments_json)
        return index

    def toolcall_delta(self, index: int, delta: str) -> None:
        if not delta or index not in self._open:
            return
        self._tool_json[index].append(delta)
        length = self._tool_len[index] + len(delta)
        self._tool_len[index] = length
        block = self.message.content[index]
        assert isinstance(block, ToolCall)
        last = self._parsed_len[index]
        if length < _ALWAYS_PARSE_BELOW or length - last > last * _REPARSE_GROWTH:
            block.arguments = parse_partial_json(self.toolcall_json(index))
            self._parsed_len[index] = length
        self.out.push(ToolCallDeltaEvent(content_index=index, delta=delta, partial=self.message))

    def toolcall_json(self, index: int) -> str:
        """The arguments JSON received so far for the tool call at ``index``."""
        pieces = self._tool_json.get(index)
        if not pieces:
            return ""
        if len(pieces) > 1:
            pieces[:] = ["".join(pieces)]  # joined once; later calls only add the new pieces
        return pieces[0]

    def toolcall_end(self, index: int, arguments: dict[str, Any] | None = None) -> None:
        if index not in self._open:
            return
        self._open.discard(index)
        block = self.message.content[index]
        assert isinstance(block, ToolCall)
        if arguments is not None:
            block.arguments = arguments
        else:
            block.arguments = parse_tool_arguments(self.toolcall_json(index))
        self.out.push(ToolCallEndEvent(content_index=index, tool_call=block, partial=self.message))

    def close_open_blocks(self) -> None:
        """End every block still open, in order (a stream may stop without closing them)."""
        for index in sorted(self._open):
            block = self.message.content[index]
            if isinstance(block, TextContent):
                self.text_end(index)
            elif isinstance(block, ThinkingContent):
                self.thinking_end(index)
            else:
                self.toolcall_end(index)

    # ------------------------------------------------------------------ terminal events

    def _finalise_usage(self) -> None:
        usage = self.message.usage
        if not usage.total_tokens:
            usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write
        calculate_cost(self.model, usage)

    def done(self, stop_reason: str | None = None) -> None:
        if self.finished:
            return
        self.start()
        self.close_open_blocks()
        if stop_reason is not None:
            self.message.stop_reason = stop_reason  # type: ignore[assignment]
        if self.message.stop_reason == "stop" and self.message.tool_calls():
            self.message.stop_reason = "toolUse"
        if self.message.stop_reason in ("error", "aborted"):
            self.fail(self.message.error_message or "Provider reported an error", self.message.stop_reason)
            return
        self._finalise_usage()
        self.out.push(DoneEvent(reason=self.message.stop_reason, message=self.message))  # type: ignore[arg-type]

    def fail(
        self, error_message: str, reason: str = "error", *, kind: str | None = None, retry_after_ms: int | None = None
    ) -> None:
        """End with an ``error`` event, keeping whatever content already arrived.

        ``kind`` says why (:mod:`wolli.ai.failures`); without it the text is classified.
        The message is made here for every provider, so this is where secrets are redacted
        and the text becomes one capped line (:func:`.redact.clean_error`).
        """
        if self.finished:
            return
        self.start()
        self.close_open_blocks()
        error_message = clean_error(error_message, self.secrets)
        self.message.stop_reason = "aborted" if reason == "aborted" else "error"
        self.message.error_message = error_message
        found = classify(error_message)  # an overflow is one whatever the code said: compaction fixes it
        self.message.error_kind = "aborted" if reason == "aborted" else found if found == "context_overflow" else kind or found
        self.message.retry_after_ms = retry_after_ms
        self._finalise_usage()
        self.out.push(ErrorEvent(reason=self.message.stop_reason, error=self.message))  # type: ignore[arg-type]

    def fail_from(self, exc: BaseException, error_message: str | None = None) -> None:
        """:meth:`fail` with the kind and wait an HTTP-layer exception carries."""
        self.fail(
            error_message if error_message is not None else str(exc),
            kind=getattr(exc, "kind", None),
            retry_after_ms=getattr(exc, "retry_after_ms", None),
        )

    def abort(self, reason: str | None = None) -> None:
        self.fail(reason or "Request was aborted", "aborted")
