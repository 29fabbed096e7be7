"""The RPC protocol's command core, whoever the client is and however its bytes arrive.

:class:`RpcCore` takes a client's bytes (:meth:`feed`), splits them into JSON lines, checks
each command and runs it against :attr:`RpcCore.session`, writing responses and events to
its ``output`` (anything with ``send(record)``). ``--mode rpc`` (:mod:`.server`) is one such
client on stdin/stdout; ``wolli serve`` has one per socket connection.

- a line that is not a JSON object, an unknown command, a missing or wrong-typed field gets
  an error ``response`` naming the problem, and the core keeps serving;
- ``extension_ui_response`` answers an open dialog at once;
- commands run in the order received. A command is *accepted* before the next one starts
  (``prompt``: its run has started, or the message was queued or handled), while long work
  (the run, ``bash``, ``compact``) goes on in the background and answers when done; so a
  query (``get_*``) sees what the commands before it did, and ``get_state`` answers at once
  while a run streams;
- the aborts (``abort``, ``abort_bash``, ``abort_retry``) never wait behind other commands:
  they act on what is running when they arrive.
"""

from __future__ import annotations

import asyncio
import difflib
import sys
import traceback
from collections.abc import Coroutine
from typing import Any

from ...runtime.event_records import event_record
from ...runtime.events import NoticeEvent
from ...runtime.startup.request import StartupRequest
from ..common.framing import LineSplitter, OversizedRecord, decode_record
from ..common.protocol_output import RecordSink
from . import (
    auth_commands,  # noqa: F401  (registers the API key commands)
    extension_commands,  # noqa: F401  (registers reload and the shortcut commands)
    mcp_commands,  # noqa: F401  (registers the MCP commands)
    package_commands,  # noqa: F401  (registers /packages run for a client)
    safety_commands,  # noqa: F401  (registers the permission and rewind commands)
    settings_commands,  # noqa: F401  (registers the settings commands)
    subagent_commands,  # noqa: F401  (registers the subagent commands)
    tree_commands,  # noqa: F401  (registers the session tree commands)
)
from .commands import COMMANDS, CommandError, CommandSpec, Later, NoData
from .ui import RpcUI, UiResponseError

# The ``command`` of an error response to a line that is not a command at all (pi's name).
PARSE = "parse"


