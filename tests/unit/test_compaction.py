"""Compaction: token estimates, cut points, preparation, the summary call, the cool-down."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.waiting import wait_until
from wolli.agent.messages import BashExecutionMessage, CompactionSummaryMessage
from wolli.ai.abort import AbortController
from wolli.ai.providers.faux import FauxProvider, faux_error, faux_hang, faux_text
from wolli.ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from wolli.session.compaction import (
    SPLIT_TURN_HEADING,
    CompactionBreaker,
    CompactionError,
    CompactionSettings,
    compact,
    find_cut_point,
    prepare_compaction,
    should_compact,
)
from wolli.session.entries import (
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
    new_entry_id,
)
from wolli.session.summarize import serialize_conversation
from wolli.session.tokens import estimate_context_tokens, estimate_message_tokens

# ---------------------------------------------------------------------------- builders


def user(text: str, ts: int = 1) -> UserMessage:
    return UserMessage(content=text, timestamp=ts)


def assistant(text: str = "", calls: list[ToolCall] | None = None, usage: int = 0, ts: int = 2, stop: str = "stop"):
    content: list = [TextContent(text=text)] if text else []
    content += calls or []
    return AssistantMessage(
        content=content,
        stop_reason="toolUse" if calls else stop,
        usage=Usage(input=usage),
        timestamp=ts,
    )


def call(name: str, **arguments) -> ToolCall:
    return ToolCall(id=new_entry_id(), name=name, arguments=arguments)


def result(tool_call: ToolCall, text: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=tool_call.id, tool_name=tool_call.name, content=[TextContent(text=text)])


class Branch(list):
    """Root -> leaf entries with a parent chain."""

    def add(self, entry):
        entry.parent_id = self[-1].id if self else None
        self.append(entry)
        return entry

    def msg(self, message):
        return self.add(MessageEntry(id=new_entry_id(), message=message))

    def tool_turn(self, prompt: str, steps: int, size: int) -> None:
        """A user prompt, then ``steps`` tool calls each with a ``size``-char result, then an answer."""
        self.msg(user(prompt))
        for n in range(steps):
            tc = call("read", path=f"src/file{n}.py")
            self.msg(assistant(f"reading {n}", [tc]))
            self.msg(result(tc, "x" * size))
        self.msg(assistant("done"))


def roles(entries) -> list[str]:
    return [getattr(getattr(e, "message", None), "role", e.type) for e in entries]


@pytest.fixture
def faux():
    provider = FauxProvider(provider="faux-compaction", context_window=100_000)
    yield provider
    provider.unregister()


def prompt_of(faux: FauxProvider, index: int = -1) -> str:
    context = faux.contexts[index]
    (message,) = context.messages
    return message.content if isinstance(message.content, str) else message.content[0].text


# ---------------------------------------------------------------------------- tokens


def test_message_estimates_use_chars_over_four_and_flat_image_cost():
    assert estimate_message_tokens(user("a" * 40)) == 10
    assert estimate_message_tokens(user("a" * 41)) == 11
    image = UserMessage(content=[TextContent(text="abcd"), ImageContent(data="AAAA", mime_type="image/png")])
    assert estimate_message_tokens(image) == 1 + 1200
    tc = ToolCall(id="1", name="read", arguments={"path": "a"})
    assert estimate_message_tokens(assistant("", [tc])) == (len("read") + len('{"path": "a"}') + 3) // 4
    assert estimate_message_tokens(BashExecutionMessage(command="ls", output="x" * 10)) == 3
    assert estimate_message_tokens(BashExecutionMessage(command="ls", output="x" * 10, exclude_from_context=True)) == 0


def test_context_tokens_use_last_real_usage_plus_trailing_estimates():
    messages = [
        user("a" * 400),
        assistant("ok", usage=5000, ts=10),
        assistant("failed", usage=99999, ts=11, stop="error"),
        user("b" * 400, ts=12),
    ]
    got = estimate_context_tokens(messages)
    assert got.last_usage_index == 1
    assert got.usage_tokens == 5000
    assert got.trailing_tokens == estimate_message_tokens(messages[2]) + 100
    assert got.tokens == got.usage_tokens + got.trailing_tokens


def test_context_tokens_without_usage_estimate_everything():
    messages = [user("a" * 400), assistant("b" * 40)]
    got = estimate_context_tokens(messages)
    assert got.last_usage_index is None and got.usage_tokens == 0 and got.tokens == 110


def test_usage_older_than_a_compaction_summary_is_not_trusted():
    """Right after a compaction the kept answer still reports the pre-compaction size."""
    summary = CompactionSummaryMessage(summary="s" * 40, timestamp=100)
    stale = [summary, user("a" * 40, ts=50), assistant("ok", usage=150_000, ts=60)]
    assert estimate_context_tokens(stale).tokens == 10 + 10 + 1
    fresh = [*stale, user("q", ts=200), assistant("new", usage=3000, ts=210)]
    assert estimate_context_tokens(fresh).tokens == 3000


# ---------------------------------------------------------------------------- should_compact


def test_should_compact_boundaries():
    settings = CompactionSettings(reserve_tokens=16384)
    assert not should_compact(100_000 - 16384, 100_000, settings)
    assert should_compact(100_000 - 16384 + 1, 100_000, settings)
    assert not should_compact(0, 100_000, settings)
    assert not should_compact(10**9, 100_000, CompactionSettings(enabled=False))
    assert not should_compact(10, 0, settings)  # unknown window: never guess
    assert CompactionSettings() == CompactionSettings(enabled=True, reserve_tokens=16384, keep_recent_tokens=20000)


# ---------------------------------------------------------------------------- cut points


@pytest.mark.parametrize("keep", [1, 50, 99, 100, 101, 250, 333, 500, 777, 1000, 1500, 5000])
def test_cut_never_lands_on_a_tool_result_and_keeps_at_least_keep_recent(keep):
    branch = Branch()
    for turn in range(4):
        branch.tool_turn(f"task {turn}", steps=3, size=400)  # results ~100 tokens each
    cut = find_cut_point(branch, 0, len(branch), keep)
    kept = branch[cut.first_kept_entry_index :]
    assert kept[0].message.role != "toolResult"
    kept_call_ids = {b.id for e in kept if e.message.role == "assistant" for b in e.message.content if b.type == "toolCall"}
    for entry in kept:
        if entry.message.role == "toolResult":
            assert entry.message.tool_call_id in kept_call_ids, "a kept result lost its call"
    kept_tokens = sum(estimate_message_tokens(e.message) for e in kept)
    assert kept_tokens >= keep or cut.first_kept_entry_index == 0
    # Minimal: starting at the next valid cut would keep fewer than asked for.
    later = [i for i in range(cut.first_kept_entry_index + 1, len(branch)) if branch[i].message.role != "toolResult"]
    if later:
        assert sum(estimate_message_tokens(e.message) for e in branch[later[0] :]) < keep


def test_cut_inside_a_turn_is_a_split_turn_with_its_start():
    branch = Branch()
    branch.tool_turn("first task", steps=1, size=40)
    turn_start = len(branch)
    branch.tool_turn("second, long task", steps=6, size=400)
    cut = find_cut_point(branch, 0, len(branch), 250)
    assert cut.is_split_turn
    assert cut.turn_start_index == turn_start
    assert branch[cut.first_kept_entry_index].message.role == "assistant"
    assert cut.first_kept_entry_index > turn_start


def test_cut_at_a_user_message_is_not_split():
    branch = Branch()
    branch.tool_turn("first", steps=2, size=400)
    start = len(branch)
    branch.msg(user("u" * 2000))
    branch.msg(assistant("short"))
    cut = find_cut_point(branch, 0, len(branch), 400)
    assert cut == type(cut)(start, -1, False)


def test_one_huge_tool_result_stays_with_its_call():
    branch = Branch()
    branch.tool_turn("warm up", steps=1, size=40)
    branch.msg(user("read the big file"))
    tc = call("read", path="big.log")
    call_index = len(branch)
    branch.msg(assistant("", [tc]))
    branch.msg(result(tc, "z" * 100_000))
    cut = find_cut_point(branch, 0, len(branch), 1000)
    assert cut.first_kept_entry_index == call_index
    assert cut.is_split_turn and cut.turn_start_index == call_index - 1


def test_state_entries_just_before_the_cut_are_kept_with_it():
    branch = Branch()
    branch.tool_turn("first", steps=2, size=400)
    change = branch.add(ModelChangeEntry(id=new_entry_id(), provider="p", model_id="m"))
    branch.msg(user("u" * 2000))
    cut = find_cut_point(branch, 0, len(branch), 400)
    assert branch[cut.first_kept_entry_index] is change
    assert not cut.is_split_turn


def test_custom_message_entries_are_valid_cuts_and_turn_starts():
    branch = Branch()
    branch.tool_turn("first", steps=2, size=400)
    custom_index = len(branch)
    branch.add(CustomMessageEntry(id=new_entry_id(), custom_type="note", content="n" * 2000))
    cut = find_cut_point(branch, 0, len(branch), 100)
    assert (cut.first_kept_entry_index, cut.is_split_turn) == (custom_index, False)


# ---------------------------------------------------------------------------- preparation


def test_prepare_returns_none_when_nothing_to_compact():
    assert prepare_compaction([], CompactionSettings()) is None
    branch = Branch()
    branch.msg(user("hello"))
    branch.msg(assistant("hi"))
    assert prepare_compaction(branch, CompactionSettings(keep_recent_tokens=20000)) is None
    branch.add(CompactionEntry(id=new_entry_id(), summary="s", first_kept_entry_id=branch[0].id))
    assert prepare_compaction(branch, CompactionSettings(keep_recent_tokens=1)) is None


def test_prepare_splits_history_and_turn_prefix():
    branch = Branch()
    branch.tool_turn("first task", steps=1, size=40)
    first_turn = len(branch)
    branch.tool_turn("second task", steps=6, size=400)
    prep = prepare_compaction(branch, CompactionSettings(keep_recent_tokens=250))
    assert prep is not None and prep.is_split_turn
    kept_index = next(i for i, e in enumerate(branch) if e.id == prep.first_kept_entry_id)
    assert prep.first_kept_entry_index == kept_index
    assert [m.role for m in prep.messages_to_summarize] == roles(branch[:first_turn])
    assert [m.role for m in prep.turn_prefix_messages] == roles(branch[first_turn:kept_index])
    assert prep.turn_prefix_messages[0].content == "second task"
    assert prep.previous_summary is None
    assert prep.tokens_before == sum(estimate_message_tokens(e.message) for e in branch)
    kept_reads = {p for e in branch[kept_index:] for p in _read_paths([e.message])}
    assert prep.file_ops.read == _read_paths(prep.messages_to_summarize + prep.turn_prefix_messages)
    assert "src/file0.py" in prep.file_ops.read and kept_reads and not (kept_reads - {"src/file0.py"}) & prep.file_ops.read


def _read_paths(messages) -> set[str]:
    return {
        b.arguments["path"]
        for m in messages
        if m.role == "assistant"
        for b in m.content
        if b.type == "toolCall" and b.name == "read"
    }


# ---------------------------------------------------------------------------- the summary call


def _long_session() -> Branch:
    branch = Branch()
    branch.msg(user("Please refactor the parser. Never touch tests/golden."))
    read = call("read", path="src/parser.py")
    branch.msg(assistant("Reading it.", [read]))
    branch.msg(result(read, "def parse(): ...\n" * 500))
    edit = call("edit", path="src/parser.py", oldText="a", newText="b")
    branch.msg(assistant("", [edit]))
    branch.msg(result(edit, "Edited."))
    branch.msg(assistant("Refactored."))
    branch.msg(user("Now add a CLI flag " + "please " * 300))
    branch.msg(assistant("Done " * 300))
    return branch


async def test_compact_sends_a_transcript_and_builds_the_summary(faux):
    branch = _long_session()
    prep = prepare_compaction(branch, CompactionSettings(keep_recent_tokens=500))
    assert prep is not None and not prep.is_split_turn
    faux.push(faux_text("## Goal\nRefactor the parser."))
    got = await compact(prep, faux.model, api_key="k")

    context = faux.contexts[-1]
    assert "summar" in context.system_prompt.lower() and not context.tools
    prompt = prompt_of(faux)
    assert "[User]: Please refactor the parser." in prompt
    assert '[Assistant tool calls]: read(path="src/parser.py")' in prompt
    assert "[Tool result read]: def parse()" in prompt
    assert "more characters left out" in prompt  # the 8,500-char read result is clipped
    assert len(prompt) < 8000
    for section in ("## Goal", "## Constraints & Preferences", "### Done", "### In Progress", "### Blocked",
                    "## Key Decisions", "## Next Steps", "## Critical Context"):
        assert section in prompt
    assert "<previous-summary>" not in prompt
    assert faux.options[-1].api_key == "k"
    assert faux.options[-1].max_tokens == int(16384 * 0.8)

    assert got.first_kept_entry_id == prep.first_kept_entry_id
    assert got.tokens_before == prep.tokens_before
    assert got.details == {"readFiles": [], "modifiedFiles": ["src/parser.py"]}
    assert got.summary.startswith("## Goal\nRefactor the parser.")
    assert got.summary.endswith("<modified-files>\nsrc/parser.py\n</modified-files>")


async def test_second_compaction_updates_the_previous_summary_and_carries_file_lists(faux):
    branch = _long_session()
    settings = CompactionSettings(keep_recent_tokens=500)
    faux.push(faux_text("FIRST SUMMARY: parser refactor"))
    first = await compact(prepare_compaction(branch, settings), faux.model)
    branch.add(CompactionEntry(id=new_entry_id(), summary=first.summary, first_kept_entry_id=first.first_kept_entry_id,
                               tokens_before=first.tokens_before, details=first.details))
    notes = call("read", path="docs/notes.md")
    branch.msg(user("Check the notes " + "x" * 2000))
    branch.msg(assistant("", [notes]))
    branch.msg(result(notes, "notes " * 500))
    write = call("write", path="src/cli.py", content="print()")
    branch.msg(assistant("", [write]))
    branch.msg(result(write, "Wrote."))
    branch.msg(assistant("All set."))
    branch.msg(user("Thanks, now the docs " * 100))

    prep = prepare_compaction(branch, settings)
    assert prep is not None and prep.previous_summary == first.summary and not prep.is_split_turn
    # The entries the first compaction kept are summarised now, not lost.
    assert any(m.role == "user" and "CLI flag" in m.content for m in prep.messages_to_summarize)
    assert not any(m.role == "compactionSummary" for m in prep.messages_to_summarize)
    faux.push(faux_text("SECOND SUMMARY"))
    second = await compact(prep, faux.model)

    prompt = prompt_of(faux)
    assert "<previous-summary>\nFIRST SUMMARY: parser refactor\n</previous-summary>" in prompt
    assert "UPDATE" in prompt
    assert "<modified-files>" not in prompt.split("</previous-summary>")[0]  # blocks re-added, not doubled
    assert second.details == {"readFiles": ["docs/notes.md"], "modifiedFiles": ["src/cli.py", "src/parser.py"]}
    assert second.summary == (
        "SECOND SUMMARY\n\n<read-files>\ndocs/notes.md\n</read-files>\n\n"
        "<modified-files>\nsrc/cli.py\nsrc/parser.py\n</modified-files>"
    )


def test_file_lists_of_a_hook_summary_without_details_are_read_from_its_blocks():
    branch = Branch()
    branch.msg(user("old"))
    kept = branch.msg(user("kept"))
    branch.add(CompactionEntry(id=new_entry_id(), summary="by hook\n\n<read-files>\na.txt\n</read-files>",
                               first_kept_entry_id=kept.id, from_hook=True))
    branch.msg(user("y" * 4000))
    branch.msg(assistant("z" * 4000))
    prep = prepare_compaction(branch, CompactionSettings(keep_recent_tokens=100))
    assert prep is not None and prep.file_ops.read == {"a.txt"}


async def test_custom_instructions_reach_the_prompt(faux):
    prep = prepare_compaction(_long_session(), CompactionSettings(keep_recent_tokens=500))
    faux.push(faux_text("summary"))
    await compact(prep, faux.model, custom_instructions="Focus on the CLI flag work.")
    assert "Focus on the CLI flag work." in prompt_of(faux)


async def test_split_turn_gets_its_own_prefix_summary(faux):
    branch = Branch()
    branch.tool_turn("first task", steps=1, size=40)
    branch.tool_turn("second, long task", steps=6, size=400)
    prep = prepare_compaction(branch, CompactionSettings(keep_recent_tokens=250))
    assert prep.is_split_turn

    def answer(context, options):
        text = context.messages[0].content
        return faux_text("PREFIX" if "## Original Request" in text else "HISTORY")

    faux.push(answer, answer)
    got = await compact(prep, faux.model)
    assert faux.calls == 2
    prompts = [c.messages[0].content for c in faux.contexts]
    prefix_prompt = next(p for p in prompts if "## Original Request" in p)
    assert "[User]: second, long task" in prefix_prompt and "first task" not in prefix_prompt
    assert got.summary.startswith(f"HISTORY\n\n---\n\n{SPLIT_TURN_HEADING}\n\nPREFIX")
    assert "<read-files>\nsrc/file0.py" in got.summary


async def test_llm_failure_raises_compaction_error_with_the_provider_message(faux):
    prep = prepare_compaction(_long_session(), CompactionSettings(keep_recent_tokens=500))
    faux.push(faux_error("529 overloaded_error: Overloaded"))
    with pytest.raises(CompactionError, match="Overloaded") as info:
        await compact(prep, faux.model)
    assert not info.value.aborted
    faux.push(faux_text("   "))
    with pytest.raises(CompactionError, match="empty summary"):
        await compact(prep, faux.model)


async def test_abort_stops_the_summary(faux):
    prep = prepare_compaction(_long_session(), CompactionSettings(keep_recent_tokens=500))
    controller = AbortController()
    controller.abort("user pressed Esc")
    with pytest.raises(CompactionError) as info:
        await compact(prep, faux.model, signal=controller.signal)
    assert info.value.aborted and faux.calls == 0

    controller = AbortController()
    faux.push(faux_hang(faux_text("partial")))
    task = asyncio.create_task(compact(prep, faux.model, signal=controller.signal))
    await wait_until(lambda: faux.calls > 0, 5, "the summary request")
    controller.abort("user pressed Esc")
    with pytest.raises(CompactionError) as info:
        await asyncio.wait_for(task, 5)
    assert info.value.aborted


def test_transcript_labels_every_kind_of_message():
    tc = call("bash", command="make")
    text = serialize_conversation([
        user("hi"),
        AssistantMessage(content=[TextContent(text="ok"), tc], stop_reason="toolUse"),
        ToolResultMessage(tool_call_id=tc.id, tool_name="bash", content=[TextContent(text="boom")], is_error=True),
        BashExecutionMessage(command="ls", output="a\nb", exit_code=0),
        BashExecutionMessage(command="secret", output="hidden", exclude_from_context=True),
        assistant("half", stop="aborted"),
    ])
    assert "[User]: hi" in text
    assert '[Assistant tool calls]: bash(command="make")' in text
    assert "[Tool error bash]: boom" in text
    assert "[User ran `ls` (exit code 0)]: a\nb" in text
    assert "secret" not in text
    assert "[Assistant aborted]" in text


# ---------------------------------------------------------------------------- cool-down


def test_breaker_pauses_after_three_failures_and_doubles_on_repeat():
    breaker = CompactionBreaker(cooldown_seconds=300)
    assert breaker.allowed(now=0)
    breaker.record_failure(now=0)
    breaker.record_failure(now=1)
    assert breaker.allowed(now=2)
    breaker.record_failure(now=2)
    assert not breaker.allowed(now=3)
    assert not breaker.allowed(now=301.9)
    assert breaker.remaining(now=202) == pytest.approx(100)
    assert breaker.allowed(now=302)
    # A manual /compact failing during the pause does not lengthen it.
    breaker2 = CompactionBreaker(cooldown_seconds=300)
    for t in range(3):
        breaker2.record_failure(now=t)
    breaker2.record_failure(now=100)
    assert breaker2.allowed(now=302)
    # After the pause one more failure trips it again at once, for twice as long.
    breaker.record_failure(now=302)
    assert not breaker.allowed(now=302 + 599)
    assert breaker.allowed(now=302 + 600)
    breaker.record_success()
    assert breaker.allowed(now=303)
    breaker.record_failure(now=303)
    assert breaker.allowed(now=304)  # counting starts over after a success


def test_breaker_cooldown_is_capped_and_uses_its_clock():
    now = [0.0]
    breaker = CompactionBreaker(cooldown_seconds=300, max_cooldown_seconds=1000, clock=lambda: now[0])
    for _ in range(3):
        breaker.record_failure()
    for _ in range(4):
        now[0] += breaker.remaining()
        assert breaker.allowed()
        breaker.record_failure()
    assert breaker.remaining() == 1000
