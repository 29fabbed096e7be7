"""``--mode rpc``: JSONL commands on stdin; responses, events and UI requests on stdout.

The third client of the runtime beside the TUI and json mode: it starts through the same
start-up path, observes the active session (following it across new/switch/fork/clone) and
writes each event with json mode's converter. What arrives on stdin is taken apart here:

- a line that is not a JSON object, an unknown command, a missing or wrong-typed field gets
  an error ``response`` naming the problem, and the server keeps serving;
- ``extension_ui_response`` answers an open dialog at once;
- commands run in the order received. A command is *accepted* before the next one starts
  (``prompt``: its run has started, or the message was queued or handled), while long work
  (the run, ``bash``, ``compact``) goes on in the background and answers when done; so a
  query (``get_*``) sees what the commands before it did, and ``get_state`` answers at once
  while a run streams;
- the aborts (``abort``, ``abort_bash``, ``abort_retry``) never wait behind other commands:
  they act on what is running when they arrive.

stdin closing (or SIGINT/SIGTERM/SIGHUP, or the client no longer reading stdout) shuts down
cleanly: open dialogs get their cancel value, the run is aborted, ``session_shutdown`` is
emitted, the session file stays whole, and the exit code is 0.
"""

from __future__ import annotations

import asyncio
import difflib
import os
import sys
import threading
import traceback
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from ...runtime.event_records import event_record
from ...runtime.events import NoticeEvent
from ...runtime.startup.request import StartupRequest
from ...runtime.startup.start import start
from ..common.framing import LineSplitter, OversizedRecord, decode_record
from ..common.protocol_output import ProtocolOutput
from . import (
    mcp_commands,  # noqa: F401  (registers the MCP commands)
    safety_commands,  # noqa: F401  (registers the permission and rewind commands)
)
from .commands import COMMANDS, CommandError, CommandSpec, Later, NoData
from .ui import RpcUI, UiResponseError

if TYPE_CHECKING:
    from ...runtime.host.agent_host import AgentHost
    from ...runtime.live.live_session import LiveSession

# The ``command`` of an error response to a line that is not a command at all (pi's name).
PARSE = "parse"


