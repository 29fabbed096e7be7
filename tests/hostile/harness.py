"""Running ``wolli`` as a real subprocess under a memory limit and a time limit.

Every hostile case runs the command the way a user would, in its own process, with
``RLIMIT_AS`` (address space) and ``RLIMIT_CPU`` set before it starts, and a wall-clock
deadline after which the harness kills it. The result tells whether it ended by itself in
time, its exit status, what it printed, and its peak resident memory: ``VmHWM`` of the
process itself, sampled by a thread from the moment it exists until it ends.

``wait4``'s ``ru_maxrss`` is no measure of it: the kernel folds the forked copy of the test
process (before ``exec``) into it, with whatever the test holds (a case's 200 MB of input
read 444-569 MiB that way on a loaded machine, when the child ended before the first
sample). It is used only when no sample was taken at all. Large inputs are given as chunks
(an iterable of ``bytes``), so the test process never holds them whole.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

# Generous for Python + httpx + pydantic (a print-mode run peaks near 80 MiB resident), far
# below what the defects reached (24 GB reading /dev/zero, 860 MB for one edit).
MEMORY_LIMIT_MB = 1024
TIME_LIMIT_S = 60.0


@dataclass
class Finished:
    returncode: int | None  # None: still running at the deadline (then killed)
    stdout: str
    stderr: str
    seconds: float
    max_rss_mb: float
    timed_out: bool

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def _limits(memory_mb: int, cpu_s: int) -> Callable[[], None]:
    def apply() -> None:
        os.setsid()  # its own process group: the harness can end everything it started
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 5))

    return apply


class Running:
    """A started ``wolli``; :meth:`finish` waits for it (or kills it at the deadline)."""

    def __init__(self, args: list[str], *, cwd: Path, stdin: bytes | Iterable[bytes] | None = None,
                 env: dict[str, str] | None = None,
                 memory_mb: int = MEMORY_LIMIT_MB, seconds: float = TIME_LIMIT_S,
                 argv0: list[str] | None = None, keep_stdin_open: bool = False) -> None:
        self.seconds = seconds
        self._out = tempfile.TemporaryFile()
        self._err = tempfile.TemporaryFile()
        environment = {**os.environ, "MALLOC_ARENA_MAX": "2", "PYTHONUNBUFFERED": "1", **(env or {})}
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [*(argv0 or [sys.executable, "-m", "wolli"]), *args],
            cwd=cwd,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=self._out,
            stderr=self._err,
            env=environment,
            preexec_fn=_limits(memory_mb, int(seconds) + 5),
        )
        self._high_water = 0
        self._sampling = True
        self._sampler = threading.Thread(target=self._sample, name="vmhwm-sampler", daemon=True)
        self._sampler.start()  # before stdin is written: writing it can take the child's whole life
        if stdin is not None:
            assert self.proc.stdin is not None
            try:
                for chunk in [stdin] if isinstance(stdin, bytes) else stdin:
                    self.proc.stdin.write(chunk)
                self.proc.stdin.flush()
                if not keep_stdin_open:  # an interactive client keeps its end open
                    self.proc.stdin.close()
            except BrokenPipeError:  # it stopped reading (a cap): what it read is the test
                pass

    def signal(self, number: int) -> None:
        os.kill(self.proc.pid, number)  # not Popen.send_signal: its poll() would reap the child

    def stderr_so_far(self) -> str:
        self._err.seek(0)
        return self._err.read().decode("utf-8", "replace")

    def _high_water_kb(self) -> int | None:
        try:
            with open(f"/proc/{self.proc.pid}/status") as status:
                for line in status:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except (OSError, ValueError):
            return None
        return None

    def _sample(self) -> None:
        while self._sampling:
            kb = self._high_water_kb()
            if kb is None:  # gone (or a zombie: its memory is already released)
                return
            self._high_water = max(self._high_water, kb)
            time.sleep(0.005)

    def finish(self, seconds: float | None = None) -> Finished:
        deadline = self.started + (seconds if seconds is not None else self.seconds)
        status: int | None = None
        usage = None
        while True:
            pid, raw, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                status = os.waitstatus_to_exitcode(raw)
                break
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
        timed_out = status is None
        if timed_out:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            _, raw, usage = os.wait4(self.proc.pid, 0)
        else:
            try:  # what it left behind (a tool's process group) goes with it
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
        self._sampling = False
        self._sampler.join()
        high_water = self._high_water
        self.proc.returncode = status if status is not None else -9
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        elapsed = time.monotonic() - self.started
        self._out.seek(0)
        self._err.seek(0)
        result = Finished(
            returncode=status,
            stdout=self._out.read().decode("utf-8", "replace"),
            stderr=self._err.read().decode("utf-8", "replace"),
            seconds=elapsed,
            max_rss_mb=(high_water or (usage.ru_maxrss if usage is not None else 0)) / 1024,
            timed_out=timed_out,
        )
        self._out.close()
        self._err.close()
        return result


def run(args: list[str], **kwargs: object) -> Finished:
    seconds = kwargs.get("seconds", TIME_LIMIT_S)
    return Running(args, **kwargs).finish(seconds)  # type: ignore[arg-type]


def assert_bounded(result: Finished, *, seconds: float, memory_mb: float = MEMORY_LIMIT_MB) -> None:
    """Ended by itself within ``seconds`` and stayed under ``memory_mb`` resident."""
    assert not result.timed_out, f"still running after {result.seconds:.1f}s:\n{result.output[-3000:]}"
    assert result.seconds <= seconds, f"took {result.seconds:.1f}s (limit {seconds}s):\n{result.output[-3000:]}"
    assert result.max_rss_mb < memory_mb, f"peak RSS {result.max_rss_mb:.0f} MiB (limit {memory_mb} MiB)"
