"""End to end in a real terminal: ``wolli attach`` (the full-screen app) under tmux joins a
session of ``wolli serve`` while another client's run streams, shows that run, and a prompt
typed in the app runs on the server, seen by the other client. A dialog of the session
opens in the app and closes there once the other client answered it first."""

from __future__ import annotations

import os
import shutil
import sys
import threading
from pathlib import Path

import pytest

from tests.support.openai_chat import text_answer
from tests.support.rpc import write_models
from tests.support.serve import ServeProcess, records_until, settled

from .tmux_terminal import TmuxTerminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (apt-get install tmux)")

ASKER = '''
def extension(wolli):
    async def ask(args, ctx):
        choice = await ctx.ui.select("Pick a colour", ["red", "green"])
        ctx.ui.notify(f"picked {choice}")
    wolli.register_command("ask", handler=ask, description="ask a question")
'''


def test_the_attached_app_shows_a_running_session_and_prompts_it(tmp_path: Path, wolli_home: Path, loopback):
    project = tmp_path / "project"
    project.mkdir()
    asker = tmp_path / "asker.py"
    asker.write_text(ASKER)
    write_models(wolli_home, loopback.url + "/v1")
    server = ServeProcess(project, project / "s.sock", "--model", "local/local-model", "-e", str(asker))
    term = None
    try:
        other = server.client()
        session_id = other.call({"type": "attach", "new": True})["sessionId"]
        # A run that is still streaming when the app attaches: its answer arrives slowly.
        release = threading.Event()
        slow = text_answer("first part, then the streamed rest of it")
        half = len(slow.body) // 2
        slow.on_write = lambda sent: release.wait(30) if sent > half else None
        loopback.push(slow)
        other.call({"type": "prompt", "message": "started elsewhere"})
        records_until(other, lambda r: r.get("type") == "message_start" and r["message"]["role"] == "assistant")
        term = TmuxTerminal([sys.executable, "-m", "wolli", "attach", "--socket", str(project / "s.sock"), session_id],
                            cwd=str(project), env={"WOLLI_HOME": os.environ["WOLLI_HOME"]})
        term.wait_for("Attached to session")
        assert "started elsewhere" in term.screen()
        release.set()
        term.wait_for("streamed rest of it")
        records_until(other, settled)

        loopback.push(text_answer("The typed answer."))
        term.type("typed in the app")
        term.send("Enter")
        seen = records_until(other, settled)
        assert any(r["type"] == "message_start" and "typed in the app" in str(r["message"]["content"]) for r in seen)
        term.wait_for("The typed answer.")
        assert "local/local-model" in term.screen()  # the footer names the server session's model

        other.send({"type": "prompt", "message": "/ask"})
        request = records_until(other, lambda r: r.get("type") == "extension_ui_request" and r.get("method") == "select")[-1]
        term.wait_for("Pick a colour")
        other.send({"type": "extension_ui_response", "id": request["id"], "value": "green"})
        term.wait_gone("Pick a colour")
        term.wait_for("picked green")

        term.type("/packages")  # run by the server, its report shown here
        term.send("Enter")
        term.wait_for("No packages are installed")
        term.send("C-d")
        assert term.exit_status() == 0
        assert server.client().call({"type": "get_live_sessions"})["sessions"][0]["sessionId"] == session_id
    finally:
        if term is not None:
            term.close()
        server.process.kill()
        server.process.wait(10)


def test_plain_wolli_joins_a_server_when_the_setting_says_so(tmp_path: Path, wolli_home: Path, loopback):
    """``server.attach``: ``wolli`` starts a server on demand and runs on it; ``wolli
    sessions`` lists the session with its client."""
    import json
    import signal
    import subprocess

    project = tmp_path / "project"
    project.mkdir()
    write_models(wolli_home, loopback.url + "/v1")
    (wolli_home / "settings.json").write_text(json.dumps(
        {"defaultProvider": "local", "defaultModel": "local-model", "server": {"attach": True, "idleTimeout": 60}}))
    env = {"WOLLI_HOME": os.environ["WOLLI_HOME"], "HOME": os.environ["HOME"]}
    agent_home = wolli_home / "agents" / "default"
    term = None
    try:
        term = TmuxTerminal([sys.executable, "-m", "wolli"], cwd=str(project), env=env)
        term.wait_for("Attached to session")
        loopback.push(text_answer("Answered on the server."))
        term.type("hello server")
        term.send("Enter")
        term.wait_for("Answered on the server.")
        listed = subprocess.run([sys.executable, "-m", "wolli", "sessions"], capture_output=True, text=True,
                                cwd=project, env={**os.environ, **env}, timeout=60)
        assert listed.returncode == 0, listed.stderr
        assert "1 client(s)" in listed.stdout and str(project) in listed.stdout
        term.send("C-d")
        assert term.exit_status() == 0
    finally:
        if term is not None:
            term.close()
        info = json.loads((agent_home / "server.json").read_text()) if (agent_home / "server.json").exists() else {}
        if info.get("pid"):
            os.kill(int(info["pid"]), signal.SIGKILL)