class RpcCore:
    def __init__(self, request: StartupRequest, output: RecordSink, ui: RpcUI, *, full_updates: bool = False) -> None:
        self.request = request
        self.output = output
        self.full_updates = full_updates
        self.ui = ui
        self.host: Any = None
        self.stopping = False
        # Commands this client has beside (or instead of) the protocol's own.
        self.own_commands: dict[str, CommandSpec] = {}
        self._queue: asyncio.Queue[tuple[Any, dict[str, Any]]] | None = None
        self._intake_task: asyncio.Task[None] | None = None
        self._intake_busy = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._splitter = LineSplitter()
        self._input_ended = False
        self._run_waiters: list[asyncio.Event] = []
        # What the event stream said last, for commands that answer from it.
        self.manual_compaction = False
        self.last_compaction_error: str | None = None

    @property
    def session(self) -> Any:
        return self.host.active

    # ------------------------------------------------------------------ life cycle

    def start_intake(self) -> None:
        """Begin taking the ordered commands (on the running loop)."""
        self._queue = asyncio.Queue()
        self._intake_task = asyncio.get_running_loop().create_task(self._intake())

    def stop(self) -> None:
        """The client is done (its input ended, it went away)."""
        self.stopping = True

    def end_intake(self, why: str) -> None:
        """Stop taking commands; those still queued are answered with ``why``."""
        if self._intake_task is not None:
            self._intake_task.cancel()
        while self._queue is not None and not self._queue.empty():
            _, command = self._queue.get_nowait()
            self.fail(command.get("id"), command["type"], f"not run: {why}")

    async def cancel_background(self) -> None:
        for task in list(self._tasks):  # bash or compaction answers, cut short by the shutdown
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)

    def check_shutdown(self) -> None:
        """``wolli.shutdown()`` from an extension: quit once the agent is idle."""

    # ------------------------------------------------------------------ events out

    def on_event(self, event: Any, record: dict[str, Any] | None = None) -> None:
        """One event of the session: remembered where commands need it, then sent
        (``record``: the event already converted, when several clients share it)."""
        kind = event.type
        if kind == "run_state":
            if event.state != "idle":
                waiters, self._run_waiters = self._run_waiters, []
                for waiter in waiters:
                    waiter.set()
            if event.state == "compacting":
                self.manual_compaction = event.previous == "idle"
            elif event.state == "idle":
                self.manual_compaction = False
        elif kind == "compaction_end":
            self.last_compaction_error = event.error_message
        self.output.send(record if record is not None else event_record(event, full_updates=self.full_updates))
        if kind == "run_state" and event.state == "idle":
            if event.previous != "compacting":
                # pi's marker that nothing more follows on its own (no retry, no queued message).
                self.output.send({"type": "agent_settled"})
            asyncio.get_running_loop().call_soon(self.check_shutdown)

    def emit_notice(self, level: str, message: str) -> None:
        self.output.send(event_record(NoticeEvent(level, message)))  # type: ignore[arg-type]

    def wait_for_run_start(self) -> asyncio.Event:
        """An event set when the session next leaves ``idle`` (a run or compaction began)."""
        waiter = asyncio.Event()
        self._run_waiters.append(waiter)
        return waiter

    def background(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # ------------------------------------------------------------------ responses out

    def respond(self, request_id: object, command: str, data: object = NoData) -> None:
        record: dict[str, Any] = {} if request_id is None else {"id": request_id}
        record.update({"type": "response", "command": command, "success": True})
        if data is not NoData:
            record["data"] = data
        self.output.send(record)

    def fail(self, request_id: object, command: str, error: str) -> None:
        record: dict[str, Any] = {} if request_id is None else {"id": request_id}
        record.update({"type": "response", "command": command, "success": False, "error": error})
        self.output.send(record)

    # ------------------------------------------------------------------ commands in

    def feed(self, data: bytes) -> None:
        """Bytes from the client; ``b""`` when its input ended."""
        if self._input_ended:
            return
        self._input_ended = not data
        lines = self._splitter.feed(data) if data else self._splitter.finish()
        for line in lines:
            if self.stopping:
                break
            self.take_line(line)
        if not data:
            self.stop()

    def take_line(self, line: bytes) -> None:
        """One record, however it was framed (a JSON line, a WebSocket message)."""
        try:
            self.handle_line(line)
        except Exception as exc:  # a bug of ours must not end the reading of the input
            traceback.print_exception(exc, file=sys.stderr)
            self.fail(None, PARSE, f"internal error handling this line: {type(exc).__name__}: {exc}")

    def refuse(self, kind: str, command: dict[str, Any]) -> str | None:
        """Why this client may not send this command now (None: it may)."""
        return None

    def answer_dialog(self, response: dict[str, Any]) -> None:
        self.ui.answer(response)

    def handle_line(self, line: bytes) -> None:
        if not line.strip() and not isinstance(line, OversizedRecord):
            return  # a blank line is no command (a client's keep-alive, a stray newline)
        try:
            value = decode_record(line)
        except ValueError as exc:
            self.fail(None, PARSE, f"Failed to parse command: {exc}")
            return
        if not isinstance(value, dict):
            self.fail(None, PARSE, 'a command is a JSON object with a "type", e.g. {"type": "get_state"}')
            return
        kind = value.get("type")
        request_id = value.get("id")
        if request_id is not None and (not isinstance(request_id, str | int) or isinstance(request_id, bool)):
            self.fail(None, kind if isinstance(kind, str) else PARSE, "'id' must be a string (or a number)")
            return
        if not isinstance(kind, str) or not kind:
            self.fail(request_id, PARSE, 'a command needs a string "type", e.g. {"type": "get_state"}')
            return
        refused = self.refuse(kind, value)
        if refused is not None:
            self.fail(request_id, kind, refused)
            return
        if kind == "extension_ui_response":
            try:
                self.answer_dialog(value)
            except UiResponseError as exc:
                self.fail(request_id, kind, str(exc))
            return
        spec = self.own_commands.get(kind) or COMMANDS.get(kind)
        if spec is None:
            known = [*COMMANDS, *self.own_commands]
            near = difflib.get_close_matches(kind, known, n=1, cutoff=0.6)
            self.fail(request_id, kind, f"Unknown command: {kind}" + (f" (did you mean {near[0]}?)" if near else ""))
            return
        if spec.kind == "query" and self._intake_idle():
            self._run_query(spec, value)
        elif spec.kind == "at_once":
            self.background(self._execute(spec, value))
        else:
            assert self._queue is not None
            self._queue.put_nowait((spec, value))

    def _intake_idle(self) -> bool:
        return not self._intake_busy and (self._queue is None or self._queue.empty()) and not self.holds_commands()

    def holds_commands(self) -> bool:
        """Commands wait in the queue (queries too) until :meth:`before_command` lets them run."""
        return False

    async def before_command(self, spec: CommandSpec) -> None:
        """Awaited before each queued command runs (a client's session finishing its load)."""

    def _run_query(self, spec: CommandSpec, command: dict[str, Any]) -> None:
        try:
            data = spec.handler(self, command)
        except CommandError as exc:
            self.fail(command.get("id"), command["type"], str(exc))
        except Exception as exc:
            self._unexpected(command, exc)
        else:
            self.respond(command.get("id"), command["type"], data)

    async def _intake(self) -> None:
        """The ordered commands, one after the other (each until it is accepted)."""
        assert self._queue is not None
        while True:
            spec, command = await self._queue.get()
            self._intake_busy = True
            try:
                await self.before_command(spec)
                if spec.kind == "query":
                    self._run_query(spec, command)
                else:
                    await self._execute(spec, command)
            finally:
                self._intake_busy = False
            self.check_shutdown()

    async def _execute(self, spec: CommandSpec, command: dict[str, Any]) -> None:
        request_id, kind = command.get("id"), command["type"]
        try:
            result = await spec.handler(self, command)
        except CommandError as exc:
            self.fail(request_id, kind, str(exc))
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._unexpected(command, exc)
            return
        if isinstance(result, Later):
            result.task.add_done_callback(lambda task: self._answer_later(request_id, kind, task))
        else:
            self.respond(request_id, kind, result)

    def _answer_later(self, request_id: object, kind: str, task: asyncio.Task[Any]) -> None:
        if task.cancelled():
            self.fail(request_id, kind, "cancelled: the server is shutting down")
            return
        exc = task.exception()
        if isinstance(exc, CommandError):
            self.fail(request_id, kind, str(exc))
        elif exc is not None:
            self._unexpected({"id": request_id, "type": kind}, exc)
        else:
            self.respond(request_id, kind, task.result())

    def _unexpected(self, command: dict[str, Any], exc: BaseException) -> None:
        """A failure the command did not foresee: said in the response, the trace on stderr."""
        traceback.print_exception(exc, file=sys.stderr)
        self.fail(command.get("id"), command["type"], f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
