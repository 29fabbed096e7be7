"""``ctx.ui`` inside an editor: questions become ``session/request_permission``.

ACP has one question form, a tool call with options, so:

- the permission layer's question (docs/permissions.md) is asked with the call's kind,
  title, paths and input, and the options allow once, allow always, reject once, reject
  always. "Reject once" refuses that call and the turn goes on (the model is told);
  a cancelled question (the prompt was cancelled) refuses it and ends the turn;
- ``confirm`` offers Yes/No, ``select`` one option per choice and Cancel;
- ``input`` and ``editor`` have no form in ACP: they answer ``None`` at once, as in the
  other modes where nobody can type (``has_ui`` is true because the questions above do
  reach a person; an extension that needs free text checks ``ctx.mode == "acp"``);
- ``notify`` becomes text of the agent's message in the turn it happens in (outside a turn,
  a line on stderr, which editors keep in their agent log); statuses, widgets, titles and themes have no place
  in an editor's thread and do nothing (as in print mode).

Which session asks is known from the task: a prompt runs with its session in
:data:`CURRENT`, and everything the turn calls (tools, hooks, commands) inherits it.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, cast

from ...ai.abort import AbortSignal
from ...extensions.ui import NullUI, option_label, option_value
from ...permissions.prompt import (
    ALLOW_ALWAYS,
    ALLOW_ONCE,
    REJECT_ALWAYS,
    REJECT_WITH_MESSAGE,
    PermissionAnswer,
    PermissionRequest,
)
from ..interactive.commands.front import WithoutPickers
from .sdk import Client, ToolCallContent, schema
from .updates import text_content

if TYPE_CHECKING:
    from ...ai.types import Model


Choice = TypeVar("Choice")

class AcpSession(Protocol):
    """What questions and notices need of the session they concern (``session.AcpSession``)."""

    id: str
    client: Client

    def say(self, text: str) -> None: ...

    def proposed_diff(self, tool_name: str, args: dict[str, Any]) -> schema.FileEditToolCallContent | None: ...

    async def flush(self) -> None:
        """Until the updates queued so far reached the client (the tool call a question is about)."""
        ...


OptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
CURRENT: contextvars.ContextVar[AcpSession | None] = contextvars.ContextVar("wolli_acp_session", default=None)

_PERMISSION_OPTIONS: tuple[tuple[str, str, OptionKind], ...] = (
    (ALLOW_ONCE, "Allow once", "allow_once"),
    (ALLOW_ALWAYS, "Allow always", "allow_always"),
    ("reject_once", "Reject", "reject_once"),
    (REJECT_ALWAYS, "Reject always", "reject_always"),
)


class AcpUI(NullUI):
    has_ui = True

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None  # the connection's, set once serving

    def session(self) -> AcpSession | None:
        """The session of the running turn; None outside turns (a ``session_start`` handler,
        a timer): an editor shows an agent's messages inside turns only."""
        return CURRENT.get()

    async def _ask(self, tool_call: schema.ToolCallUpdate, options: list[schema.PermissionOption],
                   signal: AbortSignal | None, timeout: float | None) -> str | None:
        """The chosen option id, or None (cancelled, timed out, aborted, nobody there)."""
        running = asyncio.get_running_loop()
        if self.loop is not None and running is not self.loop:  # a tool's worker thread asks
            future = asyncio.run_coroutine_threadsafe(
                self._ask_on_loop(self.session(), tool_call, options, signal, timeout), self.loop)
            return await asyncio.wrap_future(future)
        return await self._ask_on_loop(self.session(), tool_call, options, signal, timeout)

    async def _ask_on_loop(self, session: AcpSession | None, tool_call: schema.ToolCallUpdate,
                           options: list[schema.PermissionOption], signal: AbortSignal | None,
                           timeout: float | None) -> str | None:
        if session is None or (signal is not None and getattr(signal, "aborted", False)):
            return None
        await session.flush()
        asking = asyncio.ensure_future(session.client.request_permission(
            session_id=session.id, tool_call=tool_call, options=options))
        remove = _on_abort(signal, asking)
        try:
            answer = await asyncio.wait_for(asking, timeout if timeout and timeout > 0 else None)
        except (TimeoutError, asyncio.CancelledError, ConnectionError):
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            return None
        except Exception as exc:  # an error answer from the client: treated as no answer
            print(f"wolli: session/request_permission failed: {exc}", file=sys.stderr, flush=True)
            return None
        finally:
            remove()
        outcome = answer.outcome
        if getattr(outcome, "outcome", None) != "selected":
            return None
        if outcome.option_id not in {option.option_id for option in options}:  # the editor's bug: say so
            session.say(f"The editor answered {tool_call.title!r} with {outcome.option_id!r}, which was not one "
                        "of the options offered; treated as cancelled.")
            return None
        return str(outcome.option_id)

    async def ask_permission(self, request: PermissionRequest, *, signal: AbortSignal | None = None) -> PermissionAnswer:
        call = request.tool_call
        session = self.session()
        content: list[ToolCallContent] = [text_content(f"{call.detail}\n\n({request.reason})")]
        proposed = session.proposed_diff(call.tool_name, call.raw_input) if session is not None else None
        if proposed is not None:
            content.insert(0, proposed)
        tool_call = schema.ToolCallUpdate(
            tool_call_id=call.tool_call_id, title=call.title, kind=call.kind, status="pending",
            raw_input=call.raw_input, content=content,
            locations=[schema.ToolCallLocation(path=p) for p in call.locations] or None)
        options = [schema.PermissionOption(option_id=i, name=n, kind=k) for i, n, k in _PERMISSION_OPTIONS]
        chosen = await self._ask(tool_call, options, signal, None)
        rules = tuple(request.suggested_rules)
        if chosen == ALLOW_ONCE:
            return PermissionAnswer(ALLOW_ONCE, "allow_once")
        if chosen == ALLOW_ALWAYS:
            return PermissionAnswer(ALLOW_ALWAYS, "allow_always", rules)
        if chosen == REJECT_ALWAYS:
            return PermissionAnswer(REJECT_ALWAYS, "reject_always", rules)
        if chosen == "reject_once":  # refused, and the turn goes on: the model hears why
            return PermissionAnswer(REJECT_WITH_MESSAGE, "reject_once")
        return PermissionAnswer.cancelled()

    async def select(self, title: str, options: Sequence[Choice], *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> Choice | None:
        if not options:
            return None
        choices = [schema.PermissionOption(option_id=str(i), name=option_label(o), kind="allow_once")
                   for i, o in enumerate(options)]
        choices.append(schema.PermissionOption(option_id="cancel", name="Cancel", kind="reject_once"))
        chosen = await self._ask(_dialog_call(title), choices, signal, timeout)
        if chosen is None or not chosen.isdigit() or int(chosen) >= len(options):
            return None
        return cast(Choice, option_value(options[int(chosen)]))  # a dict option answers its value

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None,
                      signal: AbortSignal | None = None) -> bool:
        choices = [schema.PermissionOption(option_id="yes", name="Yes", kind="allow_once"),
                   schema.PermissionOption(option_id="no", name="No", kind="reject_once")]
        return await self._ask(_dialog_call(title, message), choices, signal, timeout) == "yes"

    def notify(self, message: str, level: str = "info") -> None:
        session = self.session()
        text = str(message)
        if session is None:
            print(f"wolli: {level}: {text}", file=sys.stderr, flush=True)
            return
        prefix = "" if level == "info" else f"{level.capitalize()}: "
        session.say(f"{prefix}{text}")