def test_the_attached_app_reconnects_after_the_server_was_killed(tmp_path: Path, wolli_home: Path, loopback):
    """``kill -9`` of the server: the app says so, reconnects to the restarted server, shows
    the session again from its file, and prompts reach it."""
    import signal

    project = tmp_path / "project"
    project.mkdir()
    write_models(wolli_home, loopback.url + "/v1")
    sock = project / "s.sock"
    server = ServeProcess(project, sock, "--model", "local/local-model")
    term = None
    try:
        first = server.client()
        session_id = first.call({"type": "attach", "new": True})["sessionId"]
        loopback.push(text_answer("Saved before the crash."))
        first.call({"type": "prompt", "message": "remember this"})
        records_until(first, settled)
        term = TmuxTerminal([sys.executable, "-m", "wolli", "attach", "--socket", str(sock), session_id],
                            cwd=str(project), env={"WOLLI_HOME": os.environ["WOLLI_HOME"]})
        term.wait_for("Saved before the crash.")
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait(10)
        term.wait_for("reconnecting")
        server = ServeProcess(project, sock, "--model", "local/local-model")
        term.wait_for("Reconnected.", timeout=40)
        assert "Saved before the crash." in term.screen()
        loopback.push(text_answer("Answered after the restart."))
        term.type("still there?")
        term.send("Enter")
        term.wait_for("Answered after the restart.")
        term.send("C-d")
        assert term.exit_status() == 0
    finally:
        if term is not None:
            term.close()
        server.process.kill()
        server.process.wait(10)


def test_wolli_attach_starts_a_server_when_none_runs_and_no_start_refuses(tmp_path: Path, wolli_home: Path,
                                                                           loopback):
    """The app's attach goes out first; with no server on the socket it is started on demand
    (and ``--no-start`` says there is none instead)."""
    import json
    import signal
    import subprocess

    project = tmp_path / "project"
    project.mkdir()
    write_models(wolli_home, loopback.url + "/v1")
    (wolli_home / "settings.json").write_text(json.dumps({"defaultProvider": "local", "defaultModel": "local-model"}))
    env = {"WOLLI_HOME": os.environ["WOLLI_HOME"], "HOME": os.environ["HOME"]}
    sock = project / "s.sock"
    term = None
    try:
        # --tui takes the full-screen path without a terminal; it ends before drawing anything
        # (a tmux pane can lose the output of a process that exits at once)
        refused = subprocess.run([sys.executable, "-m", "wolli", "attach", "--tui", "--no-start", "--socket", str(sock)],
                                 cwd=project, env={**os.environ, **env}, capture_output=True, text=True, timeout=60)
        assert refused.returncode == 1 and "no server answers" in refused.stderr, refused.stderr
        assert not sock.exists()
        term = TmuxTerminal([sys.executable, "-m", "wolli", "attach", "--socket", str(sock)], cwd=str(project), env=env)
        term.wait_for("Attached to session")
        loopback.push(text_answer("Answered by the server it started."))
        term.type("hello")
        term.send("Enter")
        term.wait_for("Answered by the server it started.")
        term.send("C-d")
        assert term.exit_status() == 0
    finally:
        if term is not None:
            term.close()
        info_file = wolli_home / "agents" / "default" / "server.json"
        info = json.loads(info_file.read_text()) if info_file.exists() else {}
        if info.get("pid"):
            os.kill(int(info["pid"]), signal.SIGKILL)
