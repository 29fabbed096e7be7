"""SIGINT, SIGTERM and SIGHUP end every mode within 5 seconds, even while a tool is blocked
in a system call, and what was complete before the signal is in the session file.

The blocking tools come from an extension (the built-in file tools refuse FIFOs): ``block``
is a synchronous tool (it runs in a worker thread, which must be abandoned, not joined) and
``block_loop`` an async one that blocks the event loop itself (so no loop callback can run:
only the signal handler and the exit timer are left). Both write a marker file, then open a
FIFO nobody will ever write to; the marker holds the process id (the one to signal).
"""

from __future__ import annotations

import errno
import os
import shlex
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.waiting import wait_for_value_sync, wait_until_sync

from .conftest import MODEL, Project
from .harness import assert_bounded

EXTENSION = '''
import os
from pathlib import Path

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def extension(wolli):
    def block(tool_call_id, params, signal, on_update, ctx):
        Path(params["path"] + ".opening").write_text(str(os.getpid()))
        with open(params["path"]) as fh:
            return fh.read()

    async def block_loop(tool_call_id, params, signal, on_update, ctx):
        Path(params["path"] + ".opening").write_text(str(os.getpid()))
        with open(params["path"]) as fh:
            return fh.read()

    wolli.register_tool({"name": "block", "description": "Open a file and wait.", "parameters": SCHEMA,
                         "execute": block})
    wolli.register_tool({"name": "block_loop", "description": "Open a file on the loop.", "parameters": SCHEMA,
                         "execute": block_loop})
'''
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
GRACE_S = 5.0


def blocked_run(project: Project, tool: str, *mode: str):
    os.mkfifo(project.root / "pipe")
    (project.root / "blocking.py").write_text(EXTENSION)
    project.server.push(tool_call_answer(tool, {"path": str(project.root / "pipe")}), text_answer("never"))
    # yolo: the blocking tool must run in the interactive modes too (they ask by default)
    return ["-e", "blocking.py", "--permission-mode", "yolo", *MODEL, *mode]


def _in_fifo_open(pid: int) -> bool | None:
    """Whether a thread of ``pid`` sleeps in the kernel's FIFO open (``wait_for_partner``);
    None where the kernel hides wait channels (they all read "0")."""
    try:
        channels = [(task / "wchan").read_text() for task in Path(f"/proc/{pid}/task").iterdir()]
    except OSError:
        return False
    if all(channel in ("", "0") for channel in channels):
        return None
    return "wait_for_partner" in channels


def _writer_once_read(fifo: Path) -> int | None:
    """The FIFO opened for writing, without waiting: possible only once a reader is inside
    its open() (else ENXIO, and None)."""
    try:
        return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            return None
        raise


def wait_blocked(project: Project) -> None:
    """Until the tool sleeps in the kernel. Where wait channels can be read: in the FIFO's
    open(). Where the kernel hides them: the test becomes the FIFO's writer the moment the
    tool is inside open() and holds that end until the test ends, so the tool goes on into
    read() and sleeps there (a pipe with a writer and no data), never finishing."""
    marker = project.root / "pipe.opening"
    wait_until_sync(lambda: marker.exists() and marker.read_text().strip().isdigit(), 20, "the tool to block")
    pid = int(marker.read_text())
    if _in_fifo_open(pid) is None:
        writer = wait_for_value_sync(lambda: _writer_once_read(project.root / "pipe"), lambda fd: fd is not None,
                                     20, lambda _: "the tool never opened the FIFO")
        assert writer is not None
        project.on_teardown(lambda: os.close(writer))
        return
    wait_until_sync(lambda: bool(_in_fifo_open(pid)), 20, "the tool to sleep in open() of the FIFO")


def assert_complete_entries_kept(project: Project) -> None:
    """The prompt and the answer that asked for the tool are complete: both are on disk."""
    messages = project.messages()
    assert messages[0]["role"] == "user"
    assert messages[1]["role"] == "assistant" and messages[1]["content"][-1]["type"] == "toolCall"


@pytest.mark.parametrize("number", SIGNALS, ids=lambda n: signal.Signals(n).name)
@pytest.mark.parametrize("tool", ["block", "block_loop"])
def test_print_mode_ends_on_a_signal_while_a_tool_blocks(hostile, tool, number):
    args = blocked_run(hostile, tool, "-p", "go")
    running = hostile.start(*args, seconds=40)
    wait_blocked(hostile)
    sent = time.monotonic()
    running.signal(number)
    result = running.finish()
    assert_bounded(result, seconds=40)
    assert time.monotonic() - sent < GRACE_S + 0.5, f"ended {time.monotonic() - sent:.1f}s after the signal"
    assert result.returncode == 128 + number, result.output
    assert "interrupted" in result.stderr or "exiting now" in result.stderr
    assert_complete_entries_kept(hostile)


@pytest.mark.parametrize("mode", [["--mode", "json", "go"], ["--mode", "rpc"], ["--plain"]],
                         ids=["json", "rpc", "plain"])
def test_other_headless_modes_end_on_sigterm_while_the_loop_is_blocked(hostile, mode):
    args = blocked_run(hostile, "block_loop", *mode)
    stdin = None
    if mode[-1] == "--mode" or "rpc" in mode:
        stdin = b'{"type": "prompt", "message": "go"}\n'
    elif "--plain" in mode:
        stdin = b"go\n"
    running = hostile.start(*args, seconds=40, stdin=stdin, keep_stdin_open="rpc" in mode or "--plain" in mode)
    wait_blocked(hostile)
    sent = time.monotonic()
    running.signal(signal.SIGTERM)
    result = running.finish()
    assert_bounded(result, seconds=40)
    assert time.monotonic() - sent < GRACE_S + 0.5, f"ended {time.monotonic() - sent:.1f}s after the signal"
    assert result.returncode == 128 + signal.SIGTERM, result.output
    assert_complete_entries_kept(hostile)


@pytest.mark.parametrize("number", SIGNALS, ids=lambda n: signal.Signals(n).name)
def test_the_tui_ends_on_a_signal_while_a_tool_blocks(hostile, number):
    tmux = pytest.importorskip("tests.e2e.tmux_terminal")
    args = blocked_run(hostile, "block", "go")
    env = {"WOLLI_HOME": str(hostile.home), "HOME": os.environ["HOME"]}
    status_file = hostile.root / "status"
    # The shell around it writes wolli's exit status (tmux reports a pane's status unreliably).
    command = " ".join(shlex.quote(part) for part in [sys.executable, "-m", "wolli", *args])
    terminal = tmux.TmuxTerminal(["sh", "-c", f"{command}; echo $? > {shlex.quote(str(status_file))}"],
                                 cwd=str(hostile.root), env=env)
    try:
        wait_blocked(hostile)
        pid = int((hostile.root / "pipe.opening").read_text())  # wolli's own, not the pane's shell
        sent = time.monotonic()
        os.kill(pid, number)
        wait_until_sync(lambda: status_file.exists() and status_file.read_text().strip() != "", GRACE_S + 5,
                        "wolli to exit")
        assert time.monotonic() - sent < GRACE_S + 0.5, f"ended {time.monotonic() - sent:.1f}s after the signal"
        assert int(status_file.read_text()) == 128 + number
    finally:
        terminal.close()
    assert_complete_entries_kept(hostile)
