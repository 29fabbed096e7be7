"""Checkpoint blobs no session names any more are removed; every blob a session needs stays."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from tests.support.waiting import wait_until_sync
from wolli.session.checkpoints.blobs import BlobStore
from wolli.session.checkpoints.sweep import GRACE_SECONDS, MARKER, sweep, sweep_in_background
from wolli.session.manager import SessionManager
from wolli.testing import ExtensionHarness, tool_call

OLD = time.time() - GRACE_SECONDS - 60


def _age(store: BlobStore, *shas: str) -> None:
    for sha in shas:
        os.utime(store.path_of(sha), (OLD, OLD))


def _session_naming(root: Path, cwd: Path, before: str | None, after: str | None) -> Path:
    """A saved session in ``root``'s folder for ``cwd`` whose checkpoint names two shas."""
    manager = SessionManager.create(str(cwd), session_dir=str(root))
    manager.append_message({"role": "user", "content": "go", "timestamp": 1})
    manager.append_checkpoint("tool", [{"path": str(cwd / "a.txt"), "before": before, "after": after}])
    return Path(manager.get_session_file() or "")


def _folder(root: Path, cwd: Path) -> Path:
    return _session_naming(root, cwd, None, None).parent


def test_sweep_keeps_named_and_young_blobs_and_removes_the_rest(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "sessions", tmp_path)
    store = BlobStore(folder / "blobs")
    kept_a, kept_b, orphan, young = (store.put(f"{n}\n".encode()) for n in ("a", "b", "orphan", "young"))
    journaled = store.put(b"named by a rewind in flight\n")
    first = _session_naming(tmp_path / "sessions", tmp_path, kept_a, None)
    _session_naming(tmp_path / "sessions", tmp_path, None, kept_b)
    assert first.parent == folder
    (store.root / "journal").mkdir()
    (store.root / "journal" / "r1.json").write_text(f'{{"state": "prepared", "changes": [{{"sha": "{journaled}"}}]}}')
    leftover = store.path_of(orphan).parent / ".blob-abc123"
    leftover.write_bytes(b"half a blob")
    os.utime(leftover, (OLD, OLD))
    _age(store, kept_a, kept_b, orphan, journaled)

    result = sweep(folder)

    assert result.removed == 2  # the orphan and the half-written leftover
    assert not store.has(orphan) and not leftover.exists()
    assert all(store.has(sha) for sha in (kept_a, kept_b, young, journaled))
    assert (store.root / MARKER).exists()

    # Deleting the session that named a blob frees it at the next sweep.
    first.unlink()
    assert sweep(folder).removed == 1 and not store.has(kept_a) and store.has(kept_b)


def test_a_due_sweep_waits_a_day_after_the_first_look(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    store = BlobStore(folder / "blobs")
    orphan = store.put(b"nobody\n")
    _age(store, orphan)
    assert sweep_in_background(folder, only_if_due=True) is None  # starts the clock
    assert sweep_in_background(folder, only_if_due=True) is None  # not a day yet
    os.utime(store.root / MARKER, (OLD - 86400, OLD - 86400))
    thread = sweep_in_background(folder, only_if_due=True)
    assert thread is not None
    thread.join(30)
    assert not store.has(orphan)


async def test_deleting_a_session_removes_the_blobs_only_it_needed(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "a.txt").write_text("one\n")
    async with ExtensionHarness([], cwd=project) as h:
        h.reply(tool_call("edit", {"path": "a.txt", "edits": [{"old_text": "one", "new_text": "two"}]}), "ok")
        await h.prompt("edit")
        doomed = Path(h.session.session_file or "")
        store = BlobStore(doomed.parent / "blobs")
        shas = {p.parent.name + p.name for p in store.root.glob("??/*")}
        assert shas, "the edit kept the file's content"
        _age(store, *shas)
        await h.host.new_session()
        h.host.delete_session(str(doomed))
        # The sweep runs in a thread of its own.
        wait_until_sync(lambda: not any(store.has(sha) for sha in shas), 30, "the sweep to free the blobs")


def test_wait_for_sweeps_returns_once_the_running_sweep_has_ended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wolli.session.checkpoints import sweep as sweep_module

    folder = tmp_path / "sessions"
    BlobStore(folder / "blobs").put(b"x\n")
    release = threading.Event()
    monkeypatch.setattr(sweep_module, "sweep", lambda f: release.wait(30))
    thread = sweep_in_background(folder, only_if_due=False)
    assert thread is not None
    assert sweep_module.wait_for_sweeps(0.05) is False  # still running: the wait gives up
    release.set()
    assert sweep_module.wait_for_sweeps(30) is True
    assert not thread.is_alive()
