"""JSON shapes (docs/architecture.md §3, docs/sessions.md): camelCase on the wire, snake_case in Python, nothing lost."""

from __future__ import annotations

import json

import pytest

from wolli.agent.events import (
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    TurnEndEvent,
    TurnStartEvent,
    to_jsonable,
)
from wolli.agent.messages import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    parse_agent_message,
)
from wolli.agent.tool import ToolResult
from wolli.ai.types import (
    AssistantMessage,
    Context,
    Cost,
    ImageContent,
    Model,
    StreamOptions,
    TextContent,
    TextDeltaEvent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
    content_text,
)
from wolli.base.wire import WireError

ASSISTANT_JSON = {
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "hmm", "thinkingSignature": "sig", "redacted": True},
        {"type": "text", "text": "Hi", "textSignature": "msg_1"},
        {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"file_path": "a", "maxLines": 3},
         "thoughtSignature": "g-sig"},
    ],
    "api": "anthropic-messages",
    "provider": "anthropic",
    "model": "claude-x",
    "responseId": "resp_9",
    "usage": {
        "input": 10, "output": 5, "cacheRead": 100, "cacheWrite": 7, "totalTokens": 122,
        "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0.01, "cacheWrite": 0.02, "total": 0.33},
    },
    "stopReason": "toolUse",
    "errorMessage": "none really",
    "timestamp": 1700000000000,
}


def test_assistant_message_round_trip_is_exact():
    message = AssistantMessage.model_validate(ASSISTANT_JSON)
    assert message.response_id == "resp_9" and message.stop_reason == "toolUse"
    assert message.usage.cache_read == 100 and message.usage.cost.cache_write == 0.02
    assert message.content[0].thinking_signature == "sig" and message.content[0].redacted is True
    assert message.content[1].text_signature == "msg_1"
    assert message.content[2].thought_signature == "g-sig"
    assert message.to_json_dict() == ASSISTANT_JSON
    assert json.loads(message.to_json()) == ASSISTANT_JSON


def test_tool_arguments_and_schemas_keep_their_own_keys():
    call = ToolCall(id="c", name="edit", arguments={"file_path": "x", "old_text": "a"})
    assert call.to_json_dict()["arguments"] == {"file_path": "x", "old_text": "a"}
    schema = {"type": "object", "properties": {"file_path": {"type": "string"}}, "additionalProperties": False}
    assert Tool(name="edit", parameters=schema).to_json_dict()["parameters"] == schema
    result = ToolResultMessage(tool_call_id="c", tool_name="edit", details={"diff_lines": 3}, timestamp=1)
    assert result.to_json_dict() == {
        "role": "toolResult", "toolCallId": "c", "toolName": "edit", "content": [],
        "details": {"diff_lines": 3}, "isError": False, "timestamp": 1,
    }


def test_snake_case_attributes_and_both_spellings_accepted():
    by_alias = UserMessage.model_validate({"role": "user", "content": "hi", "timestamp": 5})
    image = ImageContent.model_validate({"type": "image", "data": "aGk=", "mimeType": "image/png"})
    by_name = ImageContent(data="aGk=", mime_type="image/png")
    assert image == by_name and image.mime_type == "image/png"
    assert by_alias.timestamp == 5
    usage = Usage(cache_read=3, total_tokens=3)
    assert usage.to_json_dict() == {
        "input": 0, "output": 0, "cacheRead": 3, "cacheWrite": 0, "totalTokens": 3,
        "cost": Cost().to_json_dict(),
    }
    assert set(Cost().to_json_dict()) == {"input", "output", "cacheRead", "cacheWrite", "total"}


def test_none_fields_are_left_out():
    data = AssistantMessage(timestamp=1).to_json_dict()
    assert "responseId" not in data and "errorMessage" not in data
    assert TextContent(text="x").to_json_dict() == {"type": "text", "text": "x"}


def test_unknown_fields_are_preserved_on_every_level():
    raw = {
        "role": "user",
        "content": [{"type": "text", "text": "hi", "cacheControl": {"type": "ephemeral"}}],
        "timestamp": 3,
        "futureField": {"nested": [1, 2]},
    }
    message = UserMessage.model_validate(raw)
    assert message.to_json_dict() == raw
    assistant = dict(ASSISTANT_JSON, newThing="kept", usage=dict(ASSISTANT_JSON["usage"], reasoningTokens=4))
    assert AssistantMessage.model_validate(assistant).to_json_dict() == assistant


def test_message_union_discriminates_by_role_and_blocks_by_type():
    raw = [
        {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "data": "aGk=", "mimeType": "image/jpeg"}], "timestamp": 1},
        ASSISTANT_JSON,
        {"role": "toolResult", "toolCallId": "call_1", "toolName": "read", "content": [{"type": "text", "text": "body"}], "isError": True, "timestamp": 2},
    ]
    messages = [parse_agent_message(m) for m in raw]
    assert [type(m) for m in messages] == [UserMessage, AssistantMessage, ToolResultMessage]
    assert [type(b) for b in messages[0].content] == [TextContent, ImageContent]
    assert [type(b) for b in messages[1].content] == [ThinkingContent, TextContent, ToolCall]
    assert messages[2].is_error is True
    assert [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in messages] == raw


@pytest.mark.parametrize(
    "bad",
    [
        {"role": "system", "content": "x"},
        {"role": "user", "content": [{"type": "toolCall", "id": "c", "name": "n"}]},  # not a user block
        {"role": "assistant", "content": [{"type": "image", "data": "", "mimeType": "image/png"}]},
        {"role": "assistant", "stopReason": "finished"},
    ],
)
def test_invalid_messages_are_rejected(bad):
    with pytest.raises(WireError):
        parse_agent_message(bad)


