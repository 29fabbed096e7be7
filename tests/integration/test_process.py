"""Process execution on the Environment seam: real shells, real process trees."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.support.processes import alive, processes_with
from tests.support.waiting import wait_until, wait_until_sync
from wolli.ai.abort import AbortController
from wolli.tools import process, proctree, supervisor
from wolli.tools.environment import ExecOptions, create_host_environment
from wolli.tools.shell import ShellNotFoundError, resolve_shell, shell_env

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to watch pids")



async def read_pid(path, timeout: float = 5.0) -> int:
    await wait_until(lambda: path.exists() and path.read_text().strip().isdigit(), timeout, f"{path}")
    return int(path.read_text().strip())


@pytest.fixture
def reap():
    """Pids a test leaves running on purpose; killed afterwards whatever happens."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@pytest.fixture
def env(tmp_path):
    return create_host_environment(str(tmp_path))


# ---------------------------------------------------------------------------- basics


async def test_stdout_and_stderr_merged_with_exit_code(env):
    result = await env.exec("echo out; echo err >&2; exit 3")
    assert result.exit_code == 3
    assert result.output == "out\nerr\n"
    assert not result.timed_out and not result.aborted


async def test_on_data_streams_bytes_and_leaves_output_empty(env):
    chunks: list[bytes] = []
    result = await env.exec("printf 'a\\n'; printf 'b\\n' >&2", None, ExecOptions(on_data=chunks.append))
    assert b"".join(chunks) == b"a\nb\n"
    assert result.output == ""
    assert result.exit_code == 0


async def test_stdin_is_dev_null(env):
    result = await env.exec("cat; echo done", None, ExecOptions(timeout=10))
    assert result.output == "done\n"
    assert not result.timed_out


