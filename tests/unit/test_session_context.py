"""Building the model context for a leaf: compaction, summaries, custom entries, model/level."""

from __future__ import annotations

from wolli.agent.messages import (
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    convert_to_llm,
)
from wolli.ai.types import AssistantMessage, TextContent, UserMessage
from wolli.session.context import iso_to_ms
from wolli.session.manager import SessionManager


def user(text: str) -> UserMessage:
    return UserMessage(content=text)


def assistant(text: str, provider: str = "faux", model: str = "m1") -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], api="faux", provider=provider, model=model)


def texts(messages) -> list[str]:
    out = []
    for m in messages:
        if isinstance(m, CompactionSummaryMessage):
            out.append(f"[compaction:{m.summary}]")
        elif isinstance(m, BranchSummaryMessage):
            out.append(f"[branch:{m.summary}]")
        elif isinstance(m, CustomMessage):
            out.append(f"[custom:{m.content}]")
        elif isinstance(m.content, str):
            out.append(m.content)
        else:
            out.append("".join(b.text for b in m.content))
    return out


def test_plain_path_and_bookkeeping_never_sent():
    m = SessionManager.in_memory("/p")
    m.append_message(user("u1"))
    m.append_custom_entry("state", {"x": 1})
    m.append_message(assistant("a1"))
    m.append_label(m.get_leaf_id(), "lbl")
    m.append_session_info("name")
    m.append_tags({"k": "v"})
    m.append_custom_message_entry("note", "injected", True, {"d": 1})
    m.append_message(user("u2"))
    ctx = m.build_session_context()
    assert texts(ctx.messages) == ["u1", "a1", "[custom:injected]", "u2"]
    custom = ctx.messages[2]
    assert custom.custom_type == "note" and custom.details == {"d": 1} and custom.timestamp > 0
    # convert_to_llm sends the custom message as a user message.
    assert [msg.role for msg in convert_to_llm(ctx.messages)] == ["user", "assistant", "user", "user"]


def test_compaction_summary_first_then_kept_entries_then_the_rest():
    m = SessionManager.in_memory("/p")
    m.append_message(user("old question"))
    m.append_message(assistant("old answer"))
    kept = m.append_message(user("kept question"))
    m.append_message(assistant("kept answer"))
    m.append_compaction("the summary", kept, 5000)
    m.append_message(user("new question"))
    m.append_message(assistant("new answer"))
    ctx = m.build_session_context()
    assert texts(ctx.messages) == [
        "[compaction:the summary]", "kept question", "kept answer", "new question", "new answer",
    ]
    assert ctx.messages[0].tokens_before == 5000
    llm = convert_to_llm(ctx.messages)
    assert llm[0].role == "user" and "the summary" in llm[0].content[0].text


def test_only_the_latest_compaction_counts():
    m = SessionManager.in_memory("/p")
    first = m.append_message(user("q1"))
    m.append_message(assistant("a1"))
    m.append_compaction("first summary", first, 100)
    q2 = m.append_message(user("q2"))
    m.append_message(assistant("a2"))
    m.append_compaction("second summary", q2, 200)
    m.append_message(user("q3"))
    assert texts(m.build_session_context().messages) == ["[compaction:second summary]", "q2", "a2", "q3"]


def test_compaction_with_unknown_first_kept_keeps_only_what_follows():
    m = SessionManager.in_memory("/p")
    m.append_message(user("q1"))
    m.append_compaction("summary", "ffffffff", 10)
    m.append_message(user("q2"))
    assert texts(m.build_session_context().messages) == ["[compaction:summary]", "q2"]


def test_compaction_on_another_branch_does_not_apply():
    m = SessionManager.in_memory("/p")
    root = m.append_message(user("q1"))
    m.append_message(assistant("a1"))
    m.append_compaction("summary", root, 10)
    m.branch(root)
    m.append_message(assistant("other"))
    assert texts(m.build_session_context().messages) == ["q1", "other"]


def test_branch_summary_and_leaf_argument():
    m = SessionManager.in_memory("/p")
    root = m.append_message(user("q1"))
    dead = m.append_message(assistant("dead end"))
    m.branch_with_summary(root, "learned things")
    m.append_message(user("q2"))
    assert texts(m.build_session_context().messages) == ["q1", "[branch:learned things]", "q2"]
    assert texts(m.build_session_context(dead).messages) == ["q1", "dead end"]


def test_model_and_thinking_level_restored_from_path():
    m = SessionManager.in_memory("/p")
    assert m.build_session_context().model is None and m.build_session_context().thinking_level is None
    m.append_model_change("anthropic", "claude-x")
    m.append_thinking_level_change("medium")
    first = m.append_message(user("q"))
    ctx = m.build_session_context()
    assert ctx.model == ("anthropic", "claude-x") and ctx.thinking_level == "medium"
    m.append_message(assistant("a", provider="openai", model="gpt-y"))
    assert m.build_session_context().model == ("openai", "gpt-y")  # assistant messages count too
    m.append_model_change("google", "gemini-z")
    m.append_thinking_level_change("off")
    ctx = m.build_session_context()
    assert ctx.model == ("google", "gemini-z") and ctx.thinking_level == "off"
    assert m.build_session_context(first).model == ("anthropic", "claude-x")


def test_restored_context_survives_reopen(tmp_path):
    m = SessionManager.create("/p", tmp_path)
    m.append_model_change("faux", "m1")
    kept = m.append_message(user("q1"))
    m.append_message(assistant("a1"))
    m.append_compaction("sum", kept, 1, None, False)
    m.append_custom_message_entry("n", [TextContent(text="blocks")])
    reopened = SessionManager.open(m.get_session_file())
    ctx = reopened.build_session_context()
    assert texts(ctx.messages)[:3] == ["[compaction:sum]", "q1", "a1"] and len(ctx.messages) == 4
    assert isinstance(ctx.messages[3], CustomMessage) and ctx.messages[3].content[0].text == "blocks"
    assert ctx.model == ("faux", "m1")


def test_iso_to_ms():
    assert iso_to_ms("1970-01-01T00:00:01.500Z") == 1500
    assert iso_to_ms("garbage") == 0 and iso_to_ms(None) == 0
