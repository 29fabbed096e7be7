"""Tool processes die with Wolli, however Wolli dies: real programs, real ``kill -9``.

Each test runs a small Python program (or ``python -m wolli -p``) that starts commands
through the bash tool's own code path, kills that program with SIGKILL, and waits until
every process of the command's tree is gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from tests.support import wire_answers as W
from tests.support.loopback import LoopbackServer
from tests.support.processes import alive, processes_with
from tests.support.waiting import wait_until_sync
from tests.support.wire_answers import CHAT, Call, answer

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc to watch pids")

# Starts the commands given on its command line through the bash tool (create_bash_tool ->
# run_bash -> Environment.exec -> run_shell_command), writes the watchdog's pid to
# watchdog.pid and "started" to started once every command runs, then waits forever.
PROGRAM = textwrap.dedent(
    """
    import asyncio, os, signal, subprocess, sys, time
    from wolli.tools.process import run_command
    from wolli.tools import supervisor
    from wolli.tools.bash import create_bash_tool
    from wolli.tools.environment import create_host_environment

    work, mode, commands = sys.argv[1], sys.argv[2], sys.argv[3:]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Wolli handles Ctrl+C itself
    if mode == "no-python":
        sys.executable = "/nonexistent/python3"

    def note(name, text):
        with open(os.path.join(work, name + ".tmp"), "w") as fh:
            fh.write(str(text))
        os.replace(os.path.join(work, name + ".tmp"), os.path.join(work, name))

    async def wait_for(path):
        while not os.path.exists(os.path.join(work, path)):
            await asyncio.sleep(0.005)

    async def main():
        tool = create_bash_tool(create_host_environment(work))
        tasks = []
        for index, command in enumerate(commands):
            last = index == len(commands) - 1
            if mode == "exec" and last:  # what extensions start: wolli.exec, a tool factory's api.exec
                task = asyncio.create_task(run_command(command, cwd=work))
            elif mode == "helper" and last:  # a helper program Wolli runs itself (file listing)
                task = asyncio.create_task(asyncio.to_thread(
                    supervisor.run_supervised, ["/bin/sh", "-c", command], cwd=work, capture_output=True))
            else:
                params = tool.validate({"command": command})
                task = asyncio.create_task(tool.execute(f"c{index}", params, None, None, None))
            task.add_done_callback(lambda _, index=index: note(f"done{index}", "yes"))
            tasks.append(task)
            await wait_for(f"ready{index}")
            if mode == "kill-watchdog" and index == 0:
                old = supervisor.watchdog_pid()
                os.kill(old, signal.SIGKILL)
                note("old-watchdog.pid", old)
        if mode == "api":  # a server started the way extensions and MCP clients will
            server = supervisor.spawn_supervised(
                [sys.executable, "-c", "import time; time.sleep(60)"], stdin=subprocess.DEVNULL)
            note("server.pid", server.pid)
        if mode == "fork":
            child = os.fork()
            if child == 0:  # a forked copy of Wolli must not keep the watchdog's pipe open
                time.sleep(120)
                os._exit(0)
            note("forked.pid", child)
        note("watchdog.pid", supervisor.watchdog_pid())
        note("started", "yes")
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)

# The tree every test starts: the shell, a child in its group, a child that left the group
# with setsid, and an orphan whose parent (in another session) exited at once.
TREE = (
    "echo $$ > shell{index}.pid; "
    "setsid sleep 61 & echo $! > escaped{index}.pid; "
    "setsid sh -c 'sleep 62 & echo $! > orphan{index}.pid'; "
    "sleep 60 & echo $! > child{index}.pid; "
    "echo > ready{index}; wait"
)
PARTS = ("shell", "child", "escaped", "orphan")


def pid_in(folder: Path, name: str) -> int:
    return int((folder / name).read_text().strip())


