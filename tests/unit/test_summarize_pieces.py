"""Summaries of history larger than the window: packing, halving on overflow, merging, and
the last resort (a message too large for any request is left out and counted).

The model is scripted: ``ask`` refuses prompts over its window the way providers do."""

from __future__ import annotations

import pytest

from wolli.session.summarize import CompactionError
from wolli.session.summarize_pieces import MIN_CHUNK_CHARS, pack, summarize_in_pieces


class Model:
    """Answers with a short summary naming what it read; refuses prompts over ``window``."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.prompts: list[str] = []

    async def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if len(prompt) > self.window:
            raise CompactionError(f"Summarization failed: 400 This model's maximum context length is {self.window} tokens")
        return f"summary of {prompt.count('[msg')} messages"


def pieces(count: int, size: int) -> list[str]:
    return [f"[msg {i}] " + "x" * (size - 10) for i in range(count)]


def test_pack_keeps_order_and_cuts_a_piece_larger_than_the_budget():
    chunks = pack(["a" * 40, "b" * 40, "c" * 300, "d" * 10], 100)
    assert [len(chunk) for chunk in chunks] == [2, 2]
    assert chunks[1][0].startswith("c" * 40) and "more characters left out" in chunks[1][0]
    assert all(sum(len(p) + 2 for p in chunk) <= 100 for chunk in chunks)


async def test_what_fits_one_request_is_one_request_with_the_usual_prompt():
    model = Model(window=100_000)
    result = await summarize_in_pieces(pieces(10, 100), 50_000, model, first_prompt=lambda text: "FIRST " + text)
    assert result.requests == 1 and result.dropped == 0 and model.prompts[0].startswith("FIRST ")


async def test_a_history_many_times_the_budget_is_summarised_in_parts_then_merged():
    model = Model(window=6_000)
    result = await summarize_in_pieces(pieces(100, 1000), 5_000, model, first_prompt=lambda text: text,
                                       previous_summary="the old summary")
    assert all(len(prompt) <= 6_000 for prompt in model.prompts)
    parts = [p for p in model.prompts if "part " in p and " of " in p]
    assert len(parts) >= 20
    merges = [p for p in model.prompts if "<summary part=" in p]
    assert merges and "the old summary" in merges[0]  # the previous summary comes first
    assert result.text.startswith("summary of") and result.dropped == 0
    assert result.requests == len(model.prompts)


async def test_a_request_refused_as_too_long_is_split_and_tried_again():
    model = Model(window=3_000)  # the estimate says 5,000 fits; the model disagrees
    result = await summarize_in_pieces(pieces(8, 1000), 5_000, model, first_prompt=lambda text: text)
    assert result.dropped == 0
    assert any(len(p) > 3_000 for p in model.prompts)  # the refused tries
    assert result.text.startswith("summary of")


async def test_a_message_no_request_can_hold_is_left_out_and_counted():
    model = Model(window=MIN_CHUNK_CHARS // 2)  # not even the smallest piece fits
    with pytest.raises(CompactionError, match="Nothing could be summarised"):
        await summarize_in_pieces(pieces(3, 5000), 10_000, model, first_prompt=lambda text: text)
    model = Model(window=MIN_CHUNK_CHARS + 1200)
    small = ["[msg short] hello"] * 3
    result = await summarize_in_pieces([*small, "[msg huge] " + "y" * 50_000], 20_000, model,
                                       first_prompt=lambda text: text)
    assert result.dropped == 1 and result.text.startswith("summary of")


async def test_other_failures_are_not_taken_for_overflow():
    async def broken(prompt: str) -> str:
        raise CompactionError("Summarization failed: 401 invalid api key")

    with pytest.raises(CompactionError, match="401"):
        await summarize_in_pieces(pieces(3, 100), 10_000, broken, first_prompt=lambda text: text)