async def test_cwd_and_extra_env(env, tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    result = await env.exec('pwd; echo "$WOLLI_TEST_VAR"', str(sub), ExecOptions(env={"WOLLI_TEST_VAR": "v1"}))
    assert result.output == f"{sub}\nv1\n"


async def test_missing_cwd_is_a_clear_error(env, tmp_path):
    with pytest.raises(FileNotFoundError, match="Working directory does not exist"):
        await env.exec("echo hi", str(tmp_path / "nope"))


async def test_signal_death_reports_shell_style_code(env):
    result = await env.exec("kill -9 $$")
    assert result.exit_code == 128 + signal.SIGKILL


async def test_large_output_through_on_data_is_complete(env):
    total = 0

    def count(data: bytes) -> None:
        nonlocal total
        total += len(data)

    result = await env.exec("head -c 5000000 /dev/zero", None, ExecOptions(on_data=count))
    assert result.exit_code == 0
    assert total == 5_000_000


async def test_no_controlling_terminal(env):
    # A new session has no tty, so ssh/git cannot prompt on /dev/tty and hang.
    result = await env.exec("exec 3</dev/tty && echo has-tty || echo no-tty")
    assert "no-tty" in result.output


# ---------------------------------------------------------------------------- shells


def test_resolve_shell_prefers_bash():
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash on PATH")
    assert resolve_shell(None) == bash


def test_resolve_shell_rejects_missing_configured_shell(tmp_path):
    with pytest.raises(ShellNotFoundError, match="shell_path setting"):
        resolve_shell(str(tmp_path / "no-such-shell"))
    assert resolve_shell("sh") == shutil.which("sh")


async def test_configured_shell_path_is_used(tmp_path):
    log = tmp_path / "args.log"
    shell = tmp_path / "myshell"
    shell.write_text(f'#!/bin/sh\nprintf "%s|" "$@" > "{log}"\nexec /bin/sh "$@"\n')
    shell.chmod(0o755)
    env = create_host_environment(str(tmp_path), shell_path=str(shell))
    result = await env.exec("echo via-custom")
    assert result.output == "via-custom\n"
    assert log.read_text() == "-c|echo via-custom|"


def test_shell_env_sanitizes_and_applies_extra(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("WOLLI_KEEP", "yes")
    env = shell_env({"PAGER": "less", "X": "1"})
    assert "COLUMNS" not in env
    assert env["WOLLI_KEEP"] == "yes"
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["PAGER"] == "less" and env["X"] == "1"


# ---------------------------------------------------------------------------- killing trees


async def test_timeout_kills_background_grandchild(env, tmp_path, reap):
    grow = tmp_path / "grow.txt"
    pidfile = tmp_path / "child.pid"
    command = (
        f"(while true; do echo x >> '{grow}'; sleep 0.01; done) & echo $! > '{pidfile}'; sleep 30"
    )
    started = time.monotonic()
    result = await env.exec(command, None, ExecOptions(timeout=0.5))
    assert time.monotonic() - started < 5
    assert result.timed_out and result.exit_code is None
    pid = await read_pid(pidfile)
    reap.append(pid)
    await wait_until(lambda: not alive(pid), what="grandchild to die")
    size = grow.stat().st_size
    # Nothing in the tree is left to write; a fresh command to the same file proves I/O works.
    await env.exec(f"echo marker >> '{grow}'")
    assert grow.read_text().endswith("x\nmarker\n")
    assert grow.stat().st_size == size + len("marker\n")


async def test_sigterm_ignoring_grandchild_gets_sigkill(env, tmp_path, reap):
    pidfile = tmp_path / "stubborn.pid"
    command = (
        f"(trap '' TERM; echo $BASHPID > '{pidfile}'; while true; do sleep 0.05; done) & "
        f"sleep 30"
    )
    if "bash" not in os.path.basename(resolve_shell(None)):
        pytest.skip("needs bash for $BASHPID")
    task = asyncio.create_task(env.exec(command, None, ExecOptions(timeout=30)))
    pid = await read_pid(pidfile)
    reap.append(pid)
    task.cancel()  # cancellation also kills the tree, straight with SIGKILL
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until(lambda: not alive(pid), what="cancelled tree to die")

    pidfile.unlink()
    result_task = asyncio.create_task(env.exec(command, None, ExecOptions(timeout=0.3)))
    pid = await read_pid(pidfile)
    reap.append(pid)
    result = await result_task
    assert result.timed_out
    await wait_until(lambda: not alive(pid), what="stubborn grandchild to be SIGKILLed")


@pytest.mark.skipif(shutil.which("setsid") is None or not sys.platform.startswith("linux"), reason="setsid")
async def test_child_that_left_the_group_is_killed_too(env, tmp_path, reap):
    pidfile = tmp_path / "escapee.pid"
    command = f"setsid sh -c 'echo $$ > \"{pidfile}\"; exec sleep 30' & sleep 30"
    task = asyncio.create_task(env.exec(command, None, ExecOptions(timeout=30)))
    pid = await read_pid(pidfile)
    reap.append(pid)
    assert os.getpgid(pid) != os.getpgid(os.getpid())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until(lambda: not alive(pid), what="escaped child to die")


async def test_abort_kills_tree_and_reports_aborted(env, tmp_path, reap):
    pidfile = tmp_path / "sleeper.pid"
    controller = AbortController()
    chunks: list[bytes] = []
    command = f"echo ready; sleep 30 & echo $! > '{pidfile}'; wait"
    task = asyncio.create_task(env.exec(command, None, ExecOptions(signal=controller.signal, on_data=chunks.append)))
    pid = await read_pid(pidfile)
    reap.append(pid)
    await wait_until(lambda: b"ready" in b"".join(chunks), what="first output")
    controller.abort()
    result = await asyncio.wait_for(task, 5)
    assert result.aborted and not result.timed_out and result.exit_code is None
    await wait_until(lambda: not alive(pid), what="sleeper to die")


async def test_abort_from_another_thread(env, tmp_path, reap):
    pidfile = tmp_path / "shell.pid"
    controller = AbortController()
    task = asyncio.create_task(
        env.exec(f"echo $$ > '{pidfile}'; sleep 30", None, ExecOptions(signal=controller.signal))
    )
    pid = await read_pid(pidfile)
    reap.append(pid)
    await asyncio.to_thread(controller.abort)
    result = await asyncio.wait_for(task, 5)
    assert result.aborted
    await wait_until(lambda: not alive(pid), what="shell to die")


async def test_already_aborted_signal_runs_nothing(env, tmp_path):
    controller = AbortController()
    controller.abort()
    marker = tmp_path / "ran"
    result = await env.exec(f"touch '{marker}'", None, ExecOptions(signal=controller.signal))
    assert result.aborted and result.exit_code is None
    assert not marker.exists()


async def test_failing_on_data_stops_the_command_and_raises(env, tmp_path, reap):
    pidfile = tmp_path / "shell.pid"

    def broken(data: bytes) -> None:
        raise ValueError("display broke")

    with pytest.raises(ValueError, match="display broke"):
        await asyncio.wait_for(
            env.exec(f"echo $$ > '{pidfile}'; echo hi; sleep 30", None, ExecOptions(on_data=broken)), 10
        )
    pid = await read_pid(pidfile)
    reap.append(pid)
    await wait_until(lambda: not alive(pid), what="shell to die")


# ---------------------------------------------------------------------------- daemons


async def test_background_daemon_holding_pipe_does_not_hang(env, reap):
    result = await asyncio.wait_for(env.exec("sleep 30 & echo $!; echo started"), 5)
    pid, rest = result.output.split("\n", 1)
    reap.append(int(pid))
    assert rest == "started\n"
    assert result.exit_code == 0
    assert alive(int(pid)), "the daemon is the user's business; finishing must not kill it"


async def test_nohup_daemon_with_redirects_returns_at_once(env, reap):
    started = time.monotonic()
    result = await asyncio.wait_for(env.exec("nohup sleep 30 >/dev/null 2>&1 & echo $!"), 5)
    reap.append(int(result.output))
    assert time.monotonic() - started < process.DRAIN_CAP + 2


async def test_daemon_writing_to_inherited_stdout_survives(env, tmp_path, reap):
    ticks = tmp_path / "ticks"
    command = (
        f"(while true; do echo tick; echo t >> '{ticks}'; sleep 0.02; done) & echo $!; echo started"
    )
    chunks: list[bytes] = []
    result = await asyncio.wait_for(env.exec(command, None, ExecOptions(on_data=chunks.append)), 5)
    assert result.exit_code == 0
    # The daemon's first "tick" may come out before the parent's `echo $!`: find the pid line.
    pid = int(next(line for line in b"".join(chunks).split(b"\n") if line.strip().isdigit()))
    reap.append(pid)
    seen = len(chunks)
    count = ticks.read_text().count("t")
    # It keeps writing to the pipe after we returned: no SIGPIPE, and no more data for us.
    await wait_until(lambda: ticks.read_text().count("t") > count + 10, what="daemon to keep running")
    assert alive(pid)
    assert len(chunks) == seen


async def test_cancel_while_starting_leaves_nothing_behind(env):
    marker = "31.4159"  # a sleep length nobody else uses
    task = asyncio.create_task(
        env.exec(f"(trap '' TERM; sleep {marker}) & sleep {marker}", None, ExecOptions(timeout=30))
    )
    await asyncio.sleep(0)  # the task has asked for the spawn and now waits on it
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    await wait_until(lambda: not processes_with(marker), what="every process of the command to die")


# ---------------------------------------------------------------------------- supervision


async def test_command_is_supervised_while_it_runs_and_released_after(env, tmp_path):
    before = supervisor.supervised_count()
    chunks: list[bytes] = []
    task = asyncio.create_task(
        env.exec('echo "tags=$WOLLI_SUPERVISED"; sleep 30', None, ExecOptions(timeout=30, on_data=chunks.append))
    )
    await wait_until(lambda: b"tags=" in b"".join(chunks), what="the command to start")
    assert supervisor.supervised_count() == before + 1
    assert supervisor.watchdog_pid() is not None and supervisor.watchdog_error() is None
    [tag] = b"".join(chunks).decode().split("tags=")[1].split()  # the command's own tag
    assert proctree.tagged({tag})  # the shell (and the sleep) carry it
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert supervisor.supervised_count() == before
    await env.exec("exit 3", None, ExecOptions(timeout=5))
    result = await env.exec("sleep 30", None, ExecOptions(timeout=0.2))
    assert result.timed_out
    assert supervisor.supervised_count() == before  # released whether it ended or was killed


async def test_cancel_while_starting_releases_once_killed(env):
    before = supervisor.supervised_count()
    task = asyncio.create_task(env.exec("sleep 30", None, ExecOptions(timeout=30)))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until(lambda: supervisor.supervised_count() == before, what="the unit to be released")


def test_supervision_api_registers_and_releases(reap):
    before = supervisor.supervised_count()
    proc = supervisor.spawn_supervised(["sleep", "30"], stdin=subprocess.DEVNULL)
    reap.append(proc.pid)
    unit = proc.supervision
    assert supervisor.supervised_count() == before + 1
    assert os.getpgid(proc.pid) == proc.pid  # a session of its own by default
    # The tag shows once the child has exec'd (before, /proc shows the parent's environment).
    wait_until_sync(lambda: proctree.tagged({unit.tag}) == {proc.pid}, what="the tag to show")
    proc.kill()
    proc.wait()
    unit.release()
    unit.release()  # twice is fine
    assert supervisor.supervised_count() == before
    with pytest.raises(RuntimeError, match="released"):
        unit.add(proc.pid)
    with supervisor.supervise() as other:
        assert other.env({"A": "1", proctree.TAGS_VAR: "outer"})[proctree.TAGS_VAR] == f"outer {other.tag}"
        with pytest.raises(ValueError, match="pid 1"):
            other.add(1)
    assert other.released and supervisor.supervised_count() == before


def test_ps_snapshot_matches_proc(reap):
    if shutil.which("ps") is None:
        pytest.skip("no ps")
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    reap.append(proc.pid)
    from_proc = proctree.snapshot(use_proc=True)
    from_ps = proctree.snapshot(use_proc=False)
    assert from_proc is not None and from_ps is not None
    for table in (from_proc, from_ps):
        assert proc.pid in table.live
        assert proc.pid in table.children[os.getpid()]
        assert table.groups[proc.pid] == [proc.pid]
        assert table.tree([os.getpid()]) >= {proc.pid}