@pytest.fixture
def reap(tmp_path):
    """Pids a test may leave running, and every pid file of its commands: killed afterwards."""
    pids: list[int] = []
    yield pids
    for path in tmp_path.glob("*.pid"):
        if path.read_text().strip().isdigit():
            pids.append(int(path.read_text()))
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class Program:
    def __init__(self, work: Path, mode: str, commands: list[str], reap: list[int]) -> None:
        self.work = work
        script = work / "program.py"
        script.write_text(PROGRAM)
        self.process = subprocess.Popen(
            [sys.executable, str(script), str(work), mode, *commands],
            cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,  # its own group, like a terminal job
        )
        self.reap = reap
        reap.append(self.process.pid)
        wait_until_sync(self._started, what="the program to start its commands")
        self.watchdog = pid_in(work, "watchdog.pid")

    def _started(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"the program exited: {self.process.stderr.read().decode()}")
        return (self.work / "started").exists()

    def pids(self, *names: str) -> list[int]:
        return [pid_in(self.work, name) for name in names]

    def tree(self, index: int, parts: tuple[str, ...] = PARTS) -> list[int]:
        return self.pids(*(f"{part}{index}.pid" for part in parts))

    def kill9(self) -> None:
        self.process.kill()
        self.process.wait(10)


def tree_commands(count: int = 1) -> list[str]:
    return [TREE.format(index=i) for i in range(count)]


def assert_all_die(pids: list[int], what: str) -> None:
    wait_until_sync(lambda: not any(alive(p) for p in pids), timeout=10, what=what)


# ---------------------------------------------------------------------------- kill -9


def test_sigkilled_program_takes_the_whole_tree_with_it(tmp_path, reap):
    program = Program(tmp_path, "plain", tree_commands(), reap)
    pids = program.tree(0)
    assert all(alive(p) for p in pids)
    watchdog = program.watchdog
    assert alive(watchdog)
    # Its own session: the terminal's Ctrl+C and hangup (sent to the foreground group) and a
    # kill of Wolli's group never reach it.
    assert os.getsid(watchdog) == watchdog != os.getsid(program.process.pid)
    os.killpg(program.process.pid, signal.SIGINT)  # Ctrl+C in Wolli's terminal
    os.kill(watchdog, signal.SIGINT)  # and even sent to the watchdog itself
    os.kill(watchdog, signal.SIGHUP)

    program.kill9()
    assert_all_die(pids, "every process of the command's tree to die")
    # Its job done, the watchdog exits too.
    wait_until_sync(lambda: not alive(watchdog), timeout=10, what="the watchdog to exit")


def test_two_commands_and_a_restarted_watchdog(tmp_path, reap):
    # Someone kills the watchdog; the next spawn starts a new one that knows both commands.
    first, second = tree_commands(2)
    program = Program(tmp_path, "kill-watchdog", [first, second], reap)
    old = pid_in(tmp_path, "old-watchdog.pid")
    assert program.watchdog != old and not alive(old)
    pids = program.tree(0) + program.tree(1)
    program.kill9()
    assert_all_die(pids, "both commands' trees to die")


def test_without_python_the_watchdog_still_kills_the_group(tmp_path, reap):
    # The sweep cannot start (no interpreter): the shell's fallback kills registered groups.
    program = Program(tmp_path, "no-python", tree_commands(), reap)
    pids = program.tree(0, ("shell", "child"))  # the others left the group: out of its reach
    program.kill9()
    assert_all_die(pids, "the command's group to die")


def test_a_forked_copy_does_not_keep_the_watchdog_waiting(tmp_path, reap):
    program = Program(tmp_path, "fork", tree_commands(), reap)
    [forked] = program.pids("forked.pid")
    pids = program.tree(0)
    program.kill9()
    assert_all_die(pids, "the tree to die although a fork of the program lives on")
    assert alive(forked)


def test_spawn_supervised_server_dies_with_the_program(tmp_path, reap):
    program = Program(tmp_path, "api", tree_commands(), reap)
    pids = program.pids("server.pid") + program.tree(0)
    program.kill9()
    assert_all_die(pids, "the server and the command to die")


