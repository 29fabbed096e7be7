"""``ctx.ui`` over RPC: dialogs become ``extension_ui_request`` records answered by the client.

``select``/``confirm``/``input``/``editor`` write a request with a fresh ``id`` and wait for the
client's ``extension_ui_response`` with that ``id``. A ``timeout`` (seconds in Python, sent as
milliseconds like pi) or the abort ``signal`` ends the wait with the dialog's cancel value
(None, or False for ``confirm``), exactly as in the TUI; so does the end of the process.
``notify``, ``set_status``, ``set_widget`` (lines only), ``set_title`` and ``set_editor_text``
are fire-and-forget requests. Everything else is what non-TUI modes do (:class:`NullUI`).

The permission question is a ``permission`` request (the call, the reason, the suggested
rules and ACP-shaped options) once the client opted in with ``set_permission_requests``;
before that it comes as the generic ``select``/``editor``/``input`` dialogs any pi client
answers (it is asked at all only in a mode that asks: RPC starts in ``yolo``).

Calls may come from a tool's worker thread: writes are locked by the output, and a dialog
asked from another thread is awaited on the server's loop.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ...ai.abort import AbortSignal
from ...extensions.ui import NullUI
from ..common.protocol_output import ProtocolOutput

Answer = TypeVar("Answer")

if TYPE_CHECKING:
    from ...extensions.context import ExtensionUI
    from ...permissions.prompt import PermissionAnswer, PermissionRequest

_PLACEMENTS = {"above_editor": "aboveEditor", "below_editor": "belowEditor",
               "aboveEditor": "aboveEditor", "belowEditor": "belowEditor"}
_NOTIFY_TYPES = {"info": "info", "warning": "warning", "warn": "warning", "error": "error"}


class UiResponseError(ValueError):
    """An ``extension_ui_response`` the server cannot use (the message says why)."""


class RpcUI:
    has_ui = True

    def __init__(self, output: ProtocolOutput) -> None:
        self.output = output
        self.loop: asyncio.AbstractEventLoop | None = None  # set by the server once running
        self._pending: dict[str, tuple[asyncio.Future[Any], Callable[[dict[str, Any]], Any]]] = {}
        self.closed = False
        self._shown_statuses: set[str] = set()  # keys the client shows (cleared on /reload)
        self._shown_widgets: set[str] = set()
        # The client answers ``permission`` requests (``set_permission_requests``).
        self.permission_requests = False
        # The open dialogs' requests, for a client that arrives while they wait (wolli serve),
        # and who to tell when one closes (answered, timed out, cancelled).
        self.open_requests: dict[str, dict[str, Any]] = {}
        self.on_dialog_closed: Callable[[str], Any] | None = None

    # ------------------------------------------------------------------ the client's answers

    def answer(self, response: dict[str, Any]) -> None:
        """Resolve the dialog an ``extension_ui_response`` answers (on the server's loop)."""
        request_id = response.get("id")
        if not isinstance(request_id, str) or not request_id:
            raise UiResponseError("extension_ui_response needs the string 'id' of the request it answers")
        pending = self._pending.pop(request_id, None)
        if pending is None:
            raise UiResponseError(
                f"no open dialog has id {request_id!r} (it was answered, timed out or cancelled already)"
            )
        future, parse = pending
        try:
            value = parse(response)
        except UiResponseError:
            self._pending[request_id] = pending  # a wrong answer does not close the dialog
            raise
        if not future.done():
            future.set_result(value)

    def cancel_all(self) -> None:
        """The process is ending: every open dialog gets its cancel value."""
        self.closed = True
        for future, _ in self._pending.values():
            if not future.done():
                future.cancel()
        self._pending.clear()

    # ------------------------------------------------------------------ dialogs

    async def _dialog(
        self, fields: dict[str, Any], cancel_value: Answer, parse: Callable[[dict[str, Any]], Answer],
        timeout: float | None, signal: AbortSignal | None,
    ) -> Answer:
        running = asyncio.get_running_loop()
        if self.loop is not None and running is not self.loop:  # asked from a worker thread's loop
            future = asyncio.run_coroutine_threadsafe(
                self._dialog(fields, cancel_value, parse, timeout, signal), self.loop)
            return await asyncio.wrap_future(future)
        if self.closed or (signal is not None and getattr(signal, "aborted", False)):
            return cancel_value
        request_id = str(uuid.uuid4())
        answer: asyncio.Future[Answer] = running.create_future()
        self._pending[request_id] = (answer, parse)
        def aborted() -> None:  # the signal may fire on any thread
            running.call_soon_threadsafe(_cancel, answer)

        remove_listener = _on_abort(signal, aborted)
        record: dict[str, Any] = {"type": "extension_ui_request", "id": request_id, **fields}
        if timeout is not None and timeout > 0:
            record["timeout"] = int(timeout * 1000)
        self.open_requests[request_id] = record
        try:
            self.output.send(record)
            return await asyncio.wait_for(answer, timeout if timeout and timeout > 0 else None)
        except (TimeoutError, asyncio.CancelledError):
            if not answer.cancelled() and answer.done():
                return answer.result()
            current = asyncio.current_task()
            if current is not None and current.cancelling():  # the caller itself was cancelled
                raise
            return cancel_value
        finally:
            self._pending.pop(request_id, None)
            self.open_requests.pop(request_id, None)
            remove_listener()
            if self.on_dialog_closed is not None:
                self.on_dialog_closed(request_id)

    async def select(self, title: str, options: Sequence[Answer], *, timeout: float | None = None, signal: AbortSignal | None = None) -> Answer | None:
        labels = [_label(o) for o in options]

        def parse(response: dict[str, Any]) -> Answer | None:
            if response.get("cancelled") is True:
                return None
            value = _string_value(response)
            if value not in labels:
                raise UiResponseError(f"{value!r} is not one of the options {labels}")
            return cast(Answer, _option_value(options[labels.index(value)]))  # a dict option answers its value

        return await self._dialog({"method": "select", "title": title, "options": labels}, None, parse,
                                  timeout, signal)

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None, signal: AbortSignal | None = None) -> bool:
        def parse(response: dict[str, Any]) -> bool:
            if response.get("cancelled") is True:
                return False
            confirmed = response.get("confirmed")
            if not isinstance(confirmed, bool):
                raise UiResponseError("a confirm dialog is answered with 'confirmed': true/false or 'cancelled': true")
            return confirmed

        return bool(await self._dialog({"method": "confirm", "title": title, "message": message}, False, parse,
                                       timeout, signal))

    async def ask_permission(self, request: PermissionRequest, *, signal: AbortSignal | None = None) -> PermissionAnswer:
        from ...permissions.prompt import PermissionAnswer, answer_from_json, ask_with_dialogs

        if not self.permission_requests:
            return await ask_with_dialogs(self, request, signal=signal)

        def parse(response: dict[str, Any]) -> PermissionAnswer:
            try:
                return answer_from_json(request, response)
            except ValueError as exc:
                raise UiResponseError(str(exc)) from None

        fields = {"method": "permission", "title": f"Allow {request.tool_call.title}?", **request.to_json()}
        return await self._dialog(fields, PermissionAnswer.cancelled(), parse, None, signal)

    async def input(self, title: str, placeholder: str | None = None, *, timeout: float | None = None,
                    signal: AbortSignal | None = None) -> str | None:
        fields: dict[str, Any] = {"method": "input", "title": title}
        if placeholder is not None:
            fields["placeholder"] = placeholder
        return await self._dialog(fields, None, _text_answer, timeout, signal)

    async def editor(self, title: str, prefill: str | None = None, *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        fields: dict[str, Any] = {"method": "editor", "title": title}
        if prefill is not None:
            fields["prefill"] = prefill
        return await self._dialog(fields, None, _text_answer, timeout, signal)

    # ------------------------------------------------------------------ fire and forget

    def _tell(self, method: str, **fields: object) -> None:
        record: dict[str, object] = {"type": "extension_ui_request", "id": str(uuid.uuid4()), "method": method}
        record.update({k: v for k, v in fields.items() if v is not None})
        self.output.send(record)

    def notify(self, message: str, level: str = "info") -> None:
        self._tell("notify", message=str(message), notifyType=_NOTIFY_TYPES.get(level, "info"))

    def set_status(self, key: str, text: str | None) -> None:
        (self._shown_statuses.add if text is not None else self._shown_statuses.discard)(key)
        self._tell("setStatus", statusKey=key, statusText=None if text is None else str(text))

    def set_widget(self, key: str, content: object, *, placement: str = "above_editor") -> None:
        if content is None:
            lines = None
        elif isinstance(content, str):
            lines = content.splitlines()
        elif isinstance(content, list | tuple) and all(isinstance(line, str) for line in content):
            lines = list(content)
        else:  # a component factory: nothing to show without a screen (pi does the same)
            return
        (self._shown_widgets.add if lines is not None else self._shown_widgets.discard)(key)
        self._tell("setWidget", widgetKey=key, widgetLines=lines,
                   widgetPlacement=_PLACEMENTS.get(placement, "aboveEditor"))

    def reset(self) -> None:
        """``/reload``: the client clears the statuses and widgets the old versions set."""
        for key in sorted(self._shown_statuses):
            self._tell("setStatus", statusKey=key, statusText=None)
        for key in sorted(self._shown_widgets):
            self._tell("setWidget", widgetKey=key, widgetLines=None, widgetPlacement="aboveEditor")
        self._shown_statuses.clear()
        self._shown_widgets.clear()

    def set_title(self, text: str) -> None:
        self._tell("setTitle", title=str(text))

    def set_editor_text(self, text: str) -> None:
        self._tell("set_editor_text", text=str(text))

    def paste_to_editor(self, text: str) -> None:
        self.set_editor_text(text)

    def set_theme(self, theme: object) -> dict[str, Any]:
        return {"success": False, "error": "themes exist only in the full-screen app (ctx.mode == 'tui'), not in rpc mode"}


    # Nothing to send for these: the headless modes' inert answers, on purpose.
    custom = NullUI.custom
    set_footer = NullUI.set_footer
    set_working_message = NullUI.set_working_message
    set_working_visible = NullUI.set_working_visible
    set_working_indicator = NullUI.set_working_indicator
    get_editor_text = NullUI.get_editor_text
    open_url = NullUI.open_url
    add_autocomplete_provider = NullUI.add_autocomplete_provider
    get_tools_expanded = NullUI.get_tools_expanded
    set_tools_expanded = NullUI.set_tools_expanded
    set_editor_component = NullUI.set_editor_component
    get_editor_component = NullUI.get_editor_component
    get_all_themes = NullUI.get_all_themes
    get_theme = NullUI.get_theme
    theme = NullUI.theme


def _label(option: object) -> str:
    if isinstance(option, dict):
        return str(option.get("label") or option.get("title") or option.get("value"))
    return str(option)


def _option_value(option: object) -> object:
    return option["value"] if isinstance(option, dict) and "value" in option else option


def _string_value(response: dict[str, Any]) -> str:
    value = response.get("value")
    if not isinstance(value, str):
        raise UiResponseError("this dialog is answered with a string 'value' or 'cancelled': true")
    return value


def _text_answer(response: dict[str, Any]) -> str | None:
    return None if response.get("cancelled") is True else _string_value(response)


def _cancel(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.cancel()


def _on_abort(signal: AbortSignal | None, callback: Callable[[], None]) -> Callable[[], None]:
    add = getattr(signal, "add_listener", None)
    if add is None:
        return lambda: None
    remove = add(callback)
    return remove if callable(remove) else (lambda: None)


if TYPE_CHECKING:
    _conforms: type[ExtensionUI] = RpcUI
