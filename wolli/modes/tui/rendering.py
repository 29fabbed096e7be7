"""What an extension renderer may return, made displayable, and safe to draw.

Renderers (``render_call``, ``render_result``, message renderers, widget lines, footer
factories) return a string (plain, or styled with ``ui.theme`` ANSI codes), a list of lines, a
Rich renderable, Textual ``Content`` or a Textual widget; ``None`` means "use the built-in
rendering". Strings are shown literally (``[draft]`` stays ``[draft]``: no markup).

A Rich renderable an extension built is drawn through :class:`Guarded`: it is rendered in
full before any of it reaches the screen, so one that raises while it is drawn (at paint time,
long after the renderer returned) becomes one error line instead of ending the app.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, cast

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text

if TYPE_CHECKING:
    from textual.widget import Widget

ERROR_STYLE = "red"


def literal(value: str) -> Text:
    """A string from an extension, a tool or a model as text: ANSI colours kept, no markup."""
    return Text.from_ansi(value) if "\x1b[" in value else Text(value)


def as_renderable(value: object, on_error: Callable[[BaseException], Text] | None = None) -> RenderableType | None:
    """``value`` as something a Static can show (None stays None: the built-in look)."""
    if value is None:
        return None
    if isinstance(value, str):
        return literal(value)
    if isinstance(value, Text):
        return value
    if isinstance(value, list | tuple):
        return Text("\n").join(t if isinstance(t, Text) else literal(str(t)) for t in value)
    if _is_content(value):
        return cast(RenderableType, value)
    if hasattr(value, "__rich_console__") or hasattr(value, "__rich__"):
        return Guarded(cast(RenderableType, value), on_error)
    return Text(str(value))


def _is_content(value: object) -> bool:
    try:
        from textual.content import Content
    except ImportError:  # pragma: no cover
        return False
    return isinstance(value, Content)


class Guarded:
    """A foreign renderable drawn so that its failure is one line of text, not a crash."""

    def __init__(self, inner: RenderableType, on_error: Callable[[BaseException], Text] | None = None) -> None:
        self.inner = inner
        self.on_error = on_error
        self.failed: Text | None = None

    def _error(self, exc: BaseException) -> Text:
        if self.failed is None:
            self.failed = self.on_error(exc) if self.on_error is not None else Text(
                f"failed to draw: {type(exc).__name__}: {exc}", style=ERROR_STYLE)
        return self.failed

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.failed is not None:
            yield self.failed
            return
        try:
            lines = console.render_lines(self.inner, options, pad=False, new_lines=False)
        except Exception as exc:  # drawn later than it was made: the renderer's try is long gone
            yield self._error(exc)
            return
        for number, line in enumerate(lines):
            if number:
                yield Segment.line()
            yield from line

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        if self.failed is not None:
            return Measurement.get(console, options, self.failed)
        try:
            return Measurement.get(console, options, self.inner)
        except Exception:
            return Measurement(1, options.max_width)


def guard_widget(widget: Widget, on_error: Callable[[BaseException], Text]) -> Widget:
    """A Textual widget an extension made, whose building (``compose``) and drawing
    (``render``, or ``render_line`` for a line-API widget) show one error line instead of
    ending the app when they raise."""
    from textual.strip import Strip
    from textual.widgets import Static

    compose = widget.compose
    render = widget.render
    render_line = widget.render_line
    failed: list[Text] = []

    def error(exc: BaseException) -> Text:
        if not failed:
            failed.append(on_error(exc))
        return failed[0]

    def safe_render() -> object:
        try:
            return render()
        except Exception as exc:
            return error(exc)

    def safe_render_line(y: int) -> Strip:
        try:
            return render_line(y)  # type: ignore[no-any-return]
        except Exception as exc:
            if y:
                return Strip.blank(widget.size.width)
            line = error(exc)
            return Strip(list(line.render(widget.app.console)), line.cell_len).crop_extend(0, widget.size.width, None)

    def safe_compose() -> Iterator[Widget]:
        # Textual iterates compose() inside its compose context; taking every child in the
        # first step keeps that context and lets a failure anywhere replace all of them.
        try:
            children = list(compose())
        except Exception as exc:
            children = [Static(error(exc), classes="widget-error")]
        yield from children

    widget.compose = safe_compose  # type: ignore[method-assign]
    widget.render = safe_render  # type: ignore[method-assign,assignment]
    widget.render_line = safe_render_line  # type: ignore[method-assign]
    return widget
