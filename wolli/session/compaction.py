"""Compaction: summarise older history so a long session fits the model's context window.

The runtime asks :func:`should_compact` after every turn (also inside a long tool loop),
compacts once on a context-overflow error before retrying, and on ``/compact``. The work is
split in two so an extension's ``session_before_compact`` handler can look in between:
:func:`prepare_compaction` picks what to keep and what to summarise (pure, no I/O), then
:func:`compact` asks the model for the summary. The result becomes a ``compaction`` entry:
the context is then the summary, the kept entries from ``first_kept_entry_id`` on, and what
follows.

Cut rules: keep at least ``keep_recent_tokens`` of the newest history; never start the kept
part at a tool result (it must stay with the call that asked for it); a cut after a turn's
user message splits that turn, whose beginning is summarised on its own. A previous summary
is updated with the newly summarised messages rather than summarised again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from dataclasses import field
from typing import TYPE_CHECKING, Any, TypeVar

from ..ai.abort import AbortSignal
from ..ai.types import Model, StreamOptions
from ..base.records import record
from .context import entry_to_message
from .entries import BranchSummaryEntry, CompactionEntry, CustomMessageEntry, MessageEntry
from .summarize import (
    SUMMARY_FORMAT,
    TURN_PREFIX_PROMPT,
    CompactionError,
    FileOperations,
    add_file_operations,
    add_previous_file_lists,
    ask_summary,
    build_summary_prompt_text,
    format_file_lists,
    serialize_pieces,
    strip_file_lists,
)
from .summarize_pieces import MIN_CHUNK_CHARS, PieceSummary, input_budget_chars, summarize_in_pieces
from .tokens import estimate_context_tokens, estimate_message_tokens

if TYPE_CHECKING:
    from .entries import SessionEntry

SPLIT_TURN_HEADING = "**Turn Context (split turn):**"


@record
class CompactionSettings:
    """``compaction`` in settings.json (pi's defaults)."""

    enabled: bool = True
    # Room left for the next answer: compact once the context passes window - reserve.
    reserve_tokens: int = 16384
    # Newest history kept word for word after a compaction.
    keep_recent_tokens: int = 20000


def should_compact(context_tokens: int, context_window: int, settings: CompactionSettings) -> bool:
    """True when the context has grown past the window minus the reserve."""
    if not settings.enabled or context_window <= 0:
        return False
    return context_tokens > context_window - settings.reserve_tokens


# ---------------------------------------------------------------------------- entries -> messages


def _carries_message(entry: SessionEntry) -> bool:
    return isinstance(entry, MessageEntry | CustomMessageEntry | BranchSummaryEntry)


def _is_valid_cut(entry: SessionEntry) -> bool:
    """Kept history may start here: anything that carries a message except a tool result."""
    if isinstance(entry, MessageEntry):
        return getattr(entry.message, "role", None) != "toolResult"
    return isinstance(entry, CustomMessageEntry | BranchSummaryEntry)


def _is_turn_start(entry: SessionEntry) -> bool:
    """A turn begins with something the user (or an extension) put in: not a model answer."""
    if isinstance(entry, MessageEntry):
        return getattr(entry.message, "role", None) in ("user", "bashExecution", "custom")
    return isinstance(entry, CustomMessageEntry | BranchSummaryEntry)


def _messages(entries: list[Any], start: int, end: int) -> list[Any]:
    """Messages of ``entries[start:end]``; earlier compaction entries are left out (their
    summary reaches the summariser as the previous summary)."""
    out = []
    for entry in entries[start:end]:
        if _carries_message(entry):
            out.append(entry_to_message(entry))
    return out


# ---------------------------------------------------------------------------- cut point


@record(frozen=True)
class CutPoint:
    first_kept_entry_index: int
    # Where the split turn begins (its user message); -1 unless ``is_split_turn``.
    turn_start_index: int
    is_split_turn: bool


def find_turn_start(entries: list[Any], index: int, start_index: int) -> int:
    """Index of the turn start at or before ``index`` (not before ``start_index``), or -1."""
    for i in range(index, start_index - 1, -1):
        if _is_turn_start(entries[i]):
            return i
    return -1


def find_cut_point(entries: list[Any], start_index: int, end_index: int, keep_recent_tokens: int) -> CutPoint:
    """Where the kept history of ``entries[start_index:end_index]`` starts.

    Walks back from the newest entry adding up estimated tokens; once ``keep_recent_tokens``
    are reached the cut goes at the nearest valid entry at or before that point, so at least
    that much is kept and a tool result reached there stays with its call. State entries
    (model changes, labels...) just before the cut are kept with it.
    """
    cuts = [i for i in range(start_index, end_index) if _is_valid_cut(entries[i])]
    if not cuts:
        return CutPoint(start_index, -1, False)
    cut = cuts[0]
    total = 0
    for i in range(end_index - 1, start_index - 1, -1):
        entry = entries[i]
        if not _carries_message(entry):
            continue
        total += estimate_message_tokens(entry_to_message(entry))
        if total >= keep_recent_tokens:
            earlier = [c for c in cuts if c <= i]
            cut = earlier[-1] if earlier else cuts[0]
            break
    turn_start = find_turn_start(entries, cut, start_index)
    split = turn_start != -1 and turn_start < cut
    first_kept = cut
    while first_kept > start_index:
        previous = entries[first_kept - 1]
        if _carries_message(previous) or isinstance(previous, CompactionEntry):
            break
        first_kept -= 1
    return CutPoint(first_kept, turn_start if split else -1, split)


# ---------------------------------------------------------------------------- preparation


@record
class CompactionPreparation:
    """Everything one compaction needs; what ``session_before_compact`` handlers receive."""

    first_kept_entry_id: str
    messages_to_summarize: list[Any]
    turn_prefix_messages: list[Any]
    is_split_turn: bool
    tokens_before: int
    previous_summary: str | None
    file_ops: FileOperations
    settings: CompactionSettings
    # Index in the branch of the first kept entry (for handlers that slice the branch).
    first_kept_entry_index: int = 0


def _live_start(entries: list[Any], compaction_index: int) -> int:
    """First entry still in the context after the compaction at ``compaction_index``."""
    if compaction_index < 0:
        return 0
    kept_id = entries[compaction_index].first_kept_entry_id
    for i in range(compaction_index):
        if entries[i].id == kept_id:
            return i
    return compaction_index + 1


def prepare_compaction(branch_entries: list[Any], settings: CompactionSettings) -> CompactionPreparation | None:
    """Plan a compaction of the branch (root -> leaf); ``None`` when there is nothing to do."""
    entries = list(branch_entries)
    if not entries or isinstance(entries[-1], CompactionEntry):
        return None
    prev_index = next((i for i in range(len(entries) - 1, -1, -1) if isinstance(entries[i], CompactionEntry)), -1)
    previous = entries[prev_index] if prev_index >= 0 else None
    start = _live_start(entries, prev_index)

    context = _messages(entries, start, len(entries))
    if previous is not None:
        context.insert(0, entry_to_message(previous))
    tokens_before = estimate_context_tokens(context).tokens

    cut = find_cut_point(entries, start, len(entries), settings.keep_recent_tokens)
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_entry_index
    to_summarize = _messages(entries, start, history_end)
    prefix = _messages(entries, cut.turn_start_index, cut.first_kept_entry_index) if cut.is_split_turn else []
    if not to_summarize and not prefix:
        return None

    ops = FileOperations()
    if previous is not None:
        add_previous_file_lists(previous.details, previous.summary, ops)
    add_file_operations(to_summarize, ops)
    add_file_operations(prefix, ops)
    return CompactionPreparation(
        first_kept_entry_id=entries[cut.first_kept_entry_index].id,
        messages_to_summarize=to_summarize,
        turn_prefix_messages=prefix,
        is_split_turn=cut.is_split_turn,
        tokens_before=tokens_before,
        previous_summary=previous.summary if previous is not None else None,
        file_ops=ops,
        settings=settings,
        first_kept_entry_index=cut.first_kept_entry_index,
    )


# ---------------------------------------------------------------------------- the summary


@record
class CompactionResult:
    summary: str
    first_kept_entry_id: str
    tokens_before: int
    # {"readFiles": [...], "modifiedFiles": [...]}
    details: object = None
    # Messages too large for any summary request (the last resort: left out, and said).
    dropped_messages: int = 0
    # Summary requests made (more than one when the history was larger than the window).
    requests: int = 1


T = TypeVar("T")


async def _first_error(*coroutines: Coroutine[Any, Any, T]) -> list[T]:
    """Run concurrently; on a failure cancel the rest and raise that failure itself."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(c) for c in coroutines]
    except BaseExceptionGroup as group_error:
        first = group_error.exceptions[0]
        for exc in group_error.exceptions:
            if isinstance(exc, CompactionError) and not exc.aborted:
                first = exc
                break
        raise first from None
    return [t.result() for t in tasks]


def summary_output_tokens(model: Model, wanted: int) -> int:
    """Output tokens allowed for a summary: what was asked, within the model's limits, and at
    most a quarter of its window (a small window must still hold the summary and the rest)."""
    limit = wanted
    if model.context_window > 0:
        limit = min(limit, model.context_window // 4)
    if model.max_tokens:
        limit = min(limit, model.max_tokens)
    return max(256, limit)


async def compact(
    preparation: CompactionPreparation,
    model: Model,
    *,
    api_key: str | None = None,
    custom_instructions: str | None = None,
    signal: AbortSignal | None = None,
    stream_options: StreamOptions | dict[str, Any] | None = None,
) -> CompactionResult:
    """Ask ``model`` for the summary of ``preparation``; raises :class:`CompactionError`.

    History larger than one request can carry is summarised in pieces that fit the model's
    window and merged (:mod:`.summarize_pieces`)."""
    reserve = preparation.settings.reserve_tokens
    common: dict[str, Any] = {"api_key": api_key, "signal": signal, "stream_options": stream_options}
    previous = preparation.previous_summary
    extra = (f"\n\nAdditional instructions from the user for this summary:\n{custom_instructions.strip()}"
             if custom_instructions and custom_instructions.strip() else "")
    calls = []
    if preparation.messages_to_summarize:
        out = summary_output_tokens(model, int(reserve * 0.8))
        budget = _budget(model, out, len(previous or ""))

        async def ask_history(prompt: str) -> str:
            return await ask_summary(model, prompt, max_tokens=out, **common)

        calls.append(summarize_in_pieces(
            serialize_pieces(preparation.messages_to_summarize), budget, ask_history,
            first_prompt=lambda text: build_summary_prompt_text(text, previous, custom_instructions),
            previous_summary=strip_file_lists(previous) if previous else None,
            final_format=SUMMARY_FORMAT + extra,
        ))
    if preparation.is_split_turn and preparation.turn_prefix_messages:
        prefix_out = summary_output_tokens(model, int(reserve * 0.5))

        async def ask_prefix(prompt: str) -> str:
            return await ask_summary(model, prompt, max_tokens=prefix_out, **common)

        calls.append(summarize_in_pieces(
            serialize_pieces(preparation.turn_prefix_messages), _budget(model, prefix_out, 0), ask_prefix,
            first_prompt=lambda text: f"<conversation>\n{text}\n</conversation>\n\n{TURN_PREFIX_PROMPT}",
            final_format=TURN_PREFIX_PROMPT,
        ))
    if not calls:
        raise CompactionError("Nothing to compact: no messages to summarise.")
    answers: list[PieceSummary] = await _first_error(*calls)
    dropped = sum(answer.dropped for answer in answers)
    requests = sum(answer.requests for answer in answers)

    if preparation.messages_to_summarize:
        history = answers.pop(0).text
    else:
        history = strip_file_lists(previous) if previous else "(No earlier history.)"
    summary = history
    if answers:
        summary = f"{history}\n\n---\n\n{SPLIT_TURN_HEADING}\n\n{answers[0].text}"
    if dropped:
        summary += (f"\n\n({dropped} older message{'s were' if dropped != 1 else ' was'} too large to summarise "
                    "and left out of this summary.)")
    read_files, modified_files = preparation.file_ops.file_lists()
    summary += format_file_lists(read_files, modified_files)
    return CompactionResult(
        summary=summary,
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        details={"readFiles": read_files, "modifiedFiles": modified_files},
        dropped_messages=dropped,
        requests=requests,
    )


def _budget(model: Model, output_tokens: int, taken_chars: int) -> int:
    """Characters of transcript one summary request may carry (``taken_chars`` already used
    by a previous summary it carries too); unlimited when the window is not known."""
    budget = input_budget_chars(model.context_window, output_tokens)
    if budget is None:
        return 1 << 62
    return max(MIN_CHUNK_CHARS, budget - taken_chars)


# ---------------------------------------------------------------------------- cool-down


@record
class CompactionBreaker:
    """Stops automatic compaction for a while after repeated failures instead of looping.

    ``max_failures`` consecutive failures open the breaker for ``cooldown_seconds``; once
    that passes one more try is allowed, and a failure then opens it again at once for twice
    as long (up to ``max_cooldown_seconds``). A success closes it. Manual ``/compact`` does
    not ask the breaker, and its failures during a cool-down do not lengthen it.
    """

    max_failures: int = 3
    cooldown_seconds: float = 300.0
    max_cooldown_seconds: float = 3600.0
    clock: Callable[[], float] = time.monotonic
    failures: int = 0
    trips: int = 0
    open_until: float | None = field(default=None)

    def _now(self, now: float | None) -> float:
        return self.clock() if now is None else now

    def allowed(self, now: float | None = None) -> bool:
        return self.open_until is None or self._now(now) >= self.open_until

    def remaining(self, now: float | None = None) -> float:
        """Seconds until automatic compaction may run again (0 when it may now)."""
        if self.open_until is None:
            return 0.0
        return max(0.0, self.open_until - self._now(now))

    def record_failure(self, now: float | None = None) -> None:
        at = self._now(now)
        if self.open_until is not None and at < self.open_until:
            return  # already paused (a manual /compact failed): keep the running cool-down
        self.failures += 1
        if self.failures >= self.max_failures or self.trips > 0:
            self.trips += 1
            self.failures = 0
            wait = min(self.cooldown_seconds * 2 ** (self.trips - 1), self.max_cooldown_seconds)
            self.open_until = at + wait

    def record_success(self) -> None:
        self.failures = 0
        self.trips = 0
        self.open_until = None


__all__ = [
    "CompactionBreaker",
    "CompactionError",
    "CompactionPreparation",
    "CompactionResult",
    "CompactionSettings",
    "CutPoint",
    "FileOperations",
    "compact",
    "entry_to_message",
    "find_cut_point",
    "find_turn_start",
    "prepare_compaction",
    "should_compact",
]