class RpcServer:
    def __init__(self, request: StartupRequest, output: ProtocolOutput, *, full_updates: bool = False) -> None:
        self.request = request
        self.output = output
        self.full_updates = full_updates
        self.ui = RpcUI(output)
        self._host: AgentHost | None = None
        self.stopping = False
        self._stopped: asyncio.Event | None = None
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
    def host(self) -> AgentHost:
        """The host (commands run only once the server has started)."""
        if self._host is None:
            raise RuntimeError("the RPC server has not started yet")
        return self._host

    @property
    def session(self) -> LiveSession:
        """The active session (commands run only once the server has started)."""
        active = self.host.active
        if active is None:
            raise RuntimeError("the RPC server has no active session")
        return active

    # ------------------------------------------------------------------ life cycle

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        self.ui.loop = loop
        self._stopped = asyncio.Event()
        self._queue = asyncio.Queue()

        def before_start(session: LiveSession) -> None:
            session.services.on_active_session(self._follow)

        startup = await start(self.request, ui=self.ui, observers=[self._on_event], before_start=before_start)
        self._host = startup.host
        self.host.start_auto_reload()  # settings autoReload: watch extension files, like the TUI
        if self.host.mcp is not None:  # servers start in the background; their states are events
            self.host.mcp.manager.add_listener(
                lambda status: self.output.send({"type": "mcp_server_state", "server": status}))
            self._tasks.add(loop.create_task(self.host.start_mcp(interactive=True)))
        for warning in startup.warnings:
            print(f"wolli: {warning}", file=sys.stderr, flush=True)
        self.output.on_closed = lambda: loop.call_soon_threadsafe(self.stop)
        self._intake_task = loop.create_task(self._intake())
        await self._attach_stdin(loop)
        from ..common.signals import Interrupt

        with Interrupt(self.stop):
            await self._stopped.wait()
        await self._shutdown()
        return 0

    def stop(self) -> None:
        """End the process cleanly (stdin closed, a signal, the client gone, ``wolli.shutdown()``)."""
        if not self.stopping and self._stopped is not None:
            self.stopping = True
            self._stopped.set()

    async def _shutdown(self) -> None:
        self.ui.cancel_all()
        if self._intake_task is not None:
            self._intake_task.cancel()
        assert self._queue is not None
        while not self._queue.empty():
            _, command = self._queue.get_nowait()
            self.fail(command.get("id"), command["type"], "not run: the server is shutting down (stdin closed)")
        await self.host.shutdown("quit")
        for task in list(self._tasks):  # bash or compaction answers, cut short by the shutdown
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)

    def check_shutdown(self) -> None:
        """``wolli.shutdown()`` from an extension: quit once the agent is idle."""
        session = self._host.active if self._host is not None else None
        if session is not None and self.host.shutdown_requested and session.is_idle():
            self.stop()

    def _follow(self, new: Any, old: Any) -> None:
        """The active session was replaced (new, switch, fork, clone): observe the new one."""
        if new is not None and old is not None:
            new.observe(self._on_event)

    # ------------------------------------------------------------------ events out

    def _on_event(self, event: Any) -> None:
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
        self.output.send(event_record(event, full_updates=self.full_updates))
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

    async def _attach_stdin(self, loop: asyncio.AbstractEventLoop) -> None:
        """Read stdin on the loop itself (a pipe or terminal): a line is taken up at the loop's
        next turn, with no thread waiting for the GIL. A regular file cannot be watched that
        way, so it is read by a thread."""
        server = self

        class Reader(asyncio.Protocol):
            def data_received(self, data: bytes) -> None:
                server._on_input(data)

            def eof_received(self) -> bool:
                server._on_input(b"")
                return False

            def connection_lost(self, exc: Exception | None) -> None:
                if not server.stopping:
                    server._on_input(b"")

        try:
            stdin = os.fdopen(os.dup(0), "rb", buffering=0)
            await loop.connect_read_pipe(Reader, stdin)
        except (ValueError, OSError):
            threading.Thread(target=self._read_stdin_thread, args=(loop,), name="rpc-stdin", daemon=True).start()

    def _read_stdin_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            try:
                data = os.read(0, 1 << 16)
            except InterruptedError:
                continue
            except OSError:
                data = b""
            try:
                loop.call_soon_threadsafe(self._on_input, data)
            except RuntimeError:  # the loop is gone: the process is ending anyway
                return
            if not data:
                return

    def _on_input(self, data: bytes) -> None:
        if self._input_ended:
            return
        self._input_ended = not data
        lines = self._splitter.feed(data) if data else self._splitter.finish()
        for line in lines:
            if self.stopping:
                break
            try:
                self.handle_line(line)
            except Exception as exc:  # a bug of ours must not end the reading of stdin
                traceback.print_exception(exc, file=sys.stderr)
                self.fail(None, PARSE, f"internal error handling this line: {type(exc).__name__}: {exc}")
        if not data:
            self.stop()

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
        if kind == "extension_ui_response":
            try:
                self.ui.answer(value)
            except UiResponseError as exc:
                self.fail(request_id, kind, str(exc))
            return
        spec = COMMANDS.get(kind)
        if spec is None:
            near = difflib.get_close_matches(kind, list(COMMANDS), n=1, cutoff=0.6)
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
        return not self._intake_busy and (self._queue is None or self._queue.empty())

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


def run_rpc(request: StartupRequest, *, full_updates: bool = False) -> int:
    """The entry point of ``wolli --mode rpc``."""
    from ..common.run import run_sync

    output = ProtocolOutput.take_stdout()
    server = RpcServer(request, output, full_updates=full_updates)
    return run_sync(server.run())


