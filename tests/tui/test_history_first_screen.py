"""A resumed session's last messages reach the screen in one layout.

Each layout of the screen is recorded once the history's rows are mounted: whether every
answer row mounted so far has its markdown blocks, the width its paragraphs were wrapped at,
and where the transcript is scrolled. Before, the rows were laid out and drawn empty first
(an answer's markdown was parsed in a thread after its row mounted, then mounted into it),
then again with their text, top-aligned at the full width, then a third time a column
narrower, scrolled to the end, once the layout had found that the rows overflow.
"""

from __future__ import annotations

from functools import partial

from textual.screen import Screen
from textual.widgets import Static
from textual.widgets._markdown import MarkdownBlock, MarkdownParagraph

from tests.support.long_session import write_long_session
from tests.support.openai_chat import write_models_json
from tests.support.waiting import wait_until
from wolli.modes.tui.widgets.assistant_message import AssistantMessageView
from wolli.modes.tui.widgets.markdown_view import ThemedMarkdown

from .helpers import running


def last_answer(app) -> str:
    views = app.query(AssistantMessageView)
    return views.last().markdown_text if views else ""


async def test_the_last_messages_are_drawn_whole_in_the_first_layout(make_app, project, wolli_home, loopback,
                                                                     monkeypatch):
    write_models_json(wolli_home, loopback.url + "/v1")
    path = write_long_session(project.parent / "long.jsonl", str(project), 60)
    layouts: list[dict[str, object]] = []
    mounts: list[bool] = []
    original_layout = Screen._refresh_layout
    original_mount = AssistantMessageView.on_mount

    def recorded(screen, *args, **kwargs):  # type: ignore[no-untyped-def]
        app = screen.app
        transcript = app.transcript
        views = [view for view in app.query(AssistantMessageView) if view.is_mounted]
        before = {"scrollbar": transcript.show_vertical_scrollbar, "anchored": transcript.is_anchored}
        result = original_layout(screen, *args, **kwargs)
        if views:
            layouts.append({
                **before,
                "whole": all(view.query(MarkdownBlock) for view in views),
                "widths": {p.size.width for p in app.query(MarkdownParagraph) if p.size.width},
                "at_end": transcript.max_scroll_y > 0 and transcript.scroll_y >= transcript.max_scroll_y,
            })
        return result

    def mounted(view):  # type: ignore[no-untyped-def]
        mounts.append(bool(view.query(MarkdownBlock)))  # its blocks came with it, parsed
        return original_mount(view)

    monkeypatch.setattr(Screen, "_refresh_layout", recorded)
    monkeypatch.setattr(AssistantMessageView, "on_mount", mounted)
    app = make_app(session=str(path), model="local/local-model")
    async with running(app, (100, 20)):
        await wait_until(lambda: "LAST-ANSWER" in last_answer(app) and app.transcript.rows_drawn(), 10,
                         "the last answer drawn")
        assert app.transcript.hidden_count  # more history above: the rows overflow the screen
        assert mounts and all(mounts), "an answer row was mounted before its markdown"
        assert layouts, "no layout with the history's rows"
        first = layouts[0]
        assert first["whole"], "the rows were laid out before their markdown was mounted"
        # the layout that finds the rows overflowing does not have to be done again a column narrower
        assert first["scrollbar"] and first["anchored"], f"laid out first without the scrollbar: {first}"
        assert first["at_end"], "the first layout of the rows did not show the end of the history"
        widths = set().union(*(layout["widths"] for layout in layouts))
        assert len(widths) == 1, f"the answers were wrapped at several widths: {sorted(widths)}"


async def test_a_finished_text_mounts_with_its_blocks(make_app):
    app = make_app()
    async with running(app, (80, 24)):
        view = ThemedMarkdown("First paragraph.\n\n```python\nx = 1\n```\n\n- one\n- two")
        await app.transcript.mount(view)
        # parsed as it was composed: its blocks are there as soon as it is mounted
        assert [type(block).__name__ for block in view.children] == [
            "MarkdownParagraph", "ThemedFence", "MarkdownBulletList"]
        assert view.source.endswith("- two")
        view.append_text("\n\nMore.")  # a finished text given more is parsed again, whole
        await wait_until(lambda: len(view.children) == 4, 5, "the appended paragraph")
        assert view.source.endswith("More.")


def rows(count: int, lines: int = 1) -> list:
    return [partial(Static, "\n".join(f"row {i}" for _ in range(lines))) for i in range(count)]


async def test_history_with_rows_above_the_window_is_laid_out_from_its_end(make_app):
    app = make_app()
    async with running(app, (80, 24)) as pilot:
        transcript = app.transcript
        transcript.add_lazy(rows(60, lines=3))
        # before any layout: shown from the end, its scrollbar taken into account
        assert transcript.is_anchored and transcript.show_vertical_scrollbar
        await wait_until(lambda: transcript.rows_drawn(), 5, "the rows drawn")
        await pilot.pause()
        assert transcript.max_scroll_y > 0 and transcript.scroll_y >= transcript.max_scroll_y
        assert transcript.show_vertical_scrollbar and transcript.hidden_count


async def test_history_that_fits_the_screen_after_all_sits_at_the_top(make_app):
    app = make_app(no_session=True)
    async with running(app, (80, 40)) as pilot:
        transcript = app.transcript
        transcript.clear_all()
        transcript.add_lazy(rows(12))  # two rows above the window, all twelve fit
        await wait_until(lambda: not transcript.hidden_count and transcript.rows_drawn(), 5, "every row mounted")
        await pilot.pause()
        await wait_until(lambda: not transcript.is_anchored, 5, "the anchor let go")
        assert transcript.max_scroll_y == 0 and transcript.scroll_y == 0
        assert not transcript.show_vertical_scrollbar
        assert transcript.mounted[0].region.y <= transcript.region.y + 1  # at the top, not pushed down
