"""Processes Wolli starts die with Wolli, however Wolli dies (even by SIGKILL).

A normal exit, SIGTERM and SIGHUP let Wolli kill its tools' process trees itself; SIGKILL,
the OOM killer or a crash do not. So every Wolli process gets one **watchdog**: a tiny
``/bin/sh`` loop started lazily on the first supervised spawn, reading a pipe whose only write
end Wolli holds. The kernel closes that end whenever Wolli dies, however it dies; the
watchdog sees EOF and runs ``proctree.py sweep`` on what is still registered, which SIGTERMs
and then SIGKILLs every process of those trees, including children that left their group
with ``setsid`` (see ``proctree.py``). Then it exits: it never outlives its job.

Why not ``PR_SET_PDEATHSIG``: it exists on Linux only, fires when the *thread* that forked
the child exits (tools may spawn from worker threads), signals only the direct child and not
its group or descendants, and needs a ``preexec_fn``, which makes every spawn slower.

The watchdog runs in a session of its own, so the terminal's Ctrl+C, Ctrl+Z and hangup never
reach it (it ignores SIGINT, SIGQUIT and SIGHUP as well). Each message Wolli sends is the
complete current state, one line of words (``g<pgid>``, ``p<pid>``, ``t<tag>``), so the shell
only keeps the last line and never grows. The tag is also put into the child's environment
(``WOLLI_SUPERVISED``): it finds a process whose parent is already gone, and one started in
the instant between the spawn and its registration (Linux).

A unit is released once its owner has ended it (or it finished by itself): what it left
running on purpose, e.g. a daemon started with ``&``, then belongs to the user, exactly as
after a normal exit.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from . import proctree
from .proctree import TAGS_VAR, live_tree, signal_tree

# What ``subprocess.Popen`` runs: a shell string, or a program and its arguments.
Command = str | Sequence[str | os.PathLike[str]]

# Ignores the terminal's signals, keeps the last state line, sweeps at EOF. Without Python (or
# if the sweep fails) it still kills the registered groups and pids.
_WATCHDOG = r"""
trap '' INT QUIT HUP
set -f
cd /
state=
while IFS= read -r line; do state=$line; done
[ -n "$state" ] || exit 0
"$1" -I -S "$2" sweep $state && exit 0
for word in $state; do
  case $word in
    g*) kill -s KILL -- "-${word#g}";;
    p*) kill -s KILL "${word#p}";;
  esac
done 2>/dev/null
exit 0
"""

WATCHDOG_NAME = "wolli-watchdog"  # $0 of the watchdog shell, visible in ps


class Supervision:
    """One supervised unit: the processes Wolli started for one purpose (a command, a server).

    Put :meth:`env` into the child's environment, register the child with :meth:`add` once it
    runs, and :meth:`release` the unit when you have ended it (or it ended by itself). Usable
    as a context manager that releases on exit.
    """

    __slots__ = ("tag", "_words", "_released")

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self._words: list[str] = [f"t{tag}"]
        self._released = False

    def env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: ``os.environ``) plus this unit's tag appended to WOLLI_SUPERVISED."""
        env = dict(os.environ if base is None else base)
        env[TAGS_VAR] = " ".join([*env.get(TAGS_VAR, "").split(), self.tag])
        return env

    def add(self, pid: int, *, group: bool = True) -> None:
        """Watch ``pid`` and its descendants; ``group=True`` says it leads its own process
        group (``start_new_session=True``), so the whole group is ended too. Never pass
        ``group=True`` for a child left in Wolli's own group."""
        if pid <= 1:
            raise ValueError(f"Cannot supervise pid {pid}: not a child process id.")
        _WATCHDOG_STATE.update(self, f"{'g' if group else 'p'}{pid}")

    def release(self) -> None:
        """Stop watching: what is still running is no longer ended when Wolli dies."""
        if not self._released:
            self._released = True
            _WATCHDOG_STATE.remove(self)

    @property
    def released(self) -> bool:
        return self._released

    def __enter__(self) -> Supervision:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"Supervision({self.tag!r}, {' '.join(self._words[1:]) or 'no processes'})"


