"""A stdio MCP server as a supervised child process, with bounded line I/O and a stderr log.

The child is started the way Wolli starts every child (``tools/supervisor.py``): in a session
of its own, tagged, registered with the watchdog before it can do anything, so it dies with
Wolli even when Wolli is killed with SIGKILL. Stopping follows the MCP shutdown order: close
stdin, wait a moment, then end the whole process tree (``npx`` and ``uvx`` start the real
server as a grandchild).

Reads are bounded: a line longer than :data:`MAX_LINE` ends the connection with a clear
error instead of growing memory without limit. The server's stderr goes to a log file (the
``/mcp`` log view) and the last lines stay in memory for error messages.
"""

from __future__ import annotations

import asyncio
import collections
import os
import signal as signals
import subprocess
from collections.abc import Mapping
from pathlib import Path

from ..base.safe_files import open_regular, read_tail
from ..config.paths import ensure_private_dir
from ..tools.proctree import live_tree, signal_tree
from ..tools.supervisor import Supervision, supervise

MAX_LINE = 32 * 1024 * 1024  # one JSON-RPC message
STOP_GRACE = 1.0  # after closing stdin, before SIGTERM
KILL_GRACE = 1.0  # after SIGTERM, before SIGKILL
# The same two when Wolli is exiting: a server that needs more is left to the watchdog.
EXIT_GRACE = 0.02
EXIT_TERM_GRACE = 0.05
LOG_MAX_BYTES = 1024 * 1024  # the stderr log is cut in half past this
_TAIL_LINES = 50


class StderrLog:
    """A server's stderr: appended to a file (bounded) and the last lines kept in memory."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.tail: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)

    def write(self, data: bytes) -> None:
        text = data.decode("utf-8", "replace")
        for line in text.splitlines():
            if line.strip():
                self.tail.append(line[:500])
        if self.path is None:
            return
        try:
            ensure_private_dir(self.path.parent)
            fd, st = open_regular(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                if st.st_size > LOG_MAX_BYTES:  # keep the newer half
                    keep, _ = read_tail(self.path, LOG_MAX_BYTES // 2)
                    os.ftruncate(fd, 0)
                    os.write(fd, keep)
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError:
            self.path = None  # a log that cannot be written is not worth failing the server for

    def note(self, text: str) -> None:
        """A line of Wolli's own about this server (start, exit) in the same log."""
        self.write(f"[wolli] {text}\n".encode())

    def last(self, lines: int = 3) -> str:
        return " | ".join(list(self.tail)[-lines:])


class StdioProcess:
    """One running server: ``read_line``/``write`` its stdio, ``stop`` ends its tree."""

    def __init__(self, proc: asyncio.subprocess.Process, unit: Supervision, log: StderrLog) -> None:
        self.proc = proc
        self.unit = unit
        self.log = log
        self.pid = proc.pid
        self.exiting = False  # Wolli is exiting: stop quickly (see stop)
        self._stopping: asyncio.Future[None] | None = None
        self._stderr_task = asyncio.ensure_future(self._pump_stderr())

    @classmethod
    async def start(cls, command: str, args: list[str], env: Mapping[str, str], cwd: str | None,
                    log: StderrLog) -> StdioProcess:
        """Start ``command``; raises OSError (with the reason) when it cannot run."""
        if cwd is not None and not os.path.isdir(cwd):
            raise FileNotFoundError(f"the working directory {cwd} does not exist")
        unit = supervise()  # before the spawn: the child is tagged from its first instant
        full_env = unit.env({**os.environ, **env})
        try:
            proc = await asyncio.create_subprocess_exec(
                command, *args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=full_env, cwd=cwd, start_new_session=True, limit=MAX_LINE,
            )
        except BaseException:
            unit.release()
            raise
        unit.add(proc.pid)
        log.note(f"started {command} (pid {proc.pid})")
        return cls(proc, unit, log)

    async def _pump_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        try:
            while chunk := await stream.read(65536):
                self.log.write(chunk)
        except (OSError, asyncio.CancelledError):
            pass

    async def read_line(self) -> bytes | None:
        """The next line without its newline; None at end of output."""
        stream = self.proc.stdout
        assert stream is not None
        try:
            line = await stream.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial or None
        except asyncio.LimitOverrunError:
            raise OSError(f"the server sent a message over {MAX_LINE // (1024 * 1024)} MiB") from None
        return line[:-1]

    async def write(self, data: bytes) -> None:
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write(data)
        await stdin.drain()

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    async def stop(self) -> None:
        """End the server; a second call waits for the first.

        Normally: close stdin, give the server a moment, then end its whole tree (SIGTERM,
        then SIGKILL). When Wolli is exiting (:attr:`exiting`) it must not wait a second per
        server: stdin is closed, the server gets :data:`EXIT_GRACE`, and one still running
        gets SIGTERM and is left registered with the watchdog, which ends what is left of
        its tree (SIGKILL after a grace) as soon as Wolli has gone. (A Python server takes
        ~0.2 s to exit after its stdin closes, ~10 ms after SIGTERM.)"""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop_once())
        await asyncio.shield(self._stopping)

    async def _stop_once(self) -> None:
        proc = self.proc
        handed_over = False
        try:
            if proc.stdin is not None and not proc.stdin.is_closing():
                proc.stdin.close()
            if self.exiting:
                # Only cheap looks at the server itself (a look at its whole tree reads /proc,
                # ~1.5 ms): whatever of its tree outlives this is the watchdog's to end.
                await self._exited(EXIT_GRACE)
                if proc.returncode is None:
                    signal_tree(self.pid, (), signals.SIGTERM)  # its process group
                    await self._exited(EXIT_TERM_GRACE)
                handed_over = True
                return
            await self._exited(STOP_GRACE)
            tracked = live_tree(self.pid, set())
            if tracked or proc.returncode is None:
                signal_tree(self.pid, tracked, signals.SIGTERM)
                await self._exited(KILL_GRACE, tracked)
                signal_tree(self.pid, live_tree(self.pid, tracked), signals.SIGKILL)
                await self._exited(KILL_GRACE)
        finally:
            if not handed_over:
                self.unit.release()
            self._stderr_task.cancel()
            code = proc.returncode
            self.log.note(f"stopped (exit code {code})" if code is not None else
                          "stopping (SIGTERM sent; the watchdog ends it once Wolli has exited)")

    async def _exited(self, timeout: float, tree: set[int] | None = None) -> None:
        """Wait until the server (and ``tree``) is gone, at most ``timeout``. Polls: asyncio's
        ``wait()`` also waits for the pipes, which a surviving grandchild may hold open."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            if self.proc.returncode is not None and not (tree and live_tree(self.pid, tree)):
                return
            await asyncio.sleep(0.005 if self.exiting else 0.02)

    def kill_now(self) -> None:
        """Synchronous last resort (the loop is closing): SIGKILL the tree at once."""
        signal_tree(self.pid, live_tree(self.pid, set()), signals.SIGKILL)
        self.unit.release()