@pytest.mark.parametrize("value", [None, "free", 3, []])
def test_a_nested_object_of_the_wrong_kind_is_a_named_error(value):
    # The written-out decoder hands values that are no JSON object to the field's own decoder.
    with pytest.raises(WireError, match="usage: expected an object for Usage"):
        AssistantMessage.model_validate({"role": "assistant", "content": [], "usage": value})
    with pytest.raises(WireError, match="cost: expected an object for ModelCost"):
        Model.model_validate({"id": "m", "name": "m", "api": "openai-completions", "provider": "p",
                              "baseUrl": "http://127.0.0.1", "cost": value})


def test_agent_messages_round_trip_through_the_union():
    messages = [
        BashExecutionMessage(command="ls", output="a", exit_code=0, full_output_path="/tmp/x", timestamp=1),
        CustomMessage(custom_type="note", content="hi", display=False, details={"k": [1]}, timestamp=2),
        CustomMessage(custom_type="img", content=[ImageContent(data="aGk=", mime_type="image/png")], timestamp=3),
        BranchSummaryMessage(summary="s", from_id="abcd1234", timestamp=4),
        CompactionSummaryMessage(summary="c", tokens_before=999, timestamp=5),
        UserMessage(content="u", timestamp=6),
    ]
    dumped = [m.to_json_dict() for m in messages]
    assert dumped[0] == {
        "role": "bashExecution", "command": "ls", "output": "a", "exitCode": 0, "cancelled": False,
        "truncated": False, "fullOutputPath": "/tmp/x", "excludeFromContext": False, "timestamp": 1,
    }
    assert dumped[1]["customType"] == "note" and dumped[1]["display"] is False
    assert dumped[3]["fromId"] == "abcd1234" and dumped[4]["tokensBefore"] == 999
    parsed = [parse_agent_message(json.loads(json.dumps(d))) for d in dumped]
    assert parsed == messages
    with pytest.raises(WireError, match="command: field required"):
        parse_agent_message({"role": "bashExecution"})  # command is required


def test_model_and_context_json():
    model = Model.model_validate({
        "id": "m", "api": "openai-completions", "provider": "local", "baseUrl": "http://x/v1",
        "contextWindow": 32000, "maxTokens": 4096, "cost": {"input": 1, "output": 2, "cacheRead": 0.5},
        "compat": {"maxTokensField": "max_tokens"},
    })
    assert model.base_url == "http://x/v1" and model.context_window == 32000 and model.name == "m"
    assert model.cost.cache_read == 0.5 and model.compat == {"maxTokensField": "max_tokens"}
    out = model.to_json_dict()
    assert out["baseUrl"] == "http://x/v1" and out["maxTokens"] == 4096 and out["input"] == ["text"]
    context = Context(system_prompt="sys", messages=[UserMessage(content="q", timestamp=1)])
    assert context.to_json_dict() == {"systemPrompt": "sys", "messages": [{"role": "user", "content": "q", "timestamp": 1}]}


def test_stream_events_serialise_in_camel_case():
    partial = AssistantMessage(content=[TextContent(text="He")], timestamp=1)
    event = TextDeltaEvent(content_index=0, delta="e", partial=partial)
    data = event.to_json_dict()
    assert data["type"] == "text_delta" and data["contentIndex"] == 0 and data["delta"] == "e"
    assert data["partial"]["content"] == [{"type": "text", "text": "He"}]


def test_agent_events_to_jsonable():
    message = AssistantMessage(content=[TextContent(text="x")], timestamp=1)
    update = MessageUpdateEvent(message, TextDeltaEvent(content_index=0, delta="x", partial=message))
    data = to_jsonable(update)
    assert list(data)[0] == "type" and data["type"] == "message_update"
    assert data["assistantMessageEvent"]["contentIndex"] == 0
    assert data["message"]["stopReason"] == "stop"

    end = to_jsonable(ToolExecutionEndEvent("c1", "read", ToolResult(content=[TextContent(text="r")], details={"n": 1}), True))
    assert end == {
        "type": "tool_execution_end", "toolCallId": "c1", "toolName": "read",
        "result": {"content": [{"type": "text", "text": "r"}], "details": {"n": 1}, "terminate": False, "isError": False},
        "isError": True,
    }
    turn = to_jsonable(TurnEndEvent(2, message, [ToolResultMessage(tool_call_id="c", tool_name="t", timestamp=1)]))
    assert turn["turnIndex"] == 2 and turn["toolResults"][0]["toolCallId"] == "c"
    start = to_jsonable(TurnStartEvent(0, timestamp=9))
    assert start == {"type": "turn_start", "turnIndex": 0, "timestamp": 9}
    assert to_jsonable({"k": (1, "a", None, 1.5)}) == {"k": [1, "a", None, 1.5]}


def test_stream_options_coerce():
    assert StreamOptions.coerce(None) == StreamOptions()
    options = StreamOptions(max_tokens=5)
    assert StreamOptions.coerce(options) is options
    assert StreamOptions.coerce({"max_tokens": 7, "extra": {"a": 1}}).extra == {"a": 1}
    with pytest.raises(TypeError, match="maxTokens"):
        StreamOptions.coerce({"maxTokens": 7})


def test_content_text_and_message_helpers():
    assert content_text("plain") == "plain"
    assert content_text([TextContent(text="a"), ImageContent(data="", mime_type="image/png"), TextContent(text="b")]) == "a\nb"
    message = AssistantMessage.model_validate(ASSISTANT_JSON)
    assert message.text() == "Hi" and [c.id for c in message.tool_calls()] == ["call_1"]