class _WatchdogLink:
    """The client side: the unit table, the pipe, and (re)starting the watchdog."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.units: dict[int, Supervision] = {}
        self.fd: int | None = None
        self.pid: int | None = None
        self.popen: subprocess.Popen[bytes] | None = None
        self.error: str | None = None  # why supervision is not working, if it is not
        self.prefix = f"{os.getpid()}.{os.urandom(3).hex()}"
        self.counter = itertools.count(1)

    # ------------------------------------------------------------------ units

    def new(self) -> Supervision:
        unit = Supervision(f"{self.prefix}.{next(self.counter)}")
        with self.lock:
            self.units[id(unit)] = unit
            self._publish()
        return unit

    def update(self, unit: Supervision, word: str) -> None:
        with self.lock:
            if unit.released or id(unit) not in self.units:
                raise RuntimeError(f"{unit!r} was released; start a new one with supervise().")
            unit._words.append(word)
            self._publish()

    def remove(self, unit: Supervision) -> None:
        with self.lock:
            if self.units.pop(id(unit), None) is not None:
                self._publish()

    # ------------------------------------------------------------------ the pipe

    def _publish(self) -> None:
        """Send the whole state; restart a watchdog that died. Called with the lock held."""
        line = (" ".join(w for unit in self.units.values() for w in unit._words) + "\n").encode()
        for _attempt in range(2):
            if self.fd is None and not self._start():
                return
            try:
                self._write(line)
                return
            except OSError:  # the watchdog died (killed by someone): start another one
                self._close()
        self.error = "the watchdog process keeps dying"

    def _write(self, data: bytes) -> None:
        assert self.fd is not None
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    def _start(self) -> bool:
        python = sys.executable
        if not python:
            self.error = "no Python interpreter path (sys.executable is empty)"
            return False
        argv = ["/bin/sh", "-c", _WATCHDOG, WATCHDOG_NAME, python, os.path.abspath(proctree.__file__),
                str(os.getpid())]
        env = {"PATH": os.environ.get("PATH") or os.defpath, "LC_ALL": "C"}
        read_end, write_end = os.pipe()  # both close-on-exec: no other child inherits them
        try:
            try:
                self.pid = os.posix_spawn(
                    argv[0], argv, env,
                    file_actions=[
                        (os.POSIX_SPAWN_DUP2, read_end, 0),
                        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                        (os.POSIX_SPAWN_DUP2, 1, 2),
                    ],
                    setsid=True,
                )
            except (AttributeError, NotImplementedError):  # no posix_spawn or no POSIX_SPAWN_SETSID
                self.popen = subprocess.Popen(
                    argv, stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    env=env, start_new_session=True,
                )
                self.pid = self.popen.pid
        except OSError as exc:
            os.close(write_end)
            self.error = f"could not start the watchdog: {exc.strerror or exc}"
            return False
        finally:
            os.close(read_end)
        self.fd = write_end
        self.error = None
        return True

    def _close(self) -> None:
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None
        if self.popen is not None:
            self.popen.poll()
        elif self.pid is not None:
            try:  # reap the dead one so it does not linger as a zombie
                os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                pass
        self.pid = self.popen = None

    def after_fork_in_child(self) -> None:
        """A forked child is not Wolli: drop our write end so Wolli's death still shows as
        EOF, and start from scratch should the child supervise anything itself."""
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
        self.__init__()  # type: ignore[misc]


_WATCHDOG_STATE = _WatchdogLink()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_WATCHDOG_STATE.after_fork_in_child)


# ---------------------------------------------------------------------------- API


def supervise(pid: int | None = None, *, group: bool = True) -> Supervision:
    """Start a unit; its processes are ended if Wolli dies before :meth:`Supervision.release`.

    Call it *before* spawning and spawn with ``env=unit.env(...)``, so even a child started
    just before Wolli dies is found by its tag; then ``unit.add(child.pid)``. Passing ``pid``
    here does both steps at once for a process that already runs. Never raises: if the
    watchdog cannot run, the unit is inert and :func:`watchdog_error` says why.
    """
    unit = _WATCHDOG_STATE.new()
    if pid is not None:
        unit.add(pid, group=group)
    return unit


def spawn_supervised(args: Command, **kwargs: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(args, **kwargs)`` in a session of its own, ended if Wolli dies.

    ``start_new_session`` defaults to True (then the whole group is supervised); ``env``
    (default ``os.environ``) gets the unit's tag. The unit is ``proc.supervision``: release it
    after you have stopped the process and what it started.
    """
    kwargs.setdefault("start_new_session", True)
    unit = supervise()
    kwargs["env"] = unit.env(kwargs.get("env"))
    try:
        proc = subprocess.Popen(args, **kwargs)
    except BaseException:
        unit.release()
        raise
    leads_group = bool(kwargs["start_new_session"]) or kwargs.get("process_group") == 0
    unit.add(proc.pid, group=leads_group)
    proc.supervision = unit  # type: ignore[attr-defined]
    return proc


def run_supervised(args: Command, *, timeout: float | None = None, **kwargs: Any) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(args, ...)`` for a short helper program, ended if Wolli dies meanwhile.

    Takes ``capture_output``, ``input`` and the :func:`spawn_supervised` arguments. On
    timeout the helper's whole group is killed and ``subprocess.TimeoutExpired`` raised,
    as ``subprocess.run`` does (which kills only the direct child).
    """
    if kwargs.pop("capture_output", False):
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    data = kwargs.pop("input", None)
    if data is not None:
        kwargs["stdin"] = subprocess.PIPE
    leads_group = kwargs.setdefault("start_new_session", True)
    proc = spawn_supervised(args, **kwargs)
    try:
        out, err = proc.communicate(data, timeout=timeout)
    except BaseException:
        signal_tree(proc.pid if leads_group else None, {proc.pid, *live_tree(proc.pid, set())}, signal.SIGKILL)
        proc.communicate()
        raise
    finally:
        proc.supervision.release()  # type: ignore[attr-defined]
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def watchdog_pid() -> int | None:
    """The current watchdog's pid, or None before the first supervised spawn."""
    return _WATCHDOG_STATE.pid


def watchdog_error() -> str | None:
    """Why processes are not supervised, or None when they are (or nothing was spawned yet)."""
    return _WATCHDOG_STATE.error


def supervised_count() -> int:
    """How many units are registered (for tests and diagnostics)."""
    return len(_WATCHDOG_STATE.units)