def _dialog_call(title: str, message: str = "") -> schema.ToolCallUpdate:
    return schema.ToolCallUpdate(
        tool_call_id=f"question-{uuid.uuid4().hex[:12]}", title=title, kind="other", status="pending",
        content=[text_content(message)] if message else None)


def _on_abort(signal: AbortSignal | None, asking: asyncio.Future[Any]) -> Callable[[], None]:
    add = getattr(signal, "add_listener", None)
    if add is None:
        return lambda: None
    loop = asyncio.get_running_loop()
    remove = add(lambda *_: loop.call_soon_threadsafe(asking.cancel))
    return remove if callable(remove) else (lambda: None)


class AcpFront(WithoutPickers):
    """The built-in slash commands' face (``interactive.commands.front.Front``) in an editor:
    what they show becomes the agent's message, questions become permission requests."""

    mode = "acp"
    shows_model_changes = False
    shows_mode_changes = False

    def __init__(self, session: AcpSession, ui: AcpUI) -> None:
        self._session = session
        self._ui = ui

    def notify(self, text: str, level: str = "info") -> None:
        prefix = "" if level == "info" else f"{level.capitalize()}: "
        self._session.say(f"{prefix}{text}")

    def show_text(self, title: str, text: str) -> None:
        self._session.say(f"{title}\n\n{text}")

    def set_editor_text(self, text: str) -> None:
        self._session.say(text)

    def copy_to_clipboard(self, text: str) -> str:
        raise RuntimeError("there is no clipboard in ACP mode; select the text in the editor")

    def request_quit(self) -> None:
        self._session.say("The editor ends Wolli when it closes the agent.")

    def session_changed(self) -> None:
        pass

    def settings_changed(self, changed: dict[str, Any]) -> None:
        pass

    async def select(self, title: str, options: Sequence[str]) -> str | None:
        chosen = await self._ui.select(title, options)
        return chosen if isinstance(chosen, str) else None

    async def input(self, title: str, placeholder: str = "", *, secret: bool = False) -> str | None:
        return None

    async def confirm(self, title: str, message: str) -> bool:
        return await self._ui.confirm(title, message)

    async def pick_model(self, models: list[Model], current: Model | None, search: str) -> Model | None:
        words = search.lower().split()
        found = [m for m in models if all(w in f"{m.provider}/{m.id}".lower() for w in words)]
        if len(found) == 1:
            return found[0]
        found = found[:20]
        labels = [f"{m.provider}/{m.id}" for m in found]
        chosen = await self._ui.select("Model", labels) if labels else None
        return found[labels.index(chosen)] if chosen in labels else None
