"""``--mode rpc``: JSONL commands on stdin; responses, events and UI requests on stdout.

The third client of the runtime beside the TUI and json mode: it starts through the same
start-up path, observes the active session (following it across new/switch/fork/clone) and
writes each event with json mode's converter. The commands themselves are the protocol's
core (:mod:`.core`); this module adds the process around it: start-up, stdin, the exit.

stdin closing (or SIGINT/SIGTERM/SIGHUP, or the client no longer reading stdout) shuts down
cleanly: open dialogs get their cancel value, the run is aborted, ``session_shutdown`` is
emitted, the session file stays whole, and the exit code is 0.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING

from ...runtime.startup.request import StartupRequest
from ...runtime.startup.start import start
from ..common.protocol_output import ProtocolOutput
from ..common.stdin_feed import feed_from_stdin
from .core import PARSE, RpcCore
from .ui import RpcUI

if TYPE_CHECKING:
    from ...runtime.live.live_session import LiveSession

__all__ = ["PARSE", "RpcServer", "run_rpc"]


class RpcServer(RpcCore):
    def __init__(self, request: StartupRequest, output: ProtocolOutput, *, full_updates: bool = False) -> None:
        super().__init__(request, output, RpcUI(output), full_updates=full_updates)
        self.output: ProtocolOutput = output
        self._stopped: asyncio.Event | None = None

    # ------------------------------------------------------------------ life cycle

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        self.ui.loop = loop
        self._stopped = asyncio.Event()

        def before_start(session: LiveSession) -> None:
            session.services.on_active_session(self._follow)

        startup = await start(self.request, ui=self.ui, observers=[self.on_event], before_start=before_start)
        self.host = startup.host
        self.host.start_auto_reload()  # settings autoReload: watch extension files, like the TUI
        if self.host.mcp is not None:  # servers start in the background; their states are events
            self.host.mcp.manager.add_listener(
                lambda status: self.output.send({"type": "mcp_server_state", "server": status}))
            self.background(self.host.start_mcp(interactive=True))
        for warning in startup.warnings:
            print(f"wolli: {warning}", file=sys.stderr, flush=True)
        self.output.on_closed = lambda: loop.call_soon_threadsafe(self.stop)
        self.start_intake()
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
        self.end_intake("the server is shutting down (stdin closed)")
        await self.host.shutdown("quit")
        await self.cancel_background()

    def check_shutdown(self) -> None:
        """``wolli.shutdown()`` from an extension: quit once the agent is idle."""
        session = self.host.active if self.host is not None else None
        if session is not None and self.host.shutdown_requested and session.is_idle():
            self.stop()

    def _follow(self, new: LiveSession | None, old: LiveSession | None) -> None:
        """The active session was replaced (new, switch, fork, clone): observe the new one."""
        if new is not None and old is not None:
            new.observe(self.on_event)

    # ------------------------------------------------------------------ stdin

    async def _attach_stdin(self, loop: asyncio.AbstractEventLoop) -> None:
        """Read stdin on the loop (``modes/common/stdin_feed.py``); a connection lost while
        the server is stopping is not an end of input."""
        await feed_from_stdin(loop, self.feed, stopping=lambda: self.stopping, thread_name="rpc-stdin")


def run_rpc(request: StartupRequest, *, full_updates: bool = False) -> int:
    """The entry point of ``wolli --mode rpc``."""
    from ..common.run import run_sync

    output = ProtocolOutput.take_stdout()
    server = RpcServer(request, output, full_updates=full_updates)
    return run_sync(server.run())
