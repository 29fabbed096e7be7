"""Checkpoints on a real session (real files, a real git repository, real processes):
edits, writes and shell commands are taken back by a rewind, in forks too, and a rewind
killed midway leaves every file either as it was or as restored."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wolli.session.manager import SessionManager
from wolli.testing import ExtensionHarness, tool_call

GIT = shutil.which("git")


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "app.py").write_text("print('v1')\n")
    (root / "README.md").write_text("readme\n")
    if GIT:
        _git(root, "init", "-q")
        _git(root, "add", ".")
        _git(root, "commit", "-qm", "start")
    return root


async def test_edits_writes_and_bash_in_a_git_repo_are_rewound_together(repo):
    if GIT is None:
        pytest.skip("needs git")
    (repo / "README.md").write_text("my own edit, not committed\n")
    async with ExtensionHarness([], cwd=repo) as h:
        h.reply(
            tool_call("edit", {"path": "app.py", "edits": [{"old_text": "v1", "new_text": "v2"}]}),
            tool_call("write", {"path": "new.py", "content": "made\n"}),
            tool_call("bash", {"command": "rm README.md && echo gen > gen.txt && chmod +x app.py"}),
            tool_call("edit", {"path": "app.py", "edits": [{"old_text": "v2", "new_text": "v3"}]}),
            "done",
        )
        await h.prompt("change things")
        assert (repo / "app.py").read_text() == "print('v3')\n" and not (repo / "README.md").exists()
        entries = [e for e in h.entries if e.type == "checkpoint"]
        assert [e.kind for e in entries] == ["tool", "tool", "bash", "settle"]
        result = await h.session.rewind(scope="code")
        assert result.skipped == [] and result.lost == {}
        assert (repo / "app.py").read_text() == "print('v1')\n"
        assert not os.access(repo / "app.py", os.X_OK)
        assert (repo / "README.md").read_text() == "my own edit, not committed\n"  # from the blob, not git
        assert not (repo / "new.py").exists() and not (repo / "gen.txt").exists()
        assert len(h.messages) > 2  # code only: the conversation stays


async def test_a_file_changed_outside_wolli_is_not_overwritten_without_asking(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    async with ExtensionHarness([], cwd=tmp_path) as h:
        h.reply(tool_call("edit", {"path": "a.txt", "edits": [{"old_text": "one", "new_text": "two"}]}), "ok")
        await h.prompt("edit")
        (tmp_path / "a.txt").write_text("my edit\n")
        asked: list[list[str]] = []

        async def ask(paths):
            asked.append(paths)
            return "skip"

        result = await h.session.rewind(scope="code", on_conflict="ask", ask=ask)
        assert asked == [[str((tmp_path / "a.txt").resolve())]] and result.skipped == asked[0]
        assert (tmp_path / "a.txt").read_text() == "my edit\n"
        result = await h.ctx.session.rewind(scope="code", on_conflict="overwrite")
        assert (tmp_path / "a.txt").read_text() == "one\n"


async def test_a_fork_keeps_its_checkpoints_and_can_rewind_them(tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    async with ExtensionHarness([], cwd=project) as h:
        h.reply(tool_call("edit", {"path": "a.txt", "edits": [{"old_text": "one", "new_text": "two"}]}), "ok",
                tool_call("edit", {"path": "a.txt", "edits": [{"old_text": "two", "new_text": "three"}]}), "ok")
        await h.prompt("first")
        await h.prompt("second")
        origin = h.session
        second = next(p for p in h.ctx.session.rewind_points() if p.text == "second")
        forked = await h.host.fork_session(second.leaf_after, source=origin)  # just before it, as /fork
        assert forked is not origin and forked.session_file != origin.session_file
        assert [p.text for p in h.ctx.session.rewind_points()] == ["first"]  # the branch up to "second"
        result = await forked.rewind(scope="code", on_conflict="overwrite")
        assert (project / "a.txt").read_text() == "one\n" and result.restored


async def test_a_session_stored_elsewhere_forks_with_its_blobs(tmp_path, wolli_home):
    project = tmp_path / "p"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    elsewhere = tmp_path / "elsewhere" / "session.jsonl"
    elsewhere.parent.mkdir()
    async with ExtensionHarness([], cwd=project) as h:
        opened = await h.host.open_session(str(elsewhere))
        h.host.set_active(opened)
        h.reply(tool_call("edit", {"path": "a.txt", "edits": [{"old_text": "one", "new_text": "two"}]}), "ok")
        await opened.prompt("edit")
        await opened.wait_for_idle()
        assert (elsewhere.parent / "blobs").is_dir()
        forked = await h.host.fork_session(None, source=opened)
        assert Path(forked.session_file).parent != elsewhere.parent
        await forked.rewind(scope="code", on_conflict="overwrite")
        assert (project / "a.txt").read_text() == "one\n"


async def test_checkpoints_can_be_switched_off(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    async with ExtensionHarness([], cwd=tmp_path, settings={"checkpoints": {"enabled": False}}) as h:
        h.reply(tool_call("edit", {"path": "a.txt", "edits": [{"old_text": "one", "new_text": "two"}]}), "ok")
        await h.prompt("edit")
        assert not [e for e in h.entries if e.type == "checkpoint"]


CHILD = r"""
import json, sys
from pathlib import Path
from wolli.session.checkpoints.blobs import BlobStore
from wolli.session.checkpoints.restore import Change, restore
from wolli.session.manager import SessionManager

