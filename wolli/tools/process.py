"""Run one shell command as its own process tree: streamed, killable, never hung by daemons.

Why the care:

* The command runs in a new session (its own process group, no controlling terminal, so
  ``ssh``/``git`` cannot prompt on ``/dev/tty``). Timeout and abort kill the whole tree:
  SIGTERM to the group and to every descendant found in ``/proc`` (which catches children
  that moved to another group), then SIGKILL to whatever is still alive after a short grace.
* A command like ``server &`` leaves a process holding our output pipe, so EOF may never
  come. The command is over when the shell exits; we then drain what is already in flight
  for a moment and return. The pipe stays open in the background and its data is discarded
  until the daemon closes it, so the daemon is not killed by SIGPIPE on its next write.
* asyncio's ``Process.wait()`` (3.11) only returns once the pipes close, which is exactly the
  hang above, so this module uses a protocol and reacts to ``process_exited`` itself.
* While the command runs it is supervised (``supervisor.py``): should Wolli die without a
  chance to clean up (SIGKILL, a crash), its watchdog ends the tree. Once the command is over
  the unit is released, so a daemon it started on purpose keeps running.

This is the low-level layer: it knows shells, pipes and process trees, and nothing of the
:class:`~wolli.tools.environment.Environment`, which builds its ``exec`` on top of it
(:class:`ExecOptions` and :class:`ExecResult` live in ``exec_records.py``, which it needs at
start, without this module).
"""

from __future__ import annotations

import asyncio
import os
import signal as signals
import subprocess
import threading
from collections.abc import Callable
from typing import Any

from ..ai.abort import AbortSignal
from ..base.records import record
from .exec_records import ExecOptions, ExecResult
from .proctree import HAS_PROC, live_tree, signal_tree
from .shell import resolve_shell, shell_env
from .supervisor import Supervision, supervise

# After the shell exits: stop once no data came for DRAIN_IDLE, and after DRAIN_CAP at most.
DRAIN_IDLE = 0.1
DRAIN_CAP = 0.5
# Between SIGTERM and SIGKILL.
KILL_GRACE = 0.5
_POLL = 0.025


