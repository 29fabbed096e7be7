"""``kill -9`` at random points of a tool loop: nothing complete is lost, nothing is left running.

Each iteration runs the real ``wolli -p`` against the loopback server, scripted with a tool
loop (write, read, then read and bash in one answer, then a streamed text answer), and kills
it with SIGKILL at one point drawn from a fixed seed:

* ``reply k @ n``: once the server has streamed ``n`` bytes of reply ``k`` (``n = 0``: the
  moment request ``k`` arrives, before any byte of the answer);
* ``bash``: while the bash tool's command runs, with a child that left its process group;
* ``start f``: the fraction ``f`` of the start-up (launch to the first request) after launch;
* ``loop f``: the fraction ``f`` of the tool loop (first request to exit) after the first
  request: the tools and the writes between steps. Both durations are measured first by a
  run killed at no point, which also proves the script runs to its end.

After each kill no process of the run is alive; the session file loads (at most a torn last
line is skipped); every message of the last request the server got is on disk (it was written
before it was sent); and resuming the session sends a request in which every tool call has
its result. Resumes go through the runtime against each provider API in turn, and every few
iterations through ``wolli -p -c`` itself.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support import wire_answers as W
from tests.support.cli import session_files, wolli
from tests.support.loopback import LoopbackServer, Reply
from tests.support.processes import alive
from tests.support.waiting import wait_until_sync
from tests.support.wire_answers import CHAT, Call
from wolli.session.context import INTERRUPTED_TEXT
from wolli.session.manager import SessionManager

pytestmark = [
    pytest.mark.crash,
    pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="finds the run's processes in /proc"),
]

SEED = 1414
ITERATIONS = 24
CLI_RESUME_EVERY = 8  # the other resumes go through the runtime in this process (faster)
PROMPT = "Take notes, check them, then summarise."
RESUME = "Go on where you stopped."
MARKER_VAR = "WOLLI_CRASH_RUN"  # inherited by every process the run starts


@dataclass
class KillPoint:
    kind: str  # "reply", "bash", "start", "loop", or "none" (the measuring run)
    reply: int = 0
    offset: int = 0
    fraction: float = 0.0
    seconds: float = 0.0  # the fraction as seconds of this machine's run

    def __str__(self) -> str:
        if self.kind == "reply":
            return f"reply {self.reply} @ {self.offset}"
        if self.kind in ("start", "loop"):
            return f"{self.kind} {self.fraction:.2f} ({self.seconds:.2f}s)"
        return self.kind


@dataclass
class Run:
    index: int
    kill: KillPoint
    home: Path
    project: Path
    server: LoopbackServer
    exit_code: int | None = None
    stderr: str = ""
    notes: list[str] = field(default_factory=list)


def script(kill: KillPoint) -> list[Reply]:
    """The tool loop. Replies stream in small pieces with pauses, so kills land mid-answer."""
    long_running = kill.kind == "bash"
    bash = ("setsid sleep 61 & echo $! > escaped.pid; sleep 60 & echo $! > child.pid; echo $$ > bash.pid; wait"
            if long_running else "echo $$ > bash.pid; echo checked")
    pace: dict[str, Any] = {"chunk_sizes": (64, 160), "pause": 0.002}
    return [
        W.answer(CHAT, "Writing notes.", [Call("write", {"path": "notes.txt", "content": "one\ntwo\n"}, "call_w")],
                 **pace),
        W.answer(CHAT, "", [Call("read", {"path": "notes.txt"}, "call_r")], **pace),
        W.answer(CHAT, "Checking twice.", [Call("read", {"path": "notes.txt"}, "call_r2"),
                                           Call("bash", {"command": bash}, "call_b")], **pace),
        W.answer(CHAT, "The notes hold two lines. " * 12, **pace),
    ]


def draw_kill_points(rng: random.Random, bodies: list[int]) -> list[KillPoint]:
    points: list[KillPoint] = []
    for index in range(ITERATIONS):
        roll = index % 10
        if roll < 5:
            reply = rng.randrange(len(bodies))
            offset = 0 if rng.random() < 0.25 else rng.randrange(bodies[reply])
            points.append(KillPoint("reply", reply=reply, offset=offset))
        elif roll < 7:
            points.append(KillPoint("bash"))
        else:
            points.append(KillPoint("start" if roll == 9 else "loop", fraction=rng.random()))
    return points


# ---------------------------------------------------------------------------- processes


def processes_of(marker: str, wolli_pid: int) -> list[int]:
    """Living processes of a run: marked by its environment, or its watchdog (named by pid)."""
    needle = f"{MARKER_VAR}={marker}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                marked = needle in fh.read()
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                argv = fh.read().rstrip(b"\0").split(b"\0")
        except OSError:
            continue
        watchdog = b"wolli-watchdog" in argv and argv[-1] == str(wolli_pid).encode()
        if (marked or watchdog) and alive(int(name)):
            found.append(int(name))
    return found


@dataclass
class Timing:
    start: float = 0.0  # launch to the first request
    loop: float = 0.0  # first request to exit


def kill_run(run: Run, whole: Timing | None = None) -> Timing:
    """Start ``wolli -p`` on the tool loop and SIGKILL it at ``run.kill``; returns its timing.

    ``whole``: the timing of a run killed at no point, for ``start`` and ``loop`` kill points."""
    marker = uuid.uuid4().hex
    env = {**os.environ, "WOLLI_HOME": str(run.home), MARKER_VAR: marker}
    fired = threading.Event()
    process: subprocess.Popen[bytes] | None = None

    def kill_now() -> None:
        if not fired.is_set() and process is not None:
            fired.set()
            process.kill()

    replies = script(run.kill)
    first_request = threading.Event()
    timing = Timing()

    def at_byte(reply: int, sent: int) -> None:
        if reply == 0 and sent == 0 and not first_request.is_set():
            timing.start = time.monotonic() - started
            first_request.set()
        if run.kill.kind == "reply" and reply == run.kill.reply and sent >= run.kill.offset:
            kill_now()

    for number, reply in enumerate(replies):
        reply.on_write = lambda sent, number=number: at_byte(number, sent)
    run.server.push(*replies)
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "wolli", "-p", "--model", W.model_ref(CHAT), PROMPT],
        cwd=run.project, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,  # its own group, like a job in a terminal
    )
    try:
        if run.kill.kind == "bash":
            wait_until_sync(lambda: (run.project / "bash.pid").exists() or process.poll() is not None,
                            timeout=60, what="the bash tool's command to start")
            kill_now()
        elif run.kill.kind in ("start", "loop"):
            assert whole is not None
            run.kill.seconds = run.kill.fraction * (whole.start if run.kill.kind == "start" else whole.loop)
            if run.kill.kind == "loop":
                wait_until_sync(lambda: first_request.is_set() or process.poll() is not None, timeout=60,
                                what="the first request")
            try:
                process.wait(timeout=run.kill.seconds)
            except subprocess.TimeoutExpired:
                kill_now()
        _, err = process.communicate(timeout=60)
        run.exit_code, run.stderr = process.returncode, err.decode(errors="replace")
        timing.loop = time.monotonic() - started - timing.start
        wait_until_sync(lambda: not processes_of(marker, process.pid), timeout=20,
                        what=f"every process of run {run.index} ({run.kill}) to end")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pid in processes_of(marker, process.pid):  # only after a failed check above
            try:
                os.kill(pid, 9)
            except OSError:
                pass
    return timing


# ---------------------------------------------------------------------------- checks


def disk_messages(manager: SessionManager) -> list[Any]:
    return [e.message for e in manager.get_branch() if e.type == "message"]


def check_saved(run: Run) -> SessionManager | None:
    """What the killed run left: loadable, and holding all the last request carried."""
    files = session_files(run.home)
    if not run.server.requests:
        assert len(files) <= 1  # killed before its first request: a file is optional
        if not files:
            run.notes.append("no file (killed before the first request)")
            return None
    assert len(files) == 1, files
    manager = SessionManager.open(files[0])
    torn = [e for e in manager.load_errors if "torn last line" in e]
    assert manager.load_errors == torn and len(torn) <= 1, manager.load_errors
    messages = disk_messages(manager)
    users = [m for m in messages if m.role == "user"]
    if not run.server.requests:
        run.notes.append(f"{len(messages)} messages on disk, killed before the request went out")
        return manager
    assert users and users[0].content == PROMPT, "the prompt must be on disk before its request is sent"
    sent = W.conversation(CHAT, run.server.requests[-1].json)
    saved_calls = {c.id for m in messages if m.role == "assistant" for c in m.tool_calls()}
    saved_results = {m.tool_call_id for m in messages if m.role == "toolResult"}
    for turn in sent:
        if turn.kind == "call":
            assert turn.id in saved_calls, f"call {turn.id} was sent but is not on disk"
        elif turn.kind == "result":
            assert turn.id in saved_results, f"result {turn.id} was sent but is not on disk"
    open_calls = saved_calls - saved_results
    run.notes.append(f"{len(messages)} messages on disk, {len(open_calls)} open tool call(s)")
    return manager


def check_request_is_valid(turns: list[Any]) -> None:
    """Every tool call is answered before the conversation goes on, and no result is stray."""
    open_calls: list[Any] = []
    for turn in turns:
        if turn.kind == "call":
            open_calls.append(turn)
        elif turn.kind == "result":
            match = [c for c in open_calls if (c.id == turn.id if turn.id else c.name == turn.name)]
            assert match, f"a tool result without its call: {turn}"
            open_calls.remove(match[0])
        else:
            assert not open_calls, f"tool calls without results before {turn.kind}: {open_calls}"
    assert not open_calls, f"tool calls without results at the end: {open_calls}"


async def resume_in_process(run: Run, api: str) -> None:
    from wolli.runtime.host.agent_host import AgentHost
    from wolli.runtime.live.options import SessionOptions

    host = AgentHost()
    model = host.model_registry.find(W.PROVIDERS[api], W.MODEL_IDS[api])
    assert model is not None
    try:
        session = await host.start(SessionOptions(cwd=str(run.project), continue_recent=True, model=model))
        await session.prompt(RESUME)
        await session.wait_for_idle()
    finally:
        await host.shutdown()


def resume(run: Run, before: SessionManager | None, monkeypatch: pytest.MonkeyPatch) -> None:
    api = W.APIS[run.index % len(W.APIS)]
    monkeypatch.setenv("WOLLI_HOME", str(run.home))
    run.server.discard_pending()  # the killed run's unused answers
    run.server.push(W.answer(api, "Resumed."))
    first = len(run.server.requests)
    if run.index % CLI_RESUME_EVERY == 0:
        result = wolli(["-p", "-c", "--model", W.model_ref(api), RESUME], run.project)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "Resumed.\n"
        run.notes.append(f"resumed with wolli -p -c on {api}")
    else:
        asyncio.run(resume_in_process(run, api))
        run.notes.append(f"resumed in process on {api}")
    assert len(run.server.requests) == first + 1
    turns = W.conversation(api, run.server.requests[first].json)
    check_request_is_valid(turns)
    users = [t.text for t in turns if t.kind == "user"]
    assert users[-1] == RESUME
    if before is not None and any(m.role == "user" for m in disk_messages(before)):
        assert users[0] == PROMPT  # the prompt of the killed run went out again
    files = session_files(run.home)
    assert len(files) == 1
    if before is not None:
        assert str(files[0]) == before.get_session_file()  # the same session, continued
    after = SessionManager.open(files[0])
    messages = disk_messages(after)
    assert messages[-1].role == "assistant" and messages[-1].content[0].text == "Resumed."
    calls = {c.id for m in messages if m.role == "assistant" for c in m.tool_calls()}
    assert calls <= {m.tool_call_id for m in messages if m.role == "toolResult"}


# ---------------------------------------------------------------------------- the test


def make_run(tmp_path: Path, index: int, point: KillPoint) -> Run:
    folder = tmp_path / f"run{index:02d}"
    (folder / "project").mkdir(parents=True)
    (folder / "home").mkdir()
    server = LoopbackServer(seed=SEED + index)
    W.write_models_json(folder / "home", server.url)
    return Run(index, point, folder / "home", folder / "project", server)


def check_and_resume(run: Run, monkeypatch: pytest.MonkeyPatch) -> bool:
    """The checks after one kill; True when loading added an "interrupted" tool result."""
    manager = check_saved(run)
    resume(run, manager, monkeypatch)
    if manager is None:
        return False
    return any(m.role == "toolResult" and m.content and m.content[0].text == INTERRUPTED_TEXT
               for m in disk_messages(SessionManager.open(manager.get_session_file())))


def test_kill_9_at_random_points_loses_nothing_complete_and_leaves_nothing_running(tmp_path, monkeypatch):
    # Compiled modules cached once for all runs (this sandbox sets PYTHONDONTWRITEBYTECODE, so
    # each run would compile wolli again), outside the working tree.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "pycache"))
    bodies = [len(reply.body) for reply in script(KillPoint("reply"))]
    points = draw_kill_points(random.Random(SEED), bodies)
    wholes = [make_run(tmp_path, 90 + n, KillPoint("none")) for n in range(2)]
    runs = [make_run(tmp_path, index, point) for index, point in enumerate(points)]
    outcomes: list[tuple[Run, bool]] = []
    started = time.monotonic()
    try:
        for whole in wholes:  # the first also fills the module cache; the second is timed
            timing = kill_run(whole)
            assert whole.exit_code == 0 and len(whole.server.requests) == 4, whole.stderr
        # Two killed runs at a time; this thread checks and resumes each as soon as it is over.
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = [pool.submit(kill_run, run, timing) for run in runs]
            for run, future in zip(runs, futures, strict=True):
                future.result()
                outcomes.append((run, check_and_resume(run, monkeypatch)))
    finally:
        for run in [*wholes, *runs]:
            run.server.close()
    print(f"\n{len(runs)} kills in {time.monotonic() - started:.1f}s; a whole run: start-up {timing.start:.2f}s, "
          f"tool loop {timing.loop:.2f}s")
    for run, interrupted in outcomes:
        killed = "killed" if run.exit_code == -9 else f"exit {run.exit_code}"
        print(f"run {run.index:2d} {str(run.kill):20s} {killed:8s} requests={len(run.server.requests) - 1} "
              f"{'; '.join(run.notes)}{'; interrupted result added' if interrupted else ''}")
    # The draw must reach the interesting states, or the test proves little.
    assert sum(run.exit_code == -9 for run, _ in outcomes) >= ITERATIONS * 2 // 3
    assert any(interrupted for _, interrupted in outcomes), "no kill left a tool call without its result"
    assert any(run.notes and run.notes[0].startswith("1 messages") for run, _ in outcomes), \
        "no kill hit the first answer while it streamed"
