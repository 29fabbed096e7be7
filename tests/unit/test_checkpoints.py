"""Checkpoint parts on real files: blobs, records, the rewind plan, the journalled restore,
and the git capture of shell commands (a real repository)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from wolli.session.checkpoints.blobs import BlobError, BlobStore, sha256_of
from wolli.session.checkpoints.git_capture import changes, snapshot
from wolli.session.checkpoints.plan import conflicts, last_known, plan_rewind, rewind_points
from wolli.session.checkpoints.records import HashCache, capture, current
from wolli.session.checkpoints.restore import TEMP_PREFIX, Change, journal_dir, recover, restore
from wolli.session.entries import CheckpointEntry, MessageEntry, parse_entry


def test_blobs_are_content_addressed_private_and_checked(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    sha = store.put(b"hello")
    assert sha == sha256_of(b"hello") and store.put(b"hello") == sha and store.get(sha) == b"hello"
    path = store.path_of(sha)
    assert oct(path.stat().st_mode & 0o777) == "0o600" and oct(path.parent.stat().st_mode & 0o777) == "0o700"
    path.write_bytes(b"tampered")
    with pytest.raises(BlobError, match="damaged"):
        store.get(sha)
    with pytest.raises(BlobError, match="missing"):
        store.get("0" * 64)
    with pytest.raises(BlobError):
        store.path_of("../../etc/passwd")


def test_capture_keeps_content_mode_and_says_why_not(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    script = tmp_path / "run.sh"
    script.write_bytes(b"#!/bin/sh\n")
    script.chmod(0o755)
    state = capture(store, str(script), 100)
    assert store.get(state.sha) == b"#!/bin/sh\n" and state.mode == 0o755
    assert capture(store, str(tmp_path / "missing"), 100).sha is None
    (tmp_path / "big").write_bytes(b"x" * 101)
    big = capture(store, str(tmp_path / "big"), 100)
    assert big.sha is None and "maxFileBytes" in (big.skipped or "")
    link = tmp_path / "link"
    link.symlink_to(script)
    assert capture(store, str(link), 100).path == str(script.resolve())


def test_the_hash_cache_never_trusts_a_file_changed_just_now(tmp_path):
    cache = HashCache()
    target = tmp_path / "f"
    target.write_text("one")
    first = current(str(target), cache).sha
    target.write_text("two")  # same size, same clock tick very likely
    assert current(str(target), cache).sha != first


def _message(entry_id, parent, role="user", text="hi"):
    data = {"type": "message", "id": entry_id, "parentId": parent, "message": {"role": role, "content": text,
                                                                              "timestamp": 1}}
    if role == "assistant":
        data["message"] = {"role": "assistant", "content": [{"type": "text", "text": text}], "api": "x",
                           "provider": "x", "model": "x", "stopReason": "stop", "timestamp": 1,
                           "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                                     "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}}
    return parse_entry(data)


def _checkpoint(entry_id, parent, kind, files, **fields):
    return CheckpointEntry(id=entry_id, parent_id=parent, kind=kind, files=files, **fields)


def test_the_plan_restores_the_first_content_after_the_point():
    branch = [
        _message("u1", None, text="first"),
        _checkpoint("c1", "u1", "tool", [{"path": "/p/a", "before": "A0"}]),
        _checkpoint("s1", "c1", "settle", [{"path": "/p/a", "after": "A1"}]),
        _message("u2", "s1", text="second"),
        _checkpoint("c2", "u2", "tool", [{"path": "/p/a", "before": "A1"}, {"path": "/p/new", "before": None}]),
        _checkpoint("c3", "c2", "bash", [{"path": "/p/b", "before": "B0", "after": "B1"}]),
        _checkpoint("c4", "c3", "tool", [{"path": "/p/huge", "before": None, "skipped": "too large"}]),
        _checkpoint("s2", "c4", "settle", [{"path": "/p/a", "after": "A2"}, {"path": "/p/new", "after": "N"}]),
    ]
    points = rewind_points(branch)
    assert [p.entry_id for p in points] == ["u2", "u1"]
    assert set(points[0].files) == {"/p/a", "/p/new", "/p/b", "/p/huge"}
    second = plan_rewind(branch, points[0])
    assert second.restore == {"/p/a": ("A1", None), "/p/new": (None, None), "/p/b": ("B0", None)}
    assert second.lost == {"/p/huge": "too large"}
    first = plan_rewind(branch, points[1])
    assert first.restore["/p/a"] == ("A0", None)
    assert last_known(branch) == {"/p/a": "A2", "/p/new": "N", "/p/b": "B1", "/p/huge": "unknown"}
    on_disk = {"/p/a": "A2", "/p/new": "N", "/p/b": "B-hand-edited"}
    assert conflicts(branch, second, on_disk) == ["/p/b"]


def test_a_rewind_is_a_point_that_undoes_it():
    branch = [
        _message("u1", None),
        _checkpoint("c1", "u1", "tool", [{"path": "/p/a", "before": "A0"}]),
        _checkpoint("s1", "c1", "settle", [{"path": "/p/a", "after": "A1"}]),
        _checkpoint("r1", "s1", "rewind", [{"path": "/p/a", "before": "A1", "after": "A0"}], target_id="u1",
                    from_leaf_id="s1", scope="code"),
    ]
    undo = rewind_points(branch)[0]
    assert undo.kind == "rewind" and "undo" in undo.text and undo.leaf_after == "s1"
    assert plan_rewind(branch, undo).restore == {"/p/a": ("A1", None)}
    assert last_known(branch)["/p/a"] == "A0"


def test_a_restore_puts_every_file_in_place_and_keeps_modes(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    (tmp_path / "a").write_text("new a")
    (tmp_path / "gone").write_text("made by the agent")
    script = tmp_path / "tool.sh"
    script.write_text("new")
    script.chmod(0o755)
    changes_ = [Change(str(tmp_path / "a"), store.put(b"old a")), Change(str(tmp_path / "gone"), None),
                Change(str(tmp_path / "tool.sh"), store.put(b"old")),
                Change(str(tmp_path / "deleted" / "b"), store.put(b"old b"), 0o640)]
    committed = []
    result = restore(store, changes_, on_commit=lambda: committed.append(True))
    assert committed == [True] and not result.failed
    assert (tmp_path / "a").read_text() == "old a" and not (tmp_path / "gone").exists()
    assert script.read_text() == "old" and script.stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "deleted" / "b").read_text() == "old b"
    assert (tmp_path / "deleted" / "b").stat().st_mode & 0o777 == 0o640
    assert not list(journal_dir(store).glob("*.json"))
    assert not list(tmp_path.rglob(f"{TEMP_PREFIX}*"))


def test_a_missing_blob_stops_the_restore_before_anything_changes(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    (tmp_path / "a").write_text("now")
    with pytest.raises(BlobError):
        restore(store, [Change(str(tmp_path / "a"), store.put(b"then")), Change(str(tmp_path / "b"), "f" * 64)])
    assert (tmp_path / "a").read_text() == "now"
    assert not list(tmp_path.rglob(f"{TEMP_PREFIX}*")) and not list(journal_dir(store).glob("*.json"))


def test_recover_undoes_a_prepared_restore_and_finishes_a_committed_one(tmp_path):
    store = BlobStore(tmp_path / "blobs")
    target = tmp_path / "a"
    target.write_text("current")
    temp = tmp_path / f"{TEMP_PREFIX}x-0.tmp"
    temp.write_text("restored")
    journal = journal_dir(store)
    journal.mkdir(parents=True)
    (journal / "one.json").write_text(json.dumps({"state": "prepared", "changes": [{"path": str(target),
                                                                                    "temp": str(temp)}]}))
    assert "undone" in recover(store)[0]
    assert target.read_text() == "current" and not temp.exists()
    temp.write_text("restored")
    session = tmp_path / "s.jsonl"
    session.write_text('{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}\n')
    line = json.dumps({"type": "checkpoint", "id": "abcd1234", "parentId": None, "kind": "rewind", "files": []})
    (journal / "two.json").write_text(json.dumps({
        "state": "committed", "changes": [{"path": str(target), "temp": str(temp)}, {"path": str(tmp_path / "b"),
                                                                                    "temp": None}],
        "entry": {"sessionFile": str(session), "line": line, "id": "abcd1234"}}))
    (tmp_path / "b").write_text("to delete")
    assert "finished" in recover(store)[0]
    assert target.read_text() == "restored" and not (tmp_path / "b").exists()
    assert session.read_text().count("abcd1234") == 1
    assert recover(store) == []


GIT = shutil.which("git")


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)

    (root / "clean.txt").write_text("clean\n")
    (root / "dirty.txt").write_text("committed\n")
    (root / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (root / ".gitignore").write_text("ignored.txt\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "start")
    (root / "dirty.txt").write_text("changed by hand\n")
    (root / "untracked.txt").write_text("mine\n")
    (root / "ignored.txt").write_text("ignored\n")
    return root


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_what_a_command_changed_is_captured_from_git_status(repo, tmp_path):
    store = BlobStore(tmp_path / "blobs")
    before = snapshot(store, str(repo), 10_000_000)
    assert before is not None and set(before.kept) == {str(repo / "dirty.txt"), str(repo / "untracked.txt")}
    # what a shell command might do: change a clean file, throw away a hand edit, delete, create, ignore
    (repo / "clean.txt").write_text("changed by the command\n")
    subprocess.run(["git", "checkout", "--", "dirty.txt"], cwd=repo, check=True)
    (repo / "untracked.txt").unlink()
    (repo / "created.txt").write_text("new\n")
    (repo / "ignored.txt").write_text("changed\n")
    (repo / "crlf.txt").write_bytes(b"changed\r\n")
    found = {Path(s.path).name: s for s in changes(store, before, 10_000_000)}
    assert set(found) == {"clean.txt", "dirty.txt", "untracked.txt", "created.txt", "crlf.txt"}
    assert store.get(found["clean.txt"].sha) == b"clean\n"
    assert store.get(found["dirty.txt"].sha) == b"changed by hand\n"  # the hand edit survives in a blob
    assert store.get(found["untracked.txt"].sha) == b"mine\n"
    assert store.get(found["crlf.txt"].sha) == b"one\r\ntwo\r\n"
    assert found["created.txt"].sha is None


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_files_that_could_not_be_kept_are_recorded_only_when_they_changed(repo, tmp_path):
    # An untracked link to a folder, or a file past the size limit, was recorded after every
    # command although untouched, and each rewind then listed it as lost.
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "link").symlink_to(outside)
    (repo / "big.bin").write_bytes(b"x" * 200)
    store = BlobStore(tmp_path / "blobs")
    before = snapshot(store, str(repo), 100)
    assert before is not None and before.kept[str(repo / "big.bin")].skipped
    (repo / "clean.txt").write_text("changed by the command\n")
    assert {Path(s.path).name for s in changes(store, before, 100)} == {"clean.txt"}
    before = snapshot(store, str(repo), 100)
    (repo / "big.bin").write_bytes(b"y" * 300)
    found = {Path(s.path).name: s for s in changes(store, before, 100)}
    assert set(found) == {"big.bin"} and found["big.bin"].skipped


@pytest.mark.skipif(GIT is None, reason="needs git")
def test_the_repositorys_config_cannot_make_the_capture_run_a_program(repo, tmp_path):
    # A model allowed to edit files wrote core.fsmonitor into .git/config; Wolli's own
    # git status (around every shell command, unconfined, unasked) then ran it.
    # The same with a filter driver (run by status and by cat-file --filters).
    marker = tmp_path / "ran"
    with open(repo / ".git" / "config", "a") as config:
        config.write(f'[core]\n\tfsmonitor = "touch {marker}; false"\n'
                     f'[filter "x"]\n\tclean = "touch {marker}; cat"\n\tsmudge = "touch {marker}; cat"\n')
    (repo / ".gitattributes").write_text("*.txt filter=x\n")
    store = BlobStore(tmp_path / "blobs")
    before = snapshot(store, str(repo), 10_000_000)
    (repo / "clean.txt").write_text("changed by the command\n")
    found = {Path(s.path).name: s for s in changes(store, before, 10_000_000)}
    assert store.get(found["clean.txt"].sha) == b"clean\n"
    assert not marker.exists()


def test_outside_a_work_tree_nothing_is_captured(tmp_path):
    assert snapshot(BlobStore(tmp_path / "blobs"), str(tmp_path), 100) is None


def test_checkpoint_entries_load_and_older_wolli_skips_them(tmp_path):
    entry = _checkpoint("c1", "u1", "tool", [{"path": "/p/a", "before": None}], tool_call_id="call_1")
    again = parse_entry(json.loads(entry.to_json()))
    assert isinstance(again, CheckpointEntry) and again.files == [{"path": "/p/a", "before": None}]
    assert json.loads(entry.to_json())["toolCallId"] == "call_1"
    assert isinstance(_message("u", None), MessageEntry)


def test_a_tool_call_cut_short_by_a_crash_keeps_its_checkpoint(tmp_path):
    from wolli.session.checkpoints.restore import write_pending
    from wolli.session.manager import SessionManager

    manager = SessionManager.create(str(tmp_path), tmp_path / "sessions")
    manager.append_message({"role": "user", "content": "edit it", "timestamp": 1})
    manager.append_message({"role": "user", "content": "x" * 200_000, "timestamp": 2})  # a long last line
    store = BlobStore(Path(manager.get_session_file()).parent / "blobs")
    sha = store.put(b"before the crash")
    write_pending(store, manager.get_session_file(), [{"toolCallId": "call_1", "files": [
        {"path": str(tmp_path / "a.txt"), "before": sha}]}])
    reopened = SessionManager.open(manager.get_session_file())
    assert any("cut short by a crash" in e for e in reopened.load_errors)
    last = reopened.get_entries()[-1]
    assert last.type == "checkpoint" and last.tool_call_id == "call_1"
    assert last.parent_id == manager.get_leaf_id()  # it follows the conversation, not beside it
    assert len(reopened.build_session_context().messages) == 2
    points = rewind_points(reopened.get_branch())
    assert plan_rewind(reopened.get_branch(), points[0]).restore == {str(tmp_path / "a.txt"): (sha, None)}
    assert SessionManager.open(manager.get_session_file()).get_entries()[-1].id == last.id  # recorded once
