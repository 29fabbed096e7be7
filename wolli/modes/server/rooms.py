"""A live session and the clients attached to it.

Each event of the session is converted to its record once and handed to every attached
client; its extension dialogs go to all of them (``ctx.ui`` of this session is the room's),
the first answer wins and every client hears ``extension_ui_closed`` when a dialog ends. A
client that arrives later gets the dialogs still open. Clients come and go; the session
runs on without them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ...runtime.event_records import event_record
from ..common.protocol_output import RecordSink
from ..rpc.ui import RpcUI

if TYPE_CHECKING:
    from ...runtime.events import SessionEvent
    from ...runtime.live.live_session import LiveSession


class RoomClient(Protocol):
    """What a room needs of an attached client (``connection.RoomClient``)."""

    output: RecordSink

    def on_event(self, event: SessionEvent, record: dict[str, Any] | None = None) -> None: ...

    def describe(self) -> dict[str, Any]: ...

    def join(self, room: SessionRoom) -> None: ...


# What an extension leaves on screen (a status, a widget, the title), by its key: the room
# keeps the latest of each, so a client that attaches later shows them too.
STANDING = {"setStatus": ("statusKey", "statusText"), "setWidget": ("widgetKey", "widgetLines"),
            "setTitle": (None, "title")}


class Broadcast:
    """A record sink that writes to every client of a room."""

    def __init__(self, room: SessionRoom) -> None:
        self.room = room

    def send(self, record: dict[str, Any]) -> None:
        self.room.remember(record)
        for client in list(self.room.clients):
            client.output.send(record)


class SessionRoom:
    def __init__(self, session: LiveSession, loop: asyncio.AbstractEventLoop, on_empty: Callable[[SessionRoom], None],
                 on_replaced: Callable[[SessionRoom, str], None] | None = None) -> None:
        self.session = session
        # The session was replaced by another (an extension's ``ctx.session.new_session()``):
        # called with the new session's file, so the server can move the clients there.
        self._on_replaced = on_replaced
        self.clients: list[RoomClient] = []
        self.ui = RpcUI(Broadcast(self))  # type: ignore[arg-type]
        self.ui.loop = loop
        self.ui.on_dialog_closed = self._dialog_closed
        self._on_empty = on_empty
        # Tool calls started and not ended ({toolCallId, toolName, args}): a client that
        # attaches while they run is told, so it shows them running rather than pending.
        self.running_tools: dict[str, dict[str, Any]] = {}
        self.standing: dict[tuple[str, str], dict[str, Any]] = {}  # see STANDING
        self._unobserve = session.observe(self._on_event)

    @property
    def session_id(self) -> str:
        return str(self.session.session_id)

    def join(self, client: RoomClient) -> None:
        self.clients.append(client)
        for record in [*self.ui.open_requests.values(), *self.standing.values()]:
            client.output.send(record)

    def leave(self, client: RoomClient, *, moving: bool = False) -> None:
        """``moving``: the client goes on to another session, so what this one's extensions
        left on its screen is taken off."""
        if client in self.clients:
            self.clients.remove(client)
            if moving:
                for (method, _), record in self.standing.items():
                    if method != "setTitle":  # the next session's extensions set their own title
                        client.output.send({**record, STANDING[method][1]: None})
        if not self.clients:
            self._on_empty(self)

    def remember(self, record: dict[str, Any]) -> None:
        fields = STANDING.get(str(record.get("method"))) if record.get("type") == "extension_ui_request" else None
        if fields is None:
            return
        key_field, value_field = fields
        key = (str(record["method"]), str(record.get(key_field)) if key_field else "")
        if record.get(value_field) is None:
            self.standing.pop(key, None)
        else:
            self.standing[key] = record

    def close(self) -> None:
        self._unobserve()
        self.ui.cancel_all()

    def _on_event(self, event: SessionEvent) -> None:
        if event.type == "session_shutdown" and event.target_session_file and self._on_replaced is not None:
            self._on_replaced(self, event.target_session_file)
        if event.type == "tool_execution_start":
            self.running_tools[event.tool_call_id] = {"toolCallId": event.tool_call_id, "toolName": event.tool_name,
                                                      "args": event.args}
        elif event.type == "tool_execution_end":
            self.running_tools.pop(event.tool_call_id, None)
        elif event.type == "run_state" and event.state == "idle":
            self.running_tools.clear()
        if not self.clients:
            if event.type == "run_state" and event.state == "idle":
                self._on_empty(self)  # the run nobody watched ended: the session may go
            return
        record = event_record(event)
        for client in list(self.clients):
            client.on_event(event, record)

    def _dialog_closed(self, request_id: str) -> None:
        for client in list(self.clients):
            client.output.send({"type": "extension_ui_closed", "id": request_id})

    def describe(self) -> dict[str, Any]:
        session = self.session
        return {"sessionId": self.session_id, "sessionFile": session.session_file, "cwd": session.cwd,
                "name": session.session_manager.get_session_name(), "runState": session.run_state,
                "clients": [client.describe() for client in self.clients]}

