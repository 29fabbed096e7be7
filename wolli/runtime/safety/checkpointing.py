"""Taking checkpoints while the agent works: one session's part of ``docs/checkpoints.md``.

Called around every tool call that will run (:mod:`..tool_hooks`):

- before an ``edit`` or ``write``: the file's content is kept (a blob) and a ``checkpoint``
  entry records it, the first time the file is touched since the user's last message (a
  rewind goes back to before a message, so the first content after it is the one needed);
- before a ``bash`` command in a git work tree: ``git status`` and the content of the files
  already changed; after it: ``git status`` again, and an entry for what it changed;
- after every such call: the file's hash as the tool left it; when the run ends they are
  recorded together (``settle``), so a later rewind can tell a file changed outside Wolli.

Everything that touches the disk runs in a worker thread, so the front end stays
responsive. Checkpoints are off with settings ``checkpoints.enabled: false``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...session.checkpoints.blobs import BlobStore
from ...session.checkpoints.git_capture import GitSnapshot, changes, snapshot, work_tree
from ...session.checkpoints.records import (
    FileState,
    HashCache,
    after_record,
    before_record,
    capture,
    current,
    real,
)

FILE_TOOLS = frozenset({"edit", "write"})


class TurnCheckpoints:
    # ``session`` is the AgentSession (not imported: it imports this module).
    def __init__(self, session: Any) -> None:
        self.session = session
        self.cache = HashCache()
        self._store: BlobStore | None = None
        self._turn: int | None = None  # id() of the user message the current changes follow
        self._seen: set[str] = set()  # files recorded since that message
        self._touched: dict[str, FileState] = {}  # files as the tools left them, this run
        self._git: dict[str, GitSnapshot] = {}  # by tool call id
        self._top: tuple[str, str | None] | None = None  # (cwd, work tree top)

    # ------------------------------------------------------------------ settings and places

    @property
    def enabled(self) -> bool:
        return self.session.settings.get("checkpoints.enabled") is not False

    @property
    def limit(self) -> int:
        value = self.session.settings.get("checkpoints.maxFileBytes")
        return value if isinstance(value, int) and value > 0 else 10_000_000

    @property
    def store(self) -> BlobStore:
        """Blobs beside the session file (a temporary folder for an unsaved session)."""
        path = self.session.session_file if self.session.session_manager.is_persisted() else None
        if self._store is None or (path and self._store.temporary):
            fresh = BlobStore.beside(path if path else None)
            if self._store is not None and self._store.temporary and not fresh.temporary:
                self._store.link_into(fresh, _all_blobs(self._store))
                self._store.discard()
            self._store = fresh
        return self._store

    def _work_tree(self) -> str | None:
        cwd = self.session.cwd
        if self._top is None or self._top[0] != cwd:
            self._top = (cwd, work_tree(cwd))
        return self._top[1]

    def _paths(self, arguments: dict[str, Any]) -> list[str]:
        from ...permissions.path_rules import absolute

        path = arguments.get("path")
        return [real(absolute(path, self.session.cwd))] if isinstance(path, str) and path.strip() else []

    def _sync_turn(self) -> None:
        """A new message of the user's since the last change: files count as untouched again."""
        turn = _last_user_message(self.session.messages)
        if turn != self._turn:
            self._turn, self._seen = turn, set()

    # ------------------------------------------------------------------ around a tool call

    async def before(self, tool_call_id: str, name: str, arguments: dict[str, Any]) -> None:
        if not self.enabled:
            return
        self._sync_turn()
        if name in FILE_TOOLS:
            fresh = [p for p in self._paths(arguments) if p not in self._seen]
            if not fresh:
                return
            store, limit = self.store, self.limit
            states = await asyncio.to_thread(lambda: [capture(store, p, limit) for p in fresh])
            self._seen.update(fresh)
            self._record("tool", [before_record(s) for s in states], tool_call_id=tool_call_id)
        elif name == "bash":
            top = await asyncio.to_thread(self._work_tree)
            if top is None:
                return
            store, limit = self.store, self.limit
            snap = await asyncio.to_thread(snapshot, store, self.session.cwd, limit, top)
            if snap is not None:
                self._git[tool_call_id] = snap

    async def after(self, tool_call_id: str, name: str, arguments: dict[str, Any]) -> None:
        if not self.enabled:
            return
        if name in FILE_TOOLS:
            paths = self._paths(arguments)
            states = await asyncio.to_thread(lambda: [current(p, self.cache) for p in paths])
            self._touched.update((s.path, s) for s in states)
            return
        snap = self._git.pop(tool_call_id, None)
        if name != "bash" or snap is None:
            return
        store, limit, cache = self.store, self.limit, self.cache
        changed = await asyncio.to_thread(changes, store, snap, limit, cache)
        if not changed:
            return
        nows = await asyncio.to_thread(lambda: [current(s.path, cache) for s in changed])
        self._sync_turn()
        records = []
        for before, now in zip(changed, nows, strict=True):
            self._touched[now.path] = now
            record = {**after_record(now), **before_record(before)} if before.path not in self._seen else \
                after_record(now)
            self._seen.add(before.path)
            records.append(record)
        fields: dict[str, Any] = {"tool_call_id": tool_call_id}
        self._record("bash", records, **fields)

    def settle(self) -> None:
        """The run ended: how it left every file it changed."""
        if not self._touched:
            return
        records = [after_record(state) for state in self._touched.values()]
        self._touched.clear()
        self._record("settle", records)

    def _record(self, kind: str, files: list[dict[str, Any]], **fields: Any) -> None:
        if not files:
            return
        try:
            self.session.session_manager.append_checkpoint(kind, files, **fields)
        except OSError as exc:
            self.session._stop_writing(exc)

    def forget_files(self, paths: list[str]) -> None:
        """These files were just restored: their next change is a first change again."""
        self._seen.difference_update(paths)

    def close(self) -> None:
        if self._store is not None:
            self._store.discard()


def share_blobs(origin: Any, forked: Any) -> None:
    """A fork stored in another folder (or not stored) gets the blobs its checkpoints name."""
    from ...session.checkpoints.plan import blobs_of

    source, target = origin.checkpoints.store, forked.checkpoints.store
    if source.root != target.root:
        source.link_into(target, blobs_of(forked.session_manager.get_entries()))


def _last_user_message(messages: list[Any]) -> int | None:
    for message in reversed(messages):
        if getattr(message, "role", None) == "user":
            return id(message)
    return None


def _all_blobs(store: BlobStore) -> set[str]:
    out: set[str] = set()
    try:
        for folder in store.root.iterdir():
            if len(folder.name) == 2 and folder.is_dir():
                out.update(folder.name + p.name for p in folder.iterdir() if len(p.name) == 62)
    except OSError:
        pass
    return out