session_file, folder, count = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
manager = SessionManager.open(session_file)
store = BlobStore(Path(session_file).parent / "blobs")
changes = [Change(str(folder / f"f{i:03d}.txt"), store.put(f"old {i}\n".encode() * 2000)) for i in range(count)]
entry = manager.prepare_checkpoint("rewind", [{"path": c.path, "before": None, "after": c.sha} for c in changes])
print("ready", flush=True)
restore(store, changes, on_commit=lambda: manager.append_prepared(entry),
        entry={"sessionFile": session_file, "line": entry.to_json(), "id": entry.id})
print("done", flush=True)
"""


def _run_child(script: Path, session_file: Path, folder: Path, count: int) -> subprocess.Popen[str]:
    for i in range(count):
        (folder / f"f{i:03d}.txt").write_text(f"new {i}\n")
    child = subprocess.Popen([sys.executable, str(script), str(session_file), str(folder), str(count)],
                             stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    return child


@pytest.mark.crash
def test_a_rewind_killed_midway_leaves_all_files_old_or_all_new(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    session_file = sessions / "s.jsonl"
    session_file.write_text('{"type":"session","version":3,"id":"sid","timestamp":"t","cwd":"/"}\n')
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    count = 120
    started = time.monotonic()  # how long a whole restore takes here, to kill at every point of it
    calibration = _run_child(script, session_file, folder, count)
    assert calibration.stdout is not None and calibration.stdout.readline().strip() == "done"
    calibration.wait()
    whole = time.monotonic() - started
    expected_rewinds = 1
    outcomes: set[bool] = set()
    mixed_before_recovery = False
    attempts = 30
    for attempt in range(attempts):
        child = _run_child(script, session_file, folder, count)
        time.sleep(whole * (attempt + 0.5) / attempts)
        child.send_signal(signal.SIGKILL)
        child.wait()
        states = {(folder / f"f{i:03d}.txt").read_text().startswith("old") for i in range(count)}
        mixed_before_recovery = mixed_before_recovery or len(states) == 2
        manager = SessionManager.open(str(session_file))  # opening the session finishes or undoes it
        after = {(folder / f"f{i:03d}.txt").read_text().startswith("old") for i in range(count)}
        assert len(after) == 1, f"attempt {attempt}: some files old, some new after recovery"
        restored = after == {True}
        outcomes.add(restored)
        expected_rewinds += 1 if restored else 0
        rewinds = [e for e in manager.get_entries() if e.type == "checkpoint" and e.kind == "rewind"]
        assert len(rewinds) == expected_rewinds, "a finished restore is recorded once, an undone one never"
        assert not list(folder.glob(".wolli-restore-*"))
        assert not list((sessions / "blobs" / "journal").glob("*.json"))
    assert outcomes == {True, False}, "the kills never landed both before and after the commit"
    print(f"restore of {count} files: {whole * 1000:.0f} ms; a kill left files mixed before recovery: "
          f"{mixed_before_recovery}")
