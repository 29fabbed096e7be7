"""What the app's helpers see of the app: the :class:`TuiApp` protocol.

The surface, the ``ctx.ui`` bridge, the controller, the adapter and the smaller helpers each
get the running :class:`~.app.WolliApp`, but cannot import it (the app imports them). They
are typed against this protocol instead, so a renamed widget or a misspelt member is a type
error where the app hands itself over. Members that only one helper needs on top of these
(``app.surface``, ``app.ui`` ...) are added by that helper's own protocol, which extends this
one; the classes they name import this module, so this one names none of them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Iterable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.text import Text
    from textual.containers import Vertical
    from textual.notifications import SeverityLevel
    from textual.screen import Screen
    from textual.timer import Timer
    from textual.widget import Widget
    from textual.worker import Worker
    from textual.worker_manager import WorkerManager

    from ...config.themes import ThemeSpec
    from ...runtime.startup.request import StartupRequest
    from ..interactive.client_runtime import ClientRuntime
    from ..interactive.highlighting import AnsiTheme
    from ..interactive.prompt_history import PromptHistory
    from .widgets.extension_slots import ExtensionSlot
    from .widgets.footer_bar import FooterBar
    from .widgets.prompt_editor import PromptEditor
    from .widgets.queued_messages import QueuedMessages
    from .widgets.transcript import Transcript
    from .widgets.working_row import WorkingRow

W = TypeVar("W", bound="Widget")
R = TypeVar("R")


class TuiApp(Protocol):
    """The members of :class:`~.app.WolliApp` (and of Textual's ``App``) the helpers use."""

    request: StartupRequest
    editor: PromptEditor  # the built-in editor or an extension's CustomEditor (a subclass)
    custom_widget: Widget | None
    theme_spec: ThemeSpec
    ui_theme: AnsiTheme
    tools_expanded: bool
    thinking_visible: bool
    theme: str
    title: str

    @property
    def controller(self) -> ClientRuntime: ...
    @property
    def history(self) -> PromptHistory: ...
    @property
    def themes(self) -> dict[str, ThemeSpec]: ...
    @property
    def transcript(self) -> Transcript: ...
    @property
    def working(self) -> WorkingRow: ...
    @property
    def queued(self) -> QueuedMessages: ...
    @property
    def slot_above(self) -> ExtensionSlot: ...
    @property
    def slot_below(self) -> ExtensionSlot: ...
    @property
    def editor_area(self) -> Vertical: ...
    @property
    def footer(self) -> FooterBar: ...
    @property
    def footer_area(self) -> Vertical: ...

    # Wolli's own
    def add_notice(self, text: str, level: str = "info") -> None: ...
    def add_info(self, title: str, text: str) -> None: ...
    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None: ...
    def refresh_footer(self) -> None: ...
    def reload_transcript(self) -> None: ...
    def extension_failed(self, owner: str, what: str, exc: BaseException) -> Text: ...
    def register_theme_spec(self, spec: ThemeSpec) -> None: ...
    def set_thinking_visible(self, visible: bool) -> None: ...
    def run_slash_command(self, text: str) -> None: ...
    async def check_shortcuts(self) -> None: ...

    # Textual's App
    @property
    def console(self) -> Console: ...
    def run_worker(self, work: Callable[[], object] | Coroutine[Any, Any, object], name: str | None = "",
                   group: str = "default", description: str = "", exit_on_error: bool = True,
                   start: bool = True, exclusive: bool = False) -> Worker[Any]: ...
    def set_timer(self, delay: float, callback: Callable[[], object] | None = None) -> Timer: ...
    def call_from_thread(self, callback: Callable[..., R | Awaitable[R]], *args: object, **kwargs: object) -> R: ...
    def push_screen(self, screen: Screen[Any], callback: Callable[[Any], None] | None = None) -> object: ...
    def exit(self, result: int | None = None, return_code: int = 0, message: RenderableType | None = None) -> None: ...
    def suspend(self) -> AbstractContextManager[None]: ...
    def copy_to_clipboard(self, text: str) -> None: ...
    async def run_action(self, action: str) -> bool: ...
    def query(self, selector: type[W]) -> Iterable[W]: ...
    @property
    def workers(self) -> WorkerManager: ...