@pytest.mark.parametrize("mode", ["exec", "helper"])
def test_extension_exec_and_helper_programs_die_with_the_program(tmp_path, reap, mode):
    # The last command goes through wolli.exec (extensions, tool factories) or run_supervised
    # (the TUI's file listing) instead of the bash tool.
    program = Program(tmp_path, mode, tree_commands(2), reap)
    pids = program.tree(0) + program.tree(1)
    assert all(alive(p) for p in pids)
    program.kill9()
    assert_all_die(pids, f"the trees started through the bash tool and {mode} to die")


def test_extension_exec_that_finishes_or_times_out_releases_its_unit(tmp_path):
    from wolli.tools import supervisor
    from wolli.tools.process import run_command

    async def main():
        before = supervisor.supervised_count()
        done = await run_command("echo hi", cwd=str(tmp_path))
        slow = await run_command("sleep 30 & echo $! > bg.pid; wait", cwd=str(tmp_path), timeout=0.2)
        return before, done, slow

    import asyncio

    before, done, slow = asyncio.run(main())
    assert (done.stdout, done.code, done.killed) == ("hi\n", 0, False)
    assert slow.killed
    assert_all_die([pid_in(tmp_path, "bg.pid")], "the timed-out command's child to die")
    assert supervisor.supervised_count() == before


def test_run_supervised_kills_the_group_on_timeout(tmp_path):
    from wolli.tools import supervisor

    with pytest.raises(subprocess.TimeoutExpired):
        supervisor.run_supervised(
            ["/bin/sh", "-c", "sleep 30 & echo $! > bg.pid; wait"], cwd=tmp_path, timeout=0.5)
    assert_all_die([pid_in(tmp_path, "bg.pid")], "the helper's child to die")
    result = supervisor.run_supervised(["/bin/sh", "-c", "cat; echo err >&2"], input=b"in", capture_output=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"in", b"err\n")


def test_finished_command_leaves_its_daemon_to_the_user(tmp_path, reap):
    # Same as after a normal exit: a daemon started with & by a command that has returned
    # is not Wolli's to kill. The still-running second command proves the sweep ran.
    daemon = "sleep 63 & echo $! > daemon.pid; echo > ready0"
    program = Program(tmp_path, "plain", [daemon, TREE.format(index=1)], reap)
    [daemon_pid] = program.pids("daemon.pid")
    # The tool call has returned, so its unit is released.
    wait_until_sync(lambda: (tmp_path / "done0").exists(), what="the daemon's command to finish")
    pids = program.tree(1)
    program.kill9()
    assert_all_die(pids, "the running command's tree to die")
    wait_until_sync(lambda: not alive(program.watchdog), timeout=10, what="the sweep to finish")
    assert alive(daemon_pid)



# ---------------------------------------------------------------------------- the real CLI


def test_kill_9_of_wolli_ends_its_bash_tool_command(project, wolli_home, loopback: LoopbackServer, reap):
    W.write_models_json(wolli_home, loopback.url)
    seconds = f"40.{uuid.uuid4().int % 10**9:09d}"  # `sleep 40.<unique>`: findable in /proc
    loopback.push(answer(CHAT, "Sleeping.", calls=[Call("bash", {"command": f"sleep {seconds}"})]))
    process = subprocess.Popen(
        [sys.executable, "-m", "wolli", "-p", "--model", W.model_ref(CHAT), "sleep a while"],
        cwd=project, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=os.environ.copy(),
    )
    reap.append(process.pid)
    try:
        wait_until_sync(lambda: processes_with(seconds) or process.poll() is not None,
                        what="the bash tool's sleep to start")
        assert process.poll() is None, process.communicate()[1].decode()
        sleepers = processes_with(seconds)
        reap.extend(sleepers)
        watchdogs = [p for p in processes_with("wolli-watchdog") if _watchdog_of(p) == process.pid]
        assert len(watchdogs) == 1
        reap.extend(watchdogs)
        process.kill()
        process.communicate(timeout=10)
        assert_all_die(sleepers, "the sleep to die with wolli")
        assert_all_die(watchdogs, "the watchdog to exit")
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def _watchdog_of(pid: int) -> int | None:
    """The Wolli pid a watchdog serves: the last word of its command line."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            last = fh.read().rstrip(b"\0").split(b"\0")[-1]
    except OSError:
        return None
    return int(last) if last.isdigit() else None