class _ShellProtocol(asyncio.SubprocessProtocol):
    """Forwards output as it arrives and reports exit and EOF as separate futures."""

    def __init__(self, loop: asyncio.AbstractEventLoop, sink: Callable[[bytes], None]) -> None:
        self._loop = loop
        self.sink: Callable[[bytes], None] | None = sink
        self.sink_error: BaseException | None = None
        self.transport: asyncio.SubprocessTransport | None = None
        self.exited: asyncio.Future[int] = loop.create_future()
        self.eof: asyncio.Future[None] = loop.create_future()
        self.last_data = loop.time()
        self.on_sink_error: Callable[[], None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.last_data = self._loop.time()
        sink = self.sink
        if sink is None:
            return
        try:
            sink(data)
        except BaseException as exc:  # the caller's callback broke: stop feeding it
            self.sink = None
            self.sink_error = exc
            if self.on_sink_error is not None:
                self.on_sink_error()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if not self.eof.done():
            self.eof.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done() and self.transport is not None:
            self.exited.set_result(self.transport.get_returncode() or 0)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.eof.done():
            self.eof.set_result(None)

    def detach(self) -> None:
        """Stop forwarding and close the transport; a daemon still holding the pipe gets a
        thread that discards its output until it closes (so it never sees SIGPIPE)."""
        self.sink = None
        transport = self.transport
        if transport is None:
            return
        fd = _dup_output_pipe(transport) if not self.eof.done() else None
        transport.close()
        if fd is not None:
            threading.Thread(target=_discard, args=(fd,), name="wolli-pipe-drain", daemon=True).start()


def _dup_output_pipe(transport: asyncio.SubprocessTransport) -> int | None:
    pipe = transport.get_pipe_transport(1)
    file = pipe.get_extra_info("pipe") if pipe is not None else None
    try:
        return os.dup(file.fileno()) if file is not None else None
    except (OSError, ValueError):
        return None


def _discard(fd: int) -> None:
    try:
        os.set_blocking(fd, True)
        while os.read(fd, 65536):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


async def run_shell_command(
    command: str, cwd: str, options: ExecOptions, shell_path: str | None = None
) -> ExecResult:
    """Run ``command`` with the resolved shell in ``cwd``; see the module docstring."""
    abort = options.signal
    if abort is not None and abort.aborted:
        return ExecResult(exit_code=None, aborted=True)
    shell = resolve_shell(shell_path)
    if not os.path.isdir(cwd):
        raise FileNotFoundError(f"Working directory does not exist: {cwd}. Cannot run the command.")

    loop = asyncio.get_running_loop()
    chunks: list[bytes] = []
    protocol = _ShellProtocol(loop, options.on_data or chunks.append)
    stop: asyncio.Future[str] = loop.create_future()

    def request_stop(reason: str) -> None:
        if not stop.done():
            stop.set_result(reason)

    # Set before spawning: output can arrive before the spawn call returns.
    protocol.on_sink_error = lambda: request_stop("error")

    # Registered before the spawn: the child carries the unit's tag from its first instant.
    unit = supervise()
    spawn = asyncio.ensure_future(
        loop.subprocess_exec(
            lambda: protocol,
            shell,
            "-c",
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=unit.env(shell_env(options.env)),
            start_new_session=True,
        )
    )
    try:
        # Shielded: asyncio's own clean-up for a cancelled spawn kills only the shell and
        # then waits for the pipe to close, which a grandchild may hold open forever.
        transport, _ = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        await _kill_after_spawn(spawn, protocol, unit)
        raise
    except OSError as exc:
        unit.release()
        raise OSError(exc.errno, f"Could not start {shell}: {exc.strerror or exc}") from exc
    except BaseException:
        unit.release()
        raise
    pid = transport.get_pid()
    unit.add(pid)  # the shell leads its own group (start_new_session)

    def on_abort() -> None:
        try:
            loop.call_soon_threadsafe(request_stop, "aborted")
        except RuntimeError:  # loop already closed
            pass

    remove_listener: Callable[[], None] | None = None
    if abort is not None:
        remove_listener = abort.add_listener(on_abort)
    timer = None
    if options.timeout is not None and options.timeout > 0:
        timer = loop.call_later(options.timeout, request_stop, "timeout")

    reason: str | None = None
    try:
        while not protocol.exited.done():
            waiting: set[asyncio.Future[Any]] = {protocol.exited, stop}
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if stop.done() and not protocol.exited.done():
                reason = stop.result()
                await _terminate_tree(pid, protocol.exited)
                break
        await _drain(loop, protocol)
    finally:
        if timer is not None:
            timer.cancel()
        if remove_listener is not None:
            remove_listener()
        if not protocol.exited.done():  # cancelled: no time for a grace period
            signal_tree(pid, live_tree(pid, set()), signals.SIGKILL)
        protocol.detach()
        # Killed, or over: what the command left running on purpose is the user's now.
        unit.release()

    if protocol.sink_error is not None:
        raise protocol.sink_error
    code = protocol.exited.result() if protocol.exited.done() else None
    if reason is not None:
        code = None
    elif code is not None and code < 0:  # killed by a signal from elsewhere: shell convention
        code = 128 - code
    output = b"".join(chunks).decode("utf-8", "replace") if options.on_data is None else ""
    return ExecResult(
        exit_code=code, output=output, timed_out=reason == "timeout", aborted=reason == "aborted"
    )


async def _kill_after_spawn(spawn: asyncio.Future[Any], protocol: _ShellProtocol, unit: Supervision) -> None:
    """Cancelled while starting: once the start finishes, kill the whole tree at once.

    A second cancellation while we wait leaves the job to a callback on the (never
    cancelled) spawn, so the command cannot be left running.
    """

    def finish(done: asyncio.Future[Any]) -> None:
        if not done.cancelled() and done.exception() is None:
            pid = done.result()[0].get_pid()
            signal_tree(pid, live_tree(pid, set()), signals.SIGKILL)
            protocol.detach()
        unit.release()

    try:
        await asyncio.shield(spawn)
    except BaseException:  # it never started, or we are cancelled again
        pass
    if spawn.done():
        finish(spawn)
    else:  # cancelled again while it starts: finish() runs once it has
        spawn.add_done_callback(finish)


async def _drain(loop: asyncio.AbstractEventLoop, protocol: _ShellProtocol) -> None:
    """Wait for EOF, but only while data keeps coming and never past ``DRAIN_CAP``."""
    start = loop.time()
    protocol.last_data = max(protocol.last_data, start)
    while not protocol.eof.done():
        wake = min(start + DRAIN_CAP, protocol.last_data + DRAIN_IDLE)
        remaining = wake - loop.time()
        if remaining <= 0:
            return
        await asyncio.wait({protocol.eof}, timeout=remaining)


# ---------------------------------------------------------------------------- killing


async def _terminate_tree(pid: int, exited: asyncio.Future[Any]) -> None:
    """SIGTERM the tree, give it ``KILL_GRACE`` to go, then SIGKILL what is left."""
    loop = asyncio.get_running_loop()
    tracked = live_tree(pid, set())
    signal_tree(pid, tracked, signals.SIGTERM)
    deadline = loop.time() + KILL_GRACE
    while loop.time() < deadline:
        if not exited.done():
            await asyncio.wait({exited}, timeout=_POLL)
            if not exited.done():
                continue
        if not HAS_PROC:
            break
        remaining = live_tree(pid, tracked)
        if not remaining:
            return
        await asyncio.sleep(_POLL)
    remaining = live_tree(pid, tracked)
    signal_tree(pid, remaining, signals.SIGKILL)
    if not exited.done():
        await asyncio.wait({exited}, timeout=KILL_GRACE)



# --------------------------------------------------------------------------- run_command

# What ``run_command`` keeps of each of stdout and stderr; the rest is read and dropped, so
# a chatty command can neither exhaust memory nor block on a full pipe.
COMMAND_OUTPUT_CAP = 16 * 1024 * 1024


@record
class CommandResult:
    """What ``wolli.exec`` returns: stdout and stderr apart (unlike :class:`ExecResult`)."""

    stdout: str
    stderr: str
    code: int | None
    killed: bool = False
    truncated: bool = False  # stdout or stderr passed COMMAND_OUTPUT_CAP; the start is kept

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)


