"""Summaries of history larger than the model's window: in pieces that fit, then merged.

A session made with a 1M-token model and continued with a 128k one holds far more history
than one summary request can carry, and the request failed with "maximum context length"
on every ``-c`` after. Here the transcript (one text per message) is packed into chunks
that fit the window, each chunk is summarised on its own (a few at a time), and the
partial summaries are merged, in groups that fit, until one summary is left.

Token counts are the chars/4 estimate; a request the model still refuses as too long is
split in two and tried again, down to a single message cut short. A message that fits no
request at all is the last resort: it is left out, and the count is reported (the summary
says so, and the session shows a notice).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ..base.records import record
from .summarize import SUMMARY_FORMAT, CompactionError
from .tokens import CHARS_PER_TOKEN

# What the instructions, the system prompt and the XML around a chunk cost.
PROMPT_OVERHEAD_TOKENS = 2_000
# A chunk never shrinks below this when its request is refused as too long: past it the
# message is left out instead (the model cannot read even that much).
MIN_CHUNK_CHARS = 2_000
# Chunks summarised at the same time (a 15-window history is ~40 requests).
PARALLEL = 4

MERGE_INTRO = (
    "The summaries above describe consecutive parts of the older history of one coding "
    "session, oldest first. Merge them into a single summary from which another assistant "
    "can carry on the work: keep what still holds, let later parts override earlier ones, "
    "and drop what later parts made obsolete.\n\n"
)
PART_NOTE = "This transcript is part {index} of {count} of the older history, oldest first; summarise this part."

Ask = Callable[[str], Awaitable[str]]


@record
class PieceSummary:
    text: str
    requests: int = 0
    dropped: int = 0  # messages left out: not even a request of their own fitted


def input_budget_chars(context_window: int, output_tokens: int) -> int | None:
    """Characters of transcript one summary request may carry (None: no known window)."""
    if context_window <= 0:
        return None
    tokens = context_window - output_tokens - PROMPT_OVERHEAD_TOKENS
    return max(MIN_CHUNK_CHARS, tokens * CHARS_PER_TOKEN)


def pack(pieces: list[str], budget: int) -> list[list[str]]:
    """Consecutive pieces in chunks of at most ``budget`` characters; a piece larger than
    that alone is cut to fit (with a mark saying how much was left out)."""
    chunks: list[list[str]] = []
    current: list[str] = []
    size = 0
    for piece in pieces:
        if len(piece) > budget:
            piece = piece[: budget - 60] + f"\n[... {len(piece) - budget + 60} more characters left out]"
        if current and size + len(piece) + 2 > budget:
            chunks.append(current)
            current, size = [], 0
        current.append(piece)
        size += len(piece) + 2
    if current:
        chunks.append(current)
    return chunks


def _is_overflow(error: CompactionError) -> bool:
    from ..ai.overflow import is_context_overflow_text

    return is_context_overflow_text(str(error))


class _Run:
    def __init__(self, ask: Ask, budget: int) -> None:
        self.ask = ask
        self.budget = budget
        self.requests = 0
        self.dropped = 0
        self.gate = asyncio.Semaphore(PARALLEL)

    async def call(self, prompt: str) -> str:
        async with self.gate:
            self.requests += 1
            return await self.ask(prompt)

    async def chunk(self, pieces: list[str], make_prompt: Callable[[str], str]) -> str | None:
        """One chunk's summary; a chunk refused as too long is halved and tried again."""
        text = "\n\n".join(pieces)
        try:
            return await self.call(make_prompt(text))
        except CompactionError as exc:
            if not _is_overflow(exc):
                raise
        if len(pieces) > 1:
            middle = len(pieces) // 2
            halves = [await self.chunk(part, make_prompt) for part in (pieces[:middle], pieces[middle:])]
            found = [h for h in halves if h]
            return "\n\n".join(found) if found else None
        if len(text) // 2 >= MIN_CHUNK_CHARS:
            cut = text[: len(text) // 2] + f"\n[... {len(text) - len(text) // 2} more characters left out]"
            return await self.chunk([cut], make_prompt)
        self.dropped += 1  # not even a small part of this message fits: the last resort
        return None


async def summarize_in_pieces(
    pieces: list[str],
    budget: int,
    ask: Ask,
    *,
    first_prompt: Callable[[str], str],
    previous_summary: str | None = None,
    final_format: str = SUMMARY_FORMAT,
) -> PieceSummary:
    """The summary of ``pieces`` (one transcript text per message) in requests of at most
    ``budget`` characters. When everything fits one request, ``first_prompt(transcript)``
    is that request (as before). Otherwise each chunk is summarised as a part and the parts
    are merged, ``previous_summary`` first, into ``final_format``."""
    run = _Run(ask, budget)
    chunks = pack(pieces, budget)
    if len(chunks) == 1:
        try:
            return PieceSummary(await run.call(first_prompt("\n\n".join(chunks[0]))), run.requests)
        except CompactionError as exc:
            if not _is_overflow(exc):
                raise  # else the estimate fell short: go on in parts, which halve as needed
    count = len(chunks)

    def part_prompt(index: int) -> Callable[[str], str]:
        note = PART_NOTE.format(index=index + 1, count=count)
        return lambda text: f"<conversation>\n{text}\n</conversation>\n\n{note}\n\n{final_format}"

    results = await asyncio.gather(*(run.chunk(chunk, part_prompt(i)) for i, chunk in enumerate(chunks)))
    partials = [r for r in results if r]
    if previous_summary:
        partials.insert(0, previous_summary)
    if not partials:
        raise CompactionError("Nothing could be summarised: every message is larger than the model can read.")
    merged = partials[0] if len(partials) == 1 else await _merge(run, partials, MERGE_INTRO + final_format)
    return PieceSummary(merged, run.requests, run.dropped)


async def _merge(run: _Run, summaries: list[str], instructions: str) -> str:
    """One summary of ``summaries`` (oldest first), merging groups that fit until one is left."""
    while True:
        parts = [f'<summary part="{i + 1}">\n{text}\n</summary>' for i, text in enumerate(summaries)]
        groups = pack(parts, run.budget)
        results = await asyncio.gather(*(run.chunk(group, lambda text: f"{text}\n\n{instructions}")
                                          for group in groups))
        merged = [r for r in results if r]
        if len(merged) == 1:
            return merged[0]
        if not merged or len(merged) >= len(summaries):  # no progress: it cannot get smaller
            raise CompactionError("The partial summaries could not be merged: too large for the model.")
        summaries = merged
