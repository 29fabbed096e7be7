"""Agent-level messages: the LLM messages plus the kinds only the agent and session know.

``bashExecution`` (a ``!cmd`` the user ran), ``custom`` (an extension's message),
``branchSummary`` and ``compactionSummary`` live in the transcript and the session file;
:func:`convert_to_llm` turns them into user messages just before a request. ``!!cmd`` output
(``exclude_from_context``) and empty custom messages never reach the model; a custom
message's ``display`` flag only decides whether the transcript shows it.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, Literal

from ..ai.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ToolResultMessage,
    UserContentBlock,
    UserMessage,
    now_ms,
)
from ..base.records import record
from ..base.wire import WireModel, wire_union


@record(slots=True, kw_only=True)
class BashExecutionMessage(WireModel):
    role: Literal["bashExecution"] = "bashExecution"
    command: str
    output: str = ""
    exit_code: int | None = None
    cancelled: bool = False
    truncated: bool = False
    full_output_path: str | None = None
    exclude_from_context: bool = False
    timestamp: int = field(default_factory=now_ms)


@record(slots=True, kw_only=True)
class CustomMessage(WireModel):
    role: Literal["custom"] = "custom"
    custom_type: str
    content: str | list[UserContentBlock] = ""
    display: bool = True
    details: Any = None
    timestamp: int = field(default_factory=now_ms)


@record(slots=True, kw_only=True)
class BranchSummaryMessage(WireModel):
    role: Literal["branchSummary"] = "branchSummary"
    summary: str
    from_id: str | None = None
    timestamp: int = field(default_factory=now_ms)


@record(slots=True, kw_only=True)
class CompactionSummaryMessage(WireModel):
    role: Literal["compactionSummary"] = "compactionSummary"
    summary: str
    tokens_before: int = 0
    timestamp: int = field(default_factory=now_ms)


AgentMessage = (
    UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
)
_decode_agent_message = wire_union(
    UserMessage, AssistantMessage, ToolResultMessage, BashExecutionMessage, CustomMessage,
    BranchSummaryMessage, CompactionSummaryMessage,
)


def parse_agent_message(data: dict[str, Any]) -> AgentMessage:
    """Validate a JSON dict into the right message class (raises ``wolli.base.wire.WireError``)."""
    message: AgentMessage = _decode_agent_message(data)
    return message


COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "\n</summary>"


def bash_execution_text(message: BashExecutionMessage) -> str:
    text = f"Ran `{message.command}`\n"
    text += f"```\n{message.output}\n```" if message.output else "(no output)"
    if message.cancelled:
        text += "\n\n(command cancelled)"
    elif message.exit_code not in (0, None):
        text += f"\n\nCommand exited with code {message.exit_code}"
    if message.truncated and message.full_output_path:
        text += f"\n\n[Output truncated. Full output: {message.full_output_path}]"
    return text


def convert_to_llm(messages: list[Any]) -> list[Message]:
    """Agent messages -> the messages a provider is sent."""
    out: list[Message] = []
    for message in messages:
        role = getattr(message, "role", None)
        if role in ("user", "assistant", "toolResult"):
            out.append(message)
        elif role == "bashExecution":
            if not message.exclude_from_context:
                out.append(UserMessage(content=[TextContent(text=bash_execution_text(message))], timestamp=message.timestamp))
        elif role == "custom":
            content = message.content
            # Empty text is dropped: providers reject empty content blocks.
            blocks = ([TextContent(text=content)] if content else []) if isinstance(content, str) else list(content)
            if blocks:
                out.append(UserMessage(content=blocks, timestamp=message.timestamp))
        elif role == "branchSummary":
            text = BRANCH_SUMMARY_PREFIX + message.summary + BRANCH_SUMMARY_SUFFIX
            out.append(UserMessage(content=[TextContent(text=text)], timestamp=message.timestamp))
        elif role == "compactionSummary":
            text = COMPACTION_SUMMARY_PREFIX + message.summary + COMPACTION_SUMMARY_SUFFIX
            out.append(UserMessage(content=[TextContent(text=text)], timestamp=message.timestamp))
    return out


def user_message(text: str, images: list[ImageContent] | None = None) -> UserMessage:
    if images:
        return UserMessage(content=[TextContent(text=text), *images])
    return UserMessage(content=text)