async def _read_capped(stream: asyncio.StreamReader | None, cap: int) -> tuple[bytes, bool]:
    if stream is None:
        return b"", False
    kept: list[bytes] = []
    size = 0
    while chunk := await stream.read(65536):
        if size < cap:
            kept.append(chunk[: cap - size])
        size += len(chunk)
    return b"".join(kept), size > cap


async def run_command(
    command: str, args: list[str] | None = None, *, cwd: str, timeout: float | None = None, signal: AbortSignal | None = None,
    output_cap: int = COMMAND_OUTPUT_CAP,
) -> CommandResult:
    """``command`` through the shell when ``args`` is None, else the program with ``args``.

    The child runs in a session of its own and is killed (its whole tree) on timeout, when
    ``signal`` aborts, or when the caller is cancelled; ``killed`` says so. While it runs it
    is supervised, so it also dies if Wolli is killed (``supervisor.py``). Each stream keeps
    its first ``output_cap`` bytes.
    """
    unit = supervise()
    pipes: dict[str, Any] = {
        "cwd": cwd, "stdout": asyncio.subprocess.PIPE, "stderr": asyncio.subprocess.PIPE,
        "stdin": asyncio.subprocess.DEVNULL, "start_new_session": True, "env": unit.env(),
    }
    try:
        if args is None:
            process = await asyncio.create_subprocess_shell(command, **pipes)
        else:
            process = await asyncio.create_subprocess_exec(command, *args, **pipes)
    except BaseException:
        unit.release()
        raise
    unit.add(process.pid)

    def kill_tree() -> None:
        signal_tree(process.pid, live_tree(process.pid, set()), signals.SIGKILL)

    async def communicate() -> tuple[tuple[bytes, bool], tuple[bytes, bool]]:
        out, err = await asyncio.gather(_read_capped(process.stdout, output_cap),
                                        _read_capped(process.stderr, output_cap))
        await process.wait()
        return out, err

    reading = asyncio.ensure_future(communicate())
    waiters: set[asyncio.Future[Any]] = {reading}
    aborted: asyncio.Future[Any] | None = None
    if signal is not None and hasattr(signal, "wait"):
        aborted = asyncio.ensure_future(signal.wait())
        waiters.add(aborted)
    try:
        done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        killed = reading not in done
        if killed:
            kill_tree()
        (stdout, cut_out), (stderr, cut_err) = await reading
    except BaseException:  # cancelled: the command must not outlive the call
        kill_tree()
        reading.cancel()
        raise
    finally:
        if aborted is not None:
            aborted.cancel()
        unit.release()
    return CommandResult(
        stdout.decode("utf-8", "replace"), stderr.decode("utf-8", "replace"), process.returncode, killed,
        cut_out or cut_err,
    )
